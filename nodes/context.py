"""Settings every method shares (LangGraph Studio renders them as a form), and presets."""

from __future__ import annotations

import datetime
import difflib
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, make_dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar, get_args, get_origin, get_type_hints

from factdebate.tools.core.errors import SettingsError

if (
    TYPE_CHECKING
):  # factdebate.tools.models.llm loads LangChain: settings stay light so the CLI checks them fast
    from factdebate.tools.models.llm import CallSite
    from factdebate.tools.models.pacing import Limits

ToolName = Literal["rag", "search", "none"]
C = TypeVar("C", bound="Context")


def _env_default(name: str, fallback: str) -> str:
    return os.environ.get(f"FACTDEBATE_{name.upper()}", fallback)


ENV_NUMBERS = frozenset(
    {"search_cache_ttl_s", "search_cache_max_mb", "rpm", "tpm", "max_in_flight"}
)
"""Numeric settings that, left at their default, take ``FACTDEBATE_<FIELD>`` (the operator's)."""


def env_number(name: str, fallback: Any) -> float:
    """``FACTDEBATE_<NAME>`` as a number, else ``fallback`` (a malformed one: SettingsError)."""
    raw = os.environ.get(f"FACTDEBATE_{name.upper()}", "").strip()
    if not raw:
        return float(fallback)
    try:
        return float(raw)
    except ValueError:
        raise SettingsError(
            f"FACTDEBATE_{name.upper()} must be a number, got {raw!r:.80}"
        ) from None


def setting(
    default: Any, description: str, lo: float | None = None, hi: float | None = None
) -> Any:
    """A settings field whose numeric bounds ``lo..hi`` are checked and shown in its description."""
    if (lo is None) != (hi is None):
        raise ValueError("give both bounds of a setting or neither")
    if lo is not None and hi is not None:
        description = f"{description} Range {lo:g}..{hi:g}."
    meta = {"description": description, "lo": lo, "hi": hi}
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata=meta)
    return field(default=default, metadata=meta)


MAX_TEXT_SETTING = 1000  # longest text setting (model strings, collection names), characters
_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = get_type_hints(cls)
    return _HINTS[cls]


def _kind(hint: Any) -> str:
    """A word naming what a field of type ``hint`` holds, for error messages."""
    if get_origin(hint) is Literal:
        *first, last = (str(a) for a in get_args(hint))
        return f"{', '.join(first)} or {last}" if first else last
    return {bool: "true or false", int: "an integer", float: "a number", str: "a string"}.get(
        hint, "a list of strings"
    )


def _checked(name: str, value: Any, hint: Any, meta: Mapping[str, Any]) -> Any:
    """``value`` as the field's type within its bounds, or a ValueError naming the field."""
    bad = SettingsError(f"setting {name} must be {_kind(hint)}, got {value!r:.80}")
    if get_origin(hint) is Literal:
        if value not in get_args(hint):
            raise bad
        return value
    if hint is bool or hint is str:
        if not isinstance(value, hint):
            raise bad
        if isinstance(value, str) and len(value) > MAX_TEXT_SETTING:
            raise SettingsError(
                f"setting {name} is {len(value)} characters; the limit is {MAX_TEXT_SETTING}"
            )
        return value
    if get_origin(hint) is list:
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise bad
        return list(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise bad
    if hint is int:
        if isinstance(value, float) and not value.is_integer():
            raise bad
        value = int(value)
    else:
        value = float(value)
        if not math.isfinite(value):
            raise SettingsError(f"setting {name} must be a finite number, got {value!r}")
    lo, hi = meta.get("lo"), meta.get("hi")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise SettingsError(f"setting {name} must be within {lo:g}..{hi:g}, got {value!r}")
    return value


def check_fields(settings: Any) -> None:
    """Check every field of a settings dataclass: its type and its bounds (the one place)."""
    hints = _hints(type(settings))
    for f in fields(settings):
        value = _checked(f.name, getattr(settings, f.name), hints[f.name], f.metadata)
        object.__setattr__(settings, f.name, value)


@dataclass(kw_only=True)
class Context:
    """Settings every method understands: models per role, evidence backends, limits.

    A field left at its default picks up ``FACTDEBATE_<FIELD>`` from the environment, so a
    deployment can switch models without code (e.g. ``FACTDEBATE_MODEL=openai:gpt-4o-mini``).
    """

    model: str = field(
        default="local",
        metadata={
            "description": "Chat model for every role unless overridden: 'local' (embedded "
            "SmolLM2), a provider string such as 'openai:gpt-4o-mini', 'anthropic:claude-"
            "3-5-haiku-latest' or 'ollama:llama3.1', or 'openai-compatible:MODEL@URL'."
        },
    )
    debater_model: str = field(
        default="", metadata={"description": "Model for debaters/agents; empty = `model`."}
    )
    judge_model: str = field(
        default="",
        metadata={"description": "Model for judge/moderator/aggregator; empty = `model`."},
    )
    scorer_model: str = field(
        default="", metadata={"description": "Model behind RAGAS scoring; empty = `model`."}
    )
    temperature: float = setting(0.0, "Sampling temperature for every model call.", 0, 2)
    max_output_tokens: int = setting(
        1024,
        "Output cap of debaters, document agents, jurors and queries, tokens (recorded "
        "capable-model arguments reach ~650).",
        16,
        32768,
    )
    judge_max_output_tokens: int = setting(
        768,
        "Output cap of the judge, moderator, aggregator and corrector, tokens (recorded "
        "verdicts reach 423 tokens, moderator JSON 341, aggregator JSON 136).",
        16,
        32768,
    )
    scorer_max_output_tokens: int = setting(
        2048,
        "Output cap of RAGAS scoring calls, tokens (recorded faithfulness verdict lists reach "
        "~1,060).",
        16,
        32768,
    )
    clerk_max_output_tokens: int = setting(
        4096,
        "Output cap of the MAD-Fact clerk, reference writers and claim merger, tokens (a "
        "LongFact-length answer yields 40-80 claims).",
        16,
        32768,
    )
    current_date: str = field(
        default="",
        metadata={
            "description": "Today's date as agents are told it (YYYY-MM-DD), for time-dependent "
            "claims; empty = the real date when the run starts."
        },
    )
    top_p: float = setting(
        0.0,
        "Nucleus-sampling top_p sent with every model call (0 = not sent: the provider's default).",
        0,
        1,
    )
    sampling_seed: int = setting(
        0,
        "Sampling seed sent with every model call where the model takes one (OpenAI and "
        "compatible servers, Ollama; the embedded model derives each call's seed from it), so "
        "a rerun samples alike; -1 = none sent. `bench --repeats` gives repeat r seed r; each "
        "self-consistency sample takes a seed of its own from it.",
        -1,
        999999,
    )
    collection: str = field(
        default="default",
        metadata={"description": "Name of the local index (Milvus + lexical) to retrieve from."},
    )
    milvus_uri: str = field(
        default="",
        metadata={"description": "Milvus server URI; empty = embedded Milvus Lite file."},
    )
    search_backend: Literal["auto", "tavily", "serper", "offline", "openalex"] = field(
        default="auto",
        metadata={
            "description": "Web search: 'tavily' needs TAVILY_API_KEY; 'serper' (Google via "
            "serper.dev) needs SERPER_API_KEY; 'offline' is BM25 over the local collection; "
            "'auto' picks Tavily when its key is set, else Serper, else offline; 'openalex' "
            "searches scholarly abstracts (OpenAlex works API, summarised; OPENALEX_* settings)."
        },
    )
    search_cache_ttl_s: float = setting(
        0.0,
        "Seconds a web search answer (Tavily, Serper, OpenAlex) is reused from the cache under "
        "the data home instead of a paid call; 0 = no cache. Left at 0 it takes "
        "FACTDEBATE_SEARCH_CACHE_TTL_S (on a server only the operator sets it).",
        0,
        31_536_000,
    )
    search_cache_max_mb: float = setting(
        256.0,
        "Most megabytes of cached search answers; the least recently used go first. Left at "
        "256 it takes FACTDEBATE_SEARCH_CACHE_MAX_MB (on a server only the operator sets it).",
        1,
        100_000,
    )
    rag_engine: Literal["dense", "hybrid"] = field(
        default="hybrid",
        metadata={
            "description": "Engine of the 'rag' tool: 'hybrid' fuses MiniLM dense and stemmed "
            "BM25 rankings (better recall, measured); 'dense' is the papers' dense retrieval."
        },
    )
    embed_model: str = field(
        default="",
        metadata={
            "description": "Encoder of the 'rag' tool's dense vectors: empty = the one the "
            "collection was built with (the shipped MiniLM unless FACTDEBATE_EMBED_MODEL named "
            "another at index time); a name (e.g. 'intfloat/e5-small-v2') must match it."
        },
    )
    rerank_model: str = field(
        default="",
        metadata={
            "description": "Cross-encoder (sentence-transformers name or folder) that re-orders "
            "the 'rag' tool's fused top candidates; empty = no reranking."
        },
    )
    evidence_from: str = field(
        default="",
        metadata={
            "description": "Frozen evidence that answers every retrieval and search call: a "
            "bench run folder, an exported snapshot file or a knowledge store; no network, no "
            "index. Empty = live tools."
        },
    )
    evidence_scope: Literal["exact", "claim"] = field(
        default="exact",
        metadata={
            "description": "How frozen evidence answers: 'exact' gives a call with the same "
            "tool, backend, query and k its recorded documents; 'claim' ranks the item's "
            "recorded pool for any query (BM25 for search, the dense encoder for rag)."
        },
    )
    evidence_miss: Literal["stop", "live"] = field(
        default="stop",
        metadata={
            "description": "A call the frozen evidence does not hold: 'stop' ends the item with "
            "one line naming the query; 'live' runs the real tool and records it."
        },
    )
    top_k: int = setting(3, "Documents retrieved per query.", 1, 100)
    max_rounds: int = setting(3, "Debate round limit T.", 1, 20)
    max_claim_chars: int = setting(2000, "Longest claim accepted, in characters.", 1, 100_000)
    max_doc_chars: int = setting(
        2000, "Each evidence or agent text is cut to this many characters in prompts.", 50, 50_000
    )
    max_llm_calls: int = setting(
        200, "Budget: LLM calls per claim (0 = no limit); checked per round.", 0, 100_000
    )
    max_total_tokens: int = setting(
        1_000_000, "Budget: input + output tokens per claim (0 = no limit).", 0, 1_000_000_000
    )
    max_usd: float = setting(
        0.0, "Budget: dollars per claim (0 = no limit; needs prices).", 0, 1_000_000
    )
    usd_per_million_input: float = setting(
        0.0, "Price of 1M input tokens, for the dollar budget.", 0, 10_000
    )
    usd_per_million_output: float = setting(
        0.0, "Price of 1M output tokens, for the dollar budget.", 0, 10_000
    )
    call_timeout_s: float = setting(
        300.0,
        "Timeout for one hosted model or tool call, seconds (the embedded model's calls are "
        "bounded by their token caps, not the clock).",
        0.01,
        3600,
    )
    model_retries: int = setting(
        -1,
        "Most extra attempts after a transient model fault (timeout, cut hang, connection "
        "error, 408/429/5xx), waiting as Retry-After asks or an exponential backoff; -1 = as "
        "many as call_deadline_s allows; 0 = none.",
        -1,
        1000,
    )
    call_deadline_s: float = setting(
        600.0,
        "Longest time one model call may take, pacing waits and retries included, seconds.",
        0.01,
        86_400,
    )
    rpm: int = setting(
        0,
        "Requests per minute each model endpoint accepts, paced for every call of the process; "
        "0 = learned from the provider's x-ratelimit-* headers. Left at 0 it takes "
        "FACTDEBATE_RPM (on a server, a run may only lower the operator's).",
        0,
        1_000_000,
    )
    tpm: int = setting(
        0,
        "Tokens per minute each model endpoint accepts (prompt plus max_tokens per request, "
        "see tpm_counts); 0 = learned from the provider's headers. Left at 0 it takes "
        "FACTDEBATE_TPM (on a server, a run may only lower the operator's).",
        0,
        1_000_000_000,
    )
    tpm_counts: Literal["cap", "used"] = field(
        default="cap",
        metadata={
            "description": "How the provider counts a request against tpm: 'cap' = the prompt "
            "plus the whole max_tokens (OpenAI); 'used' = the tokens really spent."
        },
    )
    max_in_flight: int = setting(
        64,
        "Most requests in flight to one model endpoint; the window halves on a 429 and grows "
        "back by one per window of answers. Left at 64 it takes FACTDEBATE_MAX_IN_FLIGHT (on "
        "a server, a run may only lower the operator's).",
        1,
        4096,
    )
    hang_cut_min_s: float = setting(
        20.0,
        "Shortest hang cut, seconds: after 16 answers an attempt running past hang_cut_factor "
        "times the 99th percentile of its role's recent latencies (at least this, at most "
        "call_timeout_s) is cut and retried.",
        0.01,
        3600,
    )
    hang_cut_factor: float = setting(
        4.0, "Hang cut as a multiple of the 99th percentile of recent latencies.", 1, 100
    )
    review: bool = field(
        default=False,
        metadata={
            "description": "Pause before the verdict is final so a person approves or overrules "
            "it (needs a checkpointer: --checkpoint and --thread, or a LangGraph server)."
        },
    )

    def __post_init__(self) -> None:
        """Fill model fields left at their default from FACTDEBATE_*, then check every field."""
        for f in fields(self):
            is_model = f.name in {"model", "debater_model", "judge_model", "scorer_model"}
            if is_model and getattr(self, f.name) == f.default:
                setattr(self, f.name, _env_default(f.name, str(f.default)))
            if f.name in ENV_NUMBERS and getattr(self, f.name) == f.default:
                setattr(self, f.name, env_number(f.name, f.default))
        check_fields(self)
        if self.current_date:
            try:
                datetime.date.fromisoformat(self.current_date)
            except ValueError:
                raise SettingsError(
                    f"current_date must be YYYY-MM-DD, got {self.current_date!r}"
                ) from None

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        """Refuse unknown names with a ValueError (the generated __init__ raises a TypeError).

        LangGraph builds the settings from a dict context with ``cls(**context)``, so this
        covers graphs invoked directly as well as the CLI, the API and the server.
        """
        known = [f.name for f in fields(cls)]
        unknown = sorted(set(kwargs) - set(known))
        if unknown:
            close = {n: difflib.get_close_matches(n, known, n=1) for n in unknown}
            hints = "; ".join(f"{n}: did you mean {c[0]}?" for n, c in close.items() if c)
            raise SettingsError(
                f"unknown setting(s) for {cls.__name__}: {', '.join(unknown)}"
                + (f" ({hints})" if hints else "")
            )
        return super().__new__(cls)

    @classmethod
    def from_settings(cls: type[C], given: Mapping[str, Any]) -> C:
        """Build these settings from a mapping; unknown names and bad values raise ValueError."""
        return cls(**given)

    def site(self, *, role: str, agent: str, stage: str, round_no: int = 0) -> CallSite:
        """The call site of one model call under these settings (timeout, retries)."""
        from factdebate.tools.models.llm import CallSite

        return CallSite(
            role=role,
            agent=agent,
            stage=stage,
            round_no=round_no,
            timeout=self.call_timeout_s,
            retries=self.model_retries,
            deadline=self.call_deadline_s,
            limits=self.limits(),
            max_tokens=self.output_cap(role),
            today=self.today(),
        )

    def limits(self) -> Limits:
        """What these settings tell the pacing of each model endpoint."""
        from factdebate.tools.models.pacing import Limits

        return Limits(
            rpm=self.rpm,
            tpm=self.tpm,
            tpm_counts=self.tpm_counts,
            max_in_flight=self.max_in_flight,
            hang_cut_min_s=self.hang_cut_min_s,
            hang_cut_factor=self.hang_cut_factor,
        )

    def output_cap(self, role: str) -> int:
        """The output cap, in tokens, of calls made by ``role``."""
        if role in ("judge", "moderator", "aggregator", "corrector"):
            return self.judge_max_output_tokens
        if role == "scorer":
            return self.scorer_max_output_tokens
        if role in ("clerk", "expert", "merger"):
            return self.clerk_max_output_tokens
        return self.max_output_tokens

    def today(self) -> str:
        """The date agents are told: ``current_date``, or today's date (ISO format)."""
        return self.current_date or datetime.date.today().isoformat()

    def model_for(self, role: str) -> str:
        """Return the model string used by ``role`` (debater, judge or scorer)."""
        chosen = {
            "debater": self.debater_model,
            "judge": self.judge_model,
            "scorer": self.scorer_model,
        }.get(role, "")
        return chosen or self.model


@dataclass(kw_only=True)
class EvidenceContext(Context):
    """Settings of methods that read one evidence set, given or retrieved once per claim."""

    evidence_tool: Literal["rag", "search"] = field(
        default="rag",
        metadata={"description": "Backend retrieving `top_k` documents when no evidence is given."},
    )


def with_defaults(base: type[C], class_name: str, doc: str, **defaults: Any) -> type[C]:
    """A subclass of ``base`` whose named fields start from other defaults.

    Field descriptions carry over, so Studio's settings form shows the new defaults. The
    values are validated once here by building an instance.
    """
    hints = get_type_hints(base)
    known = {f.name: f for f in fields(base)}
    unknown = sorted(set(defaults) - set(known))
    if unknown:
        raise SettingsError(f"{base.__name__} has no setting(s): {', '.join(unknown)}")
    specs = [
        (name, hints[name], field(default=value, metadata=known[name].metadata))
        for name, value in defaults.items()
    ]
    variant: type[C] = make_dataclass(class_name, specs, bases=(base,), kw_only=True)
    variant.__doc__ = doc
    variant.__module__ = base.__module__
    variant()
    return variant
