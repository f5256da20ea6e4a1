"""Settings every method shares (LangGraph Studio renders them as a form), and presets."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, make_dataclass
from typing import Any, Literal, TypeVar, get_type_hints

from tools.llm import CallSite

ToolName = Literal["rag", "search", "none"]
C = TypeVar("C", bound="Context")


def _env_default(name: str, fallback: str) -> str:
    return os.environ.get(f"FACTDEBATE_{name.upper()}", fallback)


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
    temperature: float = field(
        default=0.0, metadata={"description": "Sampling temperature for every model call."}
    )
    max_output_tokens: int = field(
        default=512, metadata={"description": "Cap on tokens generated per model call."}
    )
    collection: str = field(
        default="default",
        metadata={"description": "Name of the local index (Milvus + lexical) to retrieve from."},
    )
    milvus_uri: str = field(
        default="",
        metadata={"description": "Milvus server URI; empty = embedded Milvus Lite file."},
    )
    search_backend: Literal["auto", "tavily", "offline"] = field(
        default="auto",
        metadata={
            "description": "Web search: 'tavily' needs TAVILY_API_KEY; 'offline' is BM25 over "
            "the local collection; 'auto' picks Tavily when the key is set."
        },
    )
    rag_engine: Literal["dense", "hybrid"] = field(
        default="hybrid",
        metadata={
            "description": "Engine of the 'rag' tool: 'hybrid' fuses MiniLM dense and stemmed "
            "BM25 rankings (better recall, measured); 'dense' is the papers' dense retrieval."
        },
    )
    top_k: int = field(default=3, metadata={"description": "Documents retrieved per query."})
    max_rounds: int = field(default=3, metadata={"description": "Debate round limit T."})
    max_claim_chars: int = field(
        default=2000, metadata={"description": "Longest claim accepted, in characters."}
    )
    max_doc_chars: int = field(
        default=2000,
        metadata={"description": "Each evidence text is cut to this many characters in prompts."},
    )
    max_llm_calls: int = field(
        default=200,
        metadata={"description": "Budget: LLM calls per claim (0 = no limit); checked per round."},
    )
    max_total_tokens: int = field(
        default=1_000_000,
        metadata={"description": "Budget: input + output tokens per claim (0 = no limit)."},
    )
    max_usd: float = field(
        default=0.0,
        metadata={"description": "Budget: dollars per claim (0 = no limit; needs prices)."},
    )
    usd_per_million_input: float = field(
        default=0.0, metadata={"description": "Price of 1M input tokens, for the dollar budget."}
    )
    usd_per_million_output: float = field(
        default=0.0, metadata={"description": "Price of 1M output tokens, for the dollar budget."}
    )
    call_timeout_s: float = field(
        default=300.0, metadata={"description": "Timeout for one model or tool call, seconds."}
    )
    model_retries: int = field(
        default=2,
        metadata={
            "description": "Extra attempts after a transient model fault (timeout, connection "
            "error, 408/429/5xx), with exponential backoff honouring Retry-After; 0 = none."
        },
    )

    def __post_init__(self) -> None:
        """Fill fields still at their default from FACTDEBATE_* environment variables."""
        for f in fields(self):
            is_model = f.name in {"model", "debater_model", "judge_model", "scorer_model"}
            if is_model and getattr(self, f.name) == f.default:
                setattr(self, f.name, _env_default(f.name, str(f.default)))
        if self.max_rounds < 1 or self.top_k < 1:
            raise ValueError("max_rounds and top_k must be at least 1")
        if not 0 <= self.model_retries <= 10:
            raise ValueError(f"model_retries must be 0..10, got {self.model_retries}")
        if self.rag_engine not in ("dense", "hybrid"):
            raise ValueError(f"rag_engine must be dense or hybrid, got {self.rag_engine!r}")
        if self.search_backend not in ("auto", "tavily", "offline"):
            raise ValueError(
                f"search_backend must be auto, tavily or offline, got {self.search_backend!r}"
            )

    def site(self, *, role: str, agent: str, stage: str, round_no: int = 0) -> CallSite:
        """The call site of one model call under these settings (timeout, retries)."""
        return CallSite(
            role=role,
            agent=agent,
            stage=stage,
            round_no=round_no,
            timeout=self.call_timeout_s,
            retries=self.model_retries,
        )

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

    def __post_init__(self) -> None:
        """Check the evidence tool after the shared settings."""
        super().__post_init__()
        if self.evidence_tool not in ("rag", "search"):
            raise ValueError(f"evidence_tool must be rag or search, got {self.evidence_tool!r}")


def with_defaults(base: type[C], class_name: str, doc: str, **defaults: Any) -> type[C]:
    """A subclass of ``base`` whose named fields start from other defaults.

    Field descriptions carry over, so Studio's settings form shows the new defaults. The
    values are validated once here by building an instance.
    """
    hints = get_type_hints(base)
    known = {f.name: f for f in fields(base)}
    unknown = sorted(set(defaults) - set(known))
    if unknown:
        raise ValueError(f"{base.__name__} has no setting(s): {', '.join(unknown)}")
    specs = [
        (name, hints[name], field(default=value, metadata=known[name].metadata))
        for name, value in defaults.items()
    ]
    variant: type[C] = make_dataclass(class_name, specs, bases=(base,), kw_only=True)
    variant.__doc__ = doc
    variant.__module__ = base.__module__
    variant()
    return variant
