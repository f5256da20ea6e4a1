"""Model prices (USD per million tokens) and what a run's tokens cost, role by role."""

from __future__ import annotations

import json
import math
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factdebate.datasets import ANSWER_TASK
from factdebate.tools.core.errors import SettingsError
from factdebate.tools.core.files import read_bounded
from factdebate.tools.core.home import home_dir

PRICES_ENV = "FACTDEBATE_PRICES"
"""A prices file to read instead of ``prices.toml`` in the factdebate home folder."""
PRICES_FILE = "prices.toml"
MAX_PRICES_BYTES = 64 * 1024  # largest prices file read
MAX_PRICE = 10_000.0  # USD per million tokens: anything above is a typo
MAX_PRICED_MODELS = 500
MILLION = 1_000_000


@dataclass(frozen=True)
class Price:
    """USD per million input and output tokens of one model, with when and where it was read."""

    input: float
    output: float
    as_of: str = ""
    source: str = ""

    def usd(self, input_tokens: float, output_tokens: float) -> float:
        """What these many tokens cost."""
        return (input_tokens * self.input + output_tokens * self.output) / MILLION


_OPENAI = "https://platform.openai.com/docs/pricing"
DEFAULT_PRICES: dict[str, Price] = {
    "openai:gpt-4o-mini": Price(
        0.15, 0.60, "2026-06-20", f"{_OPENAI} (via ai.cloudprice.net, ingested 2026-06-20)"
    ),
    "openai:gpt-4o": Price(
        2.50, 10.00, "2026-06", f"{_OPENAI} (via aimodelcalc.pages.dev, updated June 2026)"
    ),
    "openai:gpt-4.1": Price(2.00, 8.00, "2026-04", f"{_OPENAI} (via aumiqx.com, as of April 2026)"),
    "openai:gpt-4.1-mini": Price(
        0.40, 1.60, "2026-04", f"{_OPENAI} (via aumiqx.com, as of April 2026)"
    ),
    "openai:gpt-5-mini": Price(0.25, 2.00, "2026-03", f"{_OPENAI} (via deploybase.ai, March 2026)"),
    "anthropic:claude-haiku-4-5": Price(
        1.00,
        5.00,
        "2026-05-30",
        "https://platform.claude.com/docs/en/about-claude/pricing (via benchr.org, "
        "verified 30 May 2026)",
    ),
    "anthropic:claude-sonnet-4-5": Price(
        3.00,
        15.00,
        "2025-11-25",
        "https://platform.claude.com/docs/en/about-claude/pricing (via docs.rs/cogito-claude, "
        "as of 25 November 2025)",
    ),
}
"""Standard-tier list prices of common hosted models (no batch, no cached-input discount).

Prices change: set your own in the prices file or with ``--price``."""
FREE = Price(0.0, 0.0, "", "runs on your own machine")
FREE_PREFIXES = ("local", "hf:", "hf-local:", "ollama:")
"""Model strings that run on the user's machine: they cost no USD per token."""
_SUFFIX = re.compile(r"(-\d{8}|-latest)$")  # a dated snapshot or an alias of a priced model


def _checked(model: str, values: Any, where: str) -> Price:
    """A price from ``[input, output]`` or ``{"input": .., "output": ..}``, or a SettingsError."""
    if isinstance(values, Mapping):
        if set(values) - {"input", "output"}:
            raise SettingsError(f"{where}: {model}: only 'input' and 'output' may be given")
        values = [values.get("input"), values.get("output")]
    if not isinstance(values, list | tuple) or len(values) != 2:
        raise SettingsError(f"{where}: {model}: give the input and the output price")
    numbers = []
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise SettingsError(f"{where}: {model}: prices must be numbers, got {value!r:.40}")
        if not math.isfinite(value) or not 0 <= value <= MAX_PRICE:
            raise SettingsError(
                f"{where}: {model}: a price must be within 0..{MAX_PRICE:g} USD per million "
                f"tokens, got {value!r}"
            )
        numbers.append(float(value))
    if not model.strip() or len(model) > 1000:
        raise SettingsError(f"{where}: a model name must be 1 to 1000 characters")
    return Price(numbers[0], numbers[1], "", where)


def parse_price(text: str) -> tuple[str, Price]:
    """``MODEL=IN,OUT`` (USD per million input and output tokens) as a model and its price."""
    model, sep, numbers = text.rpartition("=")
    parts = numbers.split(",")
    if not sep or len(parts) != 2:
        raise SettingsError(f"--price {text!r:.80}: write MODEL=IN,OUT (USD per million tokens)")
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise SettingsError(f"--price {text!r:.80}: IN and OUT must be numbers") from None
    return model.strip(), _checked(model.strip(), values, "--price")


def prices_file() -> Path:
    """The prices file read: ``$FACTDEBATE_PRICES``, else ``prices.toml`` in the home folder."""
    given = os.environ.get(PRICES_ENV)
    return Path(given) if given else home_dir() / PRICES_FILE


def read_prices_file(path: Path) -> dict[str, Price]:
    """Prices from a TOML (or ``.json``) file: ``"MODEL" = {input = 0.15, output = 0.6}``."""
    text = read_bounded(path, MAX_PRICES_BYTES, "prices file")
    try:
        parsed = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except ValueError as exc:
        raise SettingsError(f"prices file {path}: {str(exc).splitlines()[0]}") from None
    if not isinstance(parsed, dict) or len(parsed) > MAX_PRICED_MODELS:
        raise SettingsError(f"prices file {path}: a table of at most {MAX_PRICED_MODELS} models")
    return {str(m): _checked(str(m), v, f"prices file {path}") for m, v in parsed.items()}


_GIVEN: dict[str, Price] = {}
"""Prices given on this process's command line (``--price``): every report it writes uses them."""


def add_prices(given: Sequence[str]) -> None:
    """Check ``MODEL=IN,OUT`` values and keep them for every later ``load_prices`` here."""
    _GIVEN.update(parse_price(text) for text in given)


def load_prices(given: Sequence[str] = ()) -> dict[str, Price]:
    """The defaults, then the prices file (if there is one), then ``--price`` values."""
    prices = dict(DEFAULT_PRICES)
    path = prices_file()
    if os.environ.get(PRICES_ENV) or path.is_file():
        prices.update(read_prices_file(path))
    prices.update(_GIVEN)
    prices.update(parse_price(text) for text in given)
    return prices


def price_of(model: str, prices: Mapping[str, Price]) -> Price | None:
    """The price of a model string (a dated snapshot takes its alias's price); None: unpriced."""
    model = model.strip()
    if model in prices:
        return prices[model]
    if _SUFFIX.search(model) and (base := _SUFFIX.sub("", model)) in prices:
        return prices[base]
    if model.split(":", 1)[0] + (":" if ":" in model else "") in FREE_PREFIXES:
        return FREE
    return None


ROLE_FIELD = {
    "debater": "debater_model",
    "agent": "debater_model",
    "judge": "judge_model",
    "moderator": "judge_model",
    "aggregator": "judge_model",
    "merger": "judge_model",
    "scorer": "scorer_model",
}
"""The context field whose model a cost role's calls go to (others: ``model``)."""
LIST_FIELD = {"debater": "juror_models", "expert": "expert_models"}
"""A list of models that, when set, replaces a role's one model (MAD-Fact's jurors, experts)."""


def _setting(context: Mapping[str, Any], name: str) -> str:
    """A model setting as the run resolved it: given, else ``FACTDEBATE_<NAME>``, else empty."""
    value = context.get(name)
    if isinstance(value, str) and value:
        return value
    return os.environ.get(f"FACTDEBATE_{name.upper()}", "")


def role_models(context: Mapping[str, Any], roles: Sequence[str]) -> dict[str, list[str]]:
    """The model(s) each cost role's calls went to under a run's settings."""
    base = _setting(context, "model") or "local"
    models = {}
    for role in roles:
        listed = context.get(LIST_FIELD.get(role, ""))
        if isinstance(listed, list) and listed:
            models[role] = sorted({str(m) for m in listed})
        elif role == "expert":
            models[role] = []  # no expert models: MAD-Fact makes no expert calls
        else:
            models[role] = [_setting(context, ROLE_FIELD.get(role, "model")) or base]
    return models


def _role_price(models: Sequence[str], prices: Mapping[str, Price]) -> Price | None:
    """One price for a role: its models' price when they all share it, else None."""
    found = {price_of(m, prices) for m in models}
    if len(found) != 1 or None in found:
        return None
    return found.pop()


def usd_cost(
    per_role: Mapping[str, Mapping[str, Any]],
    models: Mapping[str, Sequence[str]],
    prices: Mapping[str, Price],
) -> dict[str, Any]:
    """USD per role and in all (None when any role with tokens is unpriced), and what is unpriced.

    A role whose calls went to several models is priced only when they share one price.
    """
    usd: dict[str, float | None] = {}
    unpriced: set[str] = set()
    for role, usage in per_role.items():
        tokens_in = int(usage.get("input_tokens", 0))
        tokens_out = int(usage.get("output_tokens", 0))
        chosen = list(models.get(role) or [])
        price = _role_price(chosen, prices)
        if price is None and (tokens_in or tokens_out):
            unpriced.update(m for m in chosen if price_of(m, prices) is None)
            if not unpriced:  # several models with different prices
                unpriced.add(" / ".join(chosen) or role)
            usd[role] = None
        else:
            usd[role] = price.usd(tokens_in, tokens_out) if price else 0.0
    values = list(usd.values())
    total = None if None in values else sum(v for v in values if v is not None)
    return {"usd": total, "usd_per_role": usd, "unpriced": sorted(unpriced)}


def run_usd(metrics: Mapping[str, Any], prices: Mapping[str, Price]) -> dict[str, Any]:
    """A run's USD in all, per item and per right answer (None where unpriced or no right answer).

    The models per role are those recorded in ``metrics["cost"]["models"]`` when the run wrote
    them, else those it resolved (``metrics["run"]["provenance"]["models"]``), else those its
    settings (``metrics["run"]["context"]``) name.
    """
    cost = metrics.get("cost") or {}
    per_role = cost.get("per_role") or {}
    run = metrics.get("run") or {}
    resolved = (run.get("provenance") or {}).get("models")  # each role's model as the run had it
    models = cost.get("models") or role_models(resolved or run.get("context") or {}, list(per_role))
    priced = usd_cost(per_role, models, prices)
    n = int(metrics.get("n") or 0)
    right = right_answers(metrics)
    total = priced["usd"]
    return {
        "models": {role: list(m) for role, m in models.items()},
        **priced,
        "usd_per_item": total / n if total is not None and n else None,
        "usd_per_right_answer": total / right if total is not None and right else None,
        "right_answers": right,
        "prices": {
            m: vars(p)
            for m in sorted({m for ms in models.values() for m in ms})
            if (p := price_of(m, prices)) is not None
        },
    }


def right_answers(metrics: Mapping[str, Any]) -> int:
    """Items answered right: accuracy (labels) or strict exact match (answers) times n."""
    share = metrics.get("exact_match") if metrics.get("task") == ANSWER_TASK else None
    if share is None:
        share = metrics.get("accuracy", 0.0)
    return round(float(share or 0.0) * int(metrics.get("n") or 0))


def usd_text(value: float | None, digits: int = 4) -> str:
    """A USD amount for reports, or "unpriced"."""
    if value is None:
        return "unpriced"
    return f"${value:.{digits}f}" if value < 100 else f"${value:,.2f}"
