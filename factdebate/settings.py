"""Every setting of a method, read from its Context class: light imports, groups, did-you-mean.

The command line checks names and values here before it loads the heavy stack (LangGraph,
torch, llama.cpp, RAGAS), so a typo is refused in well under a second.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import MISSING, Field, dataclass, fields
from typing import Any, Literal, get_args, get_origin, get_type_hints

from factdebate.graphs.registry import METHODS
from factdebate.graphs.registry import context_class as catalog_context
from factdebate.nodes.context import Context
from factdebate.tools.core.errors import SettingsError

GROUPS = (
    "models and roles",
    "rounds and stopping",
    "retrieval",
    "scoring",
    "budgets",
    "output",
    "inputs and runtime",
)
"""The groups ``factdebate settings`` prints, in order."""

_GROUP_OF: dict[str, str] = {
    # exact names first; then the name rules in ``group_of``
    "temperature": "models and roles",
    "sampling_seed": "models and roles",
    "top_p": "models and roles",
    "relevance_temperature": "scoring",
    "roles": "models and roles",
    "n_evaluators": "models and roles",
    "role_play": "models and roles",
    "voters": "models and roles",
    "k": "models and roles",
    "voting": "models and roles",
    "tool_a": "models and roles",
    "tool_b": "models and roles",
    "debate": "rounds and stopping",
    "debate_rule": "rounds and stopping",
    "stability_score": "rounds and stopping",
    "judge_each_round": "rounds and stopping",
    "round_input": "rounds and stopping",
    "review": "rounds and stopping",
    "confidence_threshold": "rounds and stopping",
    "max_steps": "rounds and stopping",
    "max_turns": "rounds and stopping",
    "screen_share": "rounds and stopping",
    "screen_all": "rounds and stopping",
    "screen_k": "rounds and stopping",
    "screen_temperature": "rounds and stopping",
    "faithfulness_threshold": "scoring",
    "relevance_threshold": "scoring",
    "gate_profile": "scoring",
    "relevance_encoder": "scoring",
    "gamma": "scoring",
    "labels": "output",
    "current_date": "inputs and runtime",
    "seed": "inputs and runtime",
    "merge_method": "scoring",
    "merge_threshold": "scoring",
    "tool": "retrieval",
    "evidence_tool": "retrieval",
    "query_formulation": "retrieval",
    "query_attempts": "retrieval",
    "search_steps": "retrieval",
    "max_documents": "retrieval",
    "max_claims": "scoring",
    "clerk_part_chars": "scoring",
    "usd_per_million_input": "budgets",
    "usd_per_million_output": "budgets",
    "rpm": "inputs and runtime",
    "tpm": "inputs and runtime",
    "tpm_counts": "inputs and runtime",
    "max_in_flight": "inputs and runtime",
    "call_deadline_s": "inputs and runtime",
    "hang_cut_min_s": "inputs and runtime",
    "hang_cut_factor": "inputs and runtime",
}
_NAME_RULES: tuple[tuple[tuple[str, ...], str], ...] = (
    # (parts of a name, group), first match wins
    (("max_output_tokens",), "output"),
    (("retries", "timeout", "concurrency", "_chars"), "inputs and runtime"),
    (("embed", "rerank", "encoder"), "retrieval"),
    (("model",), "models and roles"),
    (("max_llm_calls", "max_total_tokens", "max_usd"), "budgets"),
    (("round", "stop"), "rounds and stopping"),
    (("relevance", "faithful", "scor", "nei_"), "scoring"),
    (("retriev", "rag", "search", "top_k", "collection", "milvus", "evidence_"), "retrieval"),
)


def group_of(name: str) -> str | None:
    """The group of the setting ``name`` (None when no rule places it: a test catches that)."""
    if name in _GROUP_OF:
        return _GROUP_OF[name]
    for parts, group in _NAME_RULES:
        if any(part in name for part in parts):
            return group
    return None


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``' Did you mean X?'`` (or ``X or Y``) for the closest of ``choices``; empty if none is."""
    close = difflib.get_close_matches(word, list(choices), n=3, cutoff=0.6)
    if not close:
        return ""
    *first, last = close
    return f" Did you mean {', '.join(first)} or {last}?" if first else f" Did you mean {last}?"


def check_method(method: str, kind: Literal["any", "verify"] = "any") -> None:
    """Refuse an unknown method name (ValueError, with the closest names)."""
    names = [n for n, s in METHODS.items() if kind == "any" or s.input_kind != "answer"]
    if method in names:
        return
    if method in METHODS:  # MAD-Fact scores a long answer, not one claim
        raise SettingsError(f"{method} checks a long answer: use `factdebate score-answer`")
    hint = did_you_mean(method, names) or f" Choose one of: {', '.join(names)}."
    raise SettingsError(f"unknown method {method!r}.{hint} (`factdebate methods` describes each)")


MAX_CONCURRENCY = 64
"""Items in flight at once in one bench run (``factdebate.api.MAX_CONCURRENCY``; a test checks)."""
MAX_REPEATS = 50
"""Most repeats of one sample in one bench run (``bench --repeats``)."""


def check_count(option: str, value: int, lo: int, hi: int | None = None) -> None:
    """Refuse a count option outside ``lo..hi`` (ValueError naming the option)."""
    if value < lo or (hi is not None and value > hi):
        bounds = f"within {lo}..{hi}" if hi is not None else f"at least {lo}"
        raise SettingsError(f"{option} must be {bounds}, got {value}")


def check_dataset(dataset: str, names: Sequence[str]) -> None:
    """Refuse an unknown dataset name (ValueError, with the closest names)."""
    if dataset in names:
        return
    hint = did_you_mean(dataset, names) or f" Choose one of: {', '.join(names)}."
    raise SettingsError(f"unknown dataset {dataset!r}.{hint}")


def context_class(method: str) -> type[Context]:
    """The settings class of ``method``, without importing its graph (LangGraph, models)."""
    check_method(method)
    cls: type[Context] = catalog_context(method)
    return cls


@dataclass(frozen=True)
class SettingInfo:
    """One setting as ``factdebate settings`` shows it."""

    name: str
    group: str
    type: str
    default: Any
    range: str
    description: str

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-ready fields."""
        return {
            "name": self.name,
            "group": self.group,
            "type": self.type,
            "default": self.default,
            "range": self.range,
            "description": self.description,
        }


def _type_name(hint: Any) -> str:
    if get_origin(hint) is Literal:
        return " | ".join(str(a) for a in get_args(hint))
    if get_origin(hint) is list:
        return "list of strings (comma-separated)"
    return getattr(hint, "__name__", str(hint))


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _default(f: Field[Any]) -> Any:
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:
        return f.default_factory()
    return None


def defaults(cls: type[Context]) -> dict[str, Any]:
    """Every setting of ``cls`` with its default value."""
    return {f.name: _default(f) for f in fields(cls)}


def describe(cls: type[Context]) -> list[SettingInfo]:
    """Every field of ``cls`` with its group, type, default, range and description."""
    hints = get_type_hints(cls)
    infos = []
    for f in fields(cls):
        lo, hi = f.metadata.get("lo"), f.metadata.get("hi")
        text = str(f.metadata.get("description", ""))
        bounds = ""
        if lo is not None and hi is not None:
            text = text.removesuffix(f" Range {lo:g}..{hi:g}.")  # shown in its own column
            bounds = f"{_number(lo)}..{_number(hi)}"
        infos.append(
            SettingInfo(
                name=f.name,
                group=group_of(f.name) or "inputs and runtime",
                type=_type_name(hints[f.name]),
                default=_default(f),
                range=bounds,
                description=text,
            )
        )
    return infos


def render(method: str, infos: Sequence[SettingInfo], width: int = 100) -> str:
    """The settings as text: one block per group, each setting on one line plus its meaning."""
    import textwrap

    lines = [
        f"Settings of {method} ({context_class(method).__name__}); give any with "
        "--set NAME=VALUE (lists: comma-separated).",
        "model, debater_model, judge_model and scorer_model left at their defaults read "
        "FACTDEBATE_MODEL, FACTDEBATE_DEBATER_MODEL, ... from the environment.",
    ]
    for group in GROUPS:
        members = [i for i in infos if i.group == group]
        if not members:
            continue
        lines += ["", group.capitalize()]
        for info in members:
            shown = f"{info.default!r}" if isinstance(info.default, str) else str(info.default)
            head = f"  {info.name}  {info.type}, default {shown}"
            if info.range:
                head += f", range {info.range}"
            lines.append(head)
            lines += textwrap.wrap(
                info.description, width, initial_indent="      ", subsequent_indent="      "
            )
    return "\n".join(lines)


def budget_names() -> list[str]:
    """Names of the shared budget settings (for help texts)."""
    return [f.name for f in fields(Context) if group_of(f.name) == "budgets"]


_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


def _typed(key: str, raw: str, hint: Any) -> Any:
    """``raw`` converted to the setting's type (bounds are checked by the Context class)."""
    if hint is bool:
        if raw.lower() not in _TRUE | _FALSE:
            raise SettingsError(f"--set {key} expects true or false, got {raw!r}")
        return raw.lower() in _TRUE
    if hint is int or hint is float:
        word = "an integer" if hint is int else "a number"
        try:
            if not raw.isascii() or "_" in raw:  # int() and float() also take "١٢" and "1_0"
                raise ValueError(raw)
            return hint(raw)
        except ValueError:
            raise SettingsError(f"--set {key} expects {word}, got {raw!r:.80}") from None
    if get_origin(hint) is list:
        return [part.strip() for part in raw.split(",") if part.strip()]
    return raw


def parse_settings(
    pairs: Sequence[str], context_cls: type[Any], method: str | None = None
) -> dict[str, Any]:
    """Turn ``KEY=VALUE`` strings into typed settings of ``context_cls``.

    An unknown key names the closest settings; ``method`` points to ``factdebate settings``.
    """
    hints = get_type_hints(context_cls)
    known = [f.name for f in fields(context_cls)]
    settings: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise SettingsError(f"bad --set {pair!r:.80}: expected KEY=VALUE")
        if key not in known:
            where = f" for {method}" if method else ""
            listing = (
                f" (`factdebate settings {method}` lists all)"
                if method
                else f" Known: {', '.join(sorted(known))}."
            )
            raise SettingsError(
                f"unknown setting {key!r:.80}{where}.{did_you_mean(key, known)}{listing}"
            )
        settings[key] = _typed(key, raw, hints[key])
    return settings


def check_settings(
    context_cls: type[Any], settings: dict[str, Any], flags: dict[str, str] | None = None
) -> Any:
    """Build ``context_cls(**settings)``; a bad value set by a flag names that flag.

    ``flags`` maps setting names to the option the user typed (``max_rounds`` -> ``--rounds``).
    """
    for name, flag in (flags or {}).items():
        if name not in settings:
            continue
        try:
            context_cls(**{name: settings[name]})
        except ValueError as exc:
            message = str(exc)
            for prefix in (f"setting {name} ", f"{name} "):
                if message.startswith(prefix):
                    raise SettingsError(f"{flag} {message.removeprefix(prefix)}") from None
            raise SettingsError(f"{flag}: {message}") from None
    return context_cls(**settings)
