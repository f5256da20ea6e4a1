"""RAGAS faithfulness and answer relevance, computed with any LangChain chat model."""

from __future__ import annotations

import asyncio
import math
import os
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")

from langchain_core.embeddings import Embeddings  # noqa: E402
from langchain_core.language_models import BaseChatModel  # noqa: E402
from pydantic import BaseModel  # noqa: E402
from ragas.embeddings.base import BaseRagasEmbedding  # noqa: E402
from ragas.llms.base import InstructorBaseRagasLLM  # noqa: E402
from ragas.metrics.collections import AnswerRelevancy, Faithfulness  # noqa: E402

from tools.llm import CallSite, ask_structured, redact  # noqa: E402
from tools.records import ErrorRecord, RoleCost, add_costs  # noqa: E402

T = TypeVar("T", bound=BaseModel)


class ScorerOutputError(RuntimeError):
    """The scoring model's output did not match the schema RAGAS asked for."""


class _ChatModelForRagas(InstructorBaseRagasLLM):
    """Lets RAGAS metrics call a LangChain chat model; tallies usage and parse errors."""

    def __init__(self, model: BaseChatModel, site: CallSite) -> None:
        self.model, self.site = model, site
        self.cost: dict[str, RoleCost] = {}
        self.errors: list[ErrorRecord] = []

    async def agenerate(self, prompt: str, response_model: type[T]) -> T:
        value, reply = await ask_structured(
            self.model,
            prompt,
            response_model,
            replace(self.site, stage=f"score:{response_model.__name__}"),
        )
        self.cost = add_costs(self.cost, reply.cost)
        self.errors.extend(reply.errors)
        if value is None:
            raise ScorerOutputError(reply.errors[-1]["message"] if reply.errors else "no output")
        return value

    def generate(self, prompt: str, response_model: type[T]) -> T:
        return asyncio.run(self.agenerate(prompt, response_model))


class _EmbeddingsForRagas(BaseRagasEmbedding):
    """Lets RAGAS metrics use a LangChain embeddings object."""

    def __init__(self, embeddings: Embeddings) -> None:
        super().__init__()
        self.inner = embeddings

    def embed_text(self, text: str, **kwargs: Any) -> list[float]:
        return self.inner.embed_query(text)

    async def aembed_text(self, text: str, **kwargs: Any) -> list[float]:
        return await asyncio.to_thread(self.inner.embed_query, text)

    def embed_texts(self, texts: list[str], **kwargs: Any) -> list[list[float]]:
        return self.inner.embed_documents(texts)

    async def aembed_texts(self, texts: list[str], **kwargs: Any) -> list[list[float]]:
        return await asyncio.to_thread(self.inner.embed_documents, texts)


@dataclass
class Scores:
    """Scores of one answer; None = could not be computed (the reason is in ``errors``)."""

    faithfulness: float | None = None
    answer_relevance: float | None = None
    cost: dict[str, RoleCost] = field(default_factory=dict)
    errors: list[ErrorRecord] = field(default_factory=list)


def _finite(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


async def ragas_scores(
    *,
    claim: str,
    answer: str,
    contexts: list[str] | None,
    model: BaseChatModel,
    embeddings: Embeddings,
    site: CallSite,
    strictness: int = 3,
) -> Scores:
    """Faithfulness of ``answer`` to ``contexts`` and its relevance to ``claim``.

    ``contexts=None`` means the agent had no retrieval tool: faithfulness is not applicable.
    Failures (unparseable scorer output, timeouts) leave that score None and are recorded.
    """
    llm = _ChatModelForRagas(model, site)
    out = Scores()
    where = ErrorRecord(round=site.round_no, agent=site.agent, stage="score")
    if contexts is not None:
        if not contexts:
            out.errors.append(
                ErrorRecord(
                    **where,
                    kind="score_unavailable",
                    message="faithfulness: no documents were retrieved",
                )
            )
            out.faithfulness = 0.0
        else:
            try:
                result = await Faithfulness(llm=llm).ascore(
                    user_input=claim, response=answer, retrieved_contexts=contexts
                )
                out.faithfulness = _finite(result.value)
                if out.faithfulness is None:
                    out.errors.append(
                        ErrorRecord(
                            **where,
                            kind="score_unavailable",
                            message="faithfulness: no statements extracted",
                        )
                    )
            except Exception as exc:  # RAGAS wraps provider/parse errors in many types
                out.errors.append(
                    ErrorRecord(
                        **where,
                        kind="score_error",
                        message=redact(f"faithfulness: {type(exc).__name__}: {exc}"),
                    )
                )
    try:
        metric = AnswerRelevancy(
            llm=llm, embeddings=_EmbeddingsForRagas(embeddings), strictness=strictness
        )
        result = await metric.ascore(user_input=claim, response=answer)
        out.answer_relevance = _finite(result.value)
    except Exception as exc:  # see above
        out.errors.append(
            ErrorRecord(
                **where,
                kind="score_error",
                message=redact(f"answer_relevance: {type(exc).__name__}: {exc}"),
            )
        )
    out.cost = llm.cost
    out.errors = llm.errors + out.errors
    return out
