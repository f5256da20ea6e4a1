"""RAGAS faithfulness and answer relevance, computed with any LangChain chat model."""

from __future__ import annotations

import asyncio
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeVar

import numpy as np

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")

from langchain_core.embeddings import Embeddings  # noqa: E402
from langchain_core.language_models import BaseChatModel  # noqa: E402
from pydantic import BaseModel, Field  # noqa: E402
from ragas.llms.base import InstructorBaseRagasLLM  # noqa: E402
from ragas.metrics.collections import Faithfulness  # noqa: E402
from ragas.metrics.collections.answer_relevancy.util import (  # noqa: E402
    AnswerRelevanceInput,
    AnswerRelevanceOutput,
    AnswerRelevancePrompt,
)
from ragas.metrics.collections.faithfulness.util import (  # noqa: E402
    NLIStatementOutput,
    StatementFaithfulnessAnswer,
    StatementGeneratorOutput,
)
from ragas.prompt.metrics.base_prompt import BasePrompt  # noqa: E402

from factdebate.tools.core.errors import FactDebateError
from factdebate.tools.core.records import ErrorRecord, RoleCost, add_costs  # noqa: E402
from factdebate.tools.models.llm import (  # noqa: E402
    CallSite,
    ask_samples,
    ask_structured,
    redact,
    structured_mode,
    takes_samples,
)
from factdebate.tools.models.providers import with_seed, with_temperature  # noqa: E402

T = TypeVar("T", bound=BaseModel)

RELEVANCE_DECIMALS = 4
"""Decimals an answer-relevance score keeps: an encoder's vectors differ by about 1e-7 between
processes (CPU threads, load), far below what the score can tell apart; rounded, two runs of
one command record the same score."""


class ScorerOutputError(FactDebateError, RuntimeError):
    """The scoring model's output did not match the schema RAGAS asked for."""


class _SchemaOnce:
    """Stands in for a RAGAS output model where its prompt reads only the JSON schema.

    RAGAS prompts rebuild their output model's JSON schema for every prompt they render
    (pydantic does not cache it); that was about a seventh of the CPU time of a Tool-MAD
    claim with an instant model. The schema is built once here; the text is unchanged.
    """

    def __init__(self, model: type[BaseModel]) -> None:
        self._schema = model.model_json_schema()

    def model_json_schema(self) -> dict[str, Any]:
        """The schema built at construction."""
        return self._schema


_schemas: dict[type[BaseModel], _SchemaOnce] = {}


def fast_prompt(prompt: BasePrompt[Any, Any]) -> BasePrompt[Any, Any]:
    """``prompt`` (changed in place) rendering its output schema from a one-time copy."""
    model = prompt.output_model
    if isinstance(model, type):
        if model not in _schemas:
            _schemas[model] = _SchemaOnce(model)
        prompt.output_model = _schemas[model]  # type: ignore[assignment]
    return prompt


class SomeStatements(StatementGeneratorOutput):
    """RAGAS's statement list, held to at least one statement.

    Asked through a JSON grammar (the embedded SmolLM2-135M), the small model closed the empty
    list at once on every answer, so faithfulness was never computed and Tool-MAD's stability
    gate could never pass. The grammar built from this schema opens the list with a statement.
    """

    statements: list[str] = Field(
        ..., min_length=1, description="The generated statements from the answer"
    )


class BinaryVerdict(StatementFaithfulnessAnswer):
    """One statement's verdict, held to RAGAS's 0 or 1 by the grammar."""

    verdict: Literal[0, 1] = Field(..., description="the verdict(0/1) of the faithfulness")


class SomeVerdicts(NLIStatementOutput):
    """RAGAS's verdict list, held to at least one verdict of 0 or 1 (see ``SomeStatements``)."""

    statements: list[BinaryVerdict] = Field(  # type: ignore[assignment]
        ..., min_length=1, description="Evaluated statements with verdicts"
    )


GRAMMAR_SCHEMAS: dict[type[BaseModel], type[BaseModel]] = {
    StatementGeneratorOutput: SomeStatements,
    NLIStatementOutput: SomeVerdicts,
}
"""RAGAS's faithfulness schemas as a grammar-held model is asked them (never an empty list)."""


class _ChatModelForRagas(InstructorBaseRagasLLM):
    """Lets RAGAS metrics call a LangChain chat model; tallies usage and parse errors."""

    def __init__(self, model: BaseChatModel, site: CallSite) -> None:
        self.model, self.site = model, site
        self.cost: dict[str, RoleCost] = {}
        self.errors: list[ErrorRecord] = []

    async def agenerate(
        self, prompt: str, response_model: type[T], *, model: BaseChatModel | None = None
    ) -> T:
        model = model or self.model
        if response_model in GRAMMAR_SCHEMAS and structured_mode(model) == "grammar":
            response_model = GRAMMAR_SCHEMAS[response_model]  # type: ignore[assignment]
        value, reply = await ask_structured(
            model,
            prompt,
            response_model,
            replace(self.site, stage=f"score:{response_model.__name__}"),
        )
        self.cost = add_costs(self.cost, reply.cost)
        self.errors.extend(reply.errors)
        if value is None:
            raise ScorerOutputError(reply.errors[-1]["message"] if reply.errors else "no output")
        return value

    async def asamples(self, prompt: str, response_model: type[T], n: int) -> tuple[list[T], int]:
        """Parsed answers of one request for ``n`` samples, and how many samples came back."""
        values, reply = await ask_samples(
            self.model,
            prompt,
            response_model,
            replace(self.site, stage=f"score:{response_model.__name__}"),
            n,
        )
        self.cost = add_costs(self.cost, reply.cost)
        self.errors.extend(reply.errors)
        usage = reply.cost.get(self.site.role)
        received = usage.get("samples", 0) if usage is not None else 0
        return values[:n], min(int(received), n)

    def generate(self, prompt: str, response_model: type[T]) -> T:
        return asyncio.run(self.agenerate(prompt, response_model))


@dataclass
class Scores:
    """Scores of one answer; None = could not be computed (the reason is in ``errors``)."""

    faithfulness: float | None = None
    answer_relevance: float | None = None
    cost: dict[str, RoleCost] = field(default_factory=dict)
    errors: list[ErrorRecord] = field(default_factory=list)


def _finite(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


_PIECE_END = re.compile(r"(?<=[.!?])(?=\s)|(?<=\n)")


def checked_text(answer: str, unchecked: Sequence[re.Pattern[str]] = ()) -> str:
    """``answer`` without the sentences or lines that match one of ``unchecked`` in full.

    The answer is cut after every sentence end (``.``, ``!`` or ``?`` before a space) and
    every line end; a piece that one pattern matches whole is dropped, every other piece is
    kept exactly as written (so an answer with nothing to drop comes back unchanged).
    """
    if not unchecked:
        return answer
    kept = [
        piece
        for piece in _PIECE_END.split(answer)
        if not (piece.strip() and any(p.fullmatch(piece.strip()) for p in unchecked))
    ]
    return "".join(kept).strip()


async def ragas_scores(
    *,
    claim: str,
    answer: str,
    contexts: list[str] | None,
    model: BaseChatModel,
    embeddings: Embeddings,
    site: CallSite,
    strictness: int = 3,
    question_temperature: float = 0.7,
    unchecked: Sequence[re.Pattern[str]] = (),
    noncommittal_zero: bool = True,
) -> Scores:
    """Faithfulness of ``answer`` to ``contexts`` and its relevance to ``claim``, concurrently.

    ``contexts=None`` means the agent had no retrieval tool: faithfulness is not applicable.
    Sentences matching ``unchecked`` (see :func:`checked_text`) are left out of the
    faithfulness steps (statements and verdicts); relevance reads the whole answer.
    ``noncommittal_zero=False`` keeps the mean cosine when every question written back is
    flagged noncommittal (RAGAS's rule, the default, makes it 0).
    Failures (unparseable scorer output, timeouts) leave that score None and are recorded.
    """
    llm = _ChatModelForRagas(model, site)
    sampler = _ChatModelForRagas(with_temperature(model, question_temperature), site)
    out = Scores()
    where = ErrorRecord(round=site.round_no, agent=site.agent, stage="score")
    faithfulness, relevance = await asyncio.gather(
        _faithfulness(llm, claim, checked_text(answer, unchecked), contexts, where),
        _relevance(sampler, embeddings, claim, answer, strictness, where, noncommittal_zero),
    )
    out.faithfulness, faith_errors = faithfulness
    out.answer_relevance, relevance_errors = relevance
    out.cost = add_costs(llm.cost, sampler.cost)
    out.errors = llm.errors + sampler.errors + faith_errors + relevance_errors
    return out


async def _faithfulness(
    llm: _ChatModelForRagas,
    claim: str,
    answer: str,
    contexts: list[str] | None,
    where: ErrorRecord,
) -> tuple[float | None, list[ErrorRecord]]:
    """RAGAS faithfulness (statements, then one verdict per statement); None = unavailable."""
    if contexts is None:
        return None, []
    if not contexts:
        message = "faithfulness: no documents were retrieved"
        return 0.0, [ErrorRecord(**where, kind="score_unavailable", message=message)]
    if not answer.strip():
        message = "faithfulness: the answer has no sentence to check against the documents"
        return None, [ErrorRecord(**where, kind="score_unavailable", message=message)]
    try:
        metric = Faithfulness(llm=llm)
        fast_prompt(metric.statement_generator_prompt)
        fast_prompt(metric.nli_statement_prompt)
        result = await metric.ascore(user_input=claim, response=answer, retrieved_contexts=contexts)
    except Exception as exc:  # RAGAS wraps provider/parse errors in many types
        message = redact(f"faithfulness: {type(exc).__name__}: {exc}")
        return None, [ErrorRecord(**where, kind="score_error", message=message)]
    value = _finite(result.value)
    if value is None:
        message = "faithfulness: no statements extracted"
        return None, [ErrorRecord(**where, kind="score_unavailable", message=message)]
    return value, []


def question_model(model: BaseChatModel, index: int) -> BaseChatModel:
    """The model that writes relevance question ``index``: with a seed set, seed + index.

    Each question then has a seed of its own, whatever order the concurrent calls run in, so
    a run with the model's seed fixed asks the same questions again, and they still differ
    from one another. A model without a seed comes back as it is.
    """
    inner = getattr(model, "bound", model)
    seed = getattr(inner, "seed", None)
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        return model
    seeded: BaseChatModel = with_seed(model, seed + index)
    return seeded


async def _relevance(
    llm: _ChatModelForRagas,
    embeddings: Embeddings,
    claim: str,
    answer: str,
    strictness: int,
    where: ErrorRecord,
    noncommittal_zero: bool = True,
) -> tuple[float | None, list[ErrorRecord]]:
    """RAGAS answer relevance: ``strictness`` questions written back from the answer.

    RAGAS's own prompt and formula (mean cosine between the claim and each question, 0 when
    every question calls the answer noncommittal, unless ``noncommittal_zero`` is False),
    but the question calls run concurrently and sample (the caller passes a model at a
    temperature above 0), so they are different questions rather than one question asked
    ``strictness`` times.
    """
    prompt = fast_prompt(AnswerRelevancePrompt()).to_string(AnswerRelevanceInput(response=answer))
    outputs: list[Any] = []
    received = 0
    if strictness > 1 and takes_samples(llm.model):
        outputs, received = await llm.asamples(prompt, AnswerRelevanceOutput, strictness)
    outputs += await asyncio.gather(
        *(
            llm.agenerate(prompt, AnswerRelevanceOutput, model=question_model(llm.model, i))
            for i in range(received, strictness)
        ),
        return_exceptions=True,
    )
    failures = [o for o in outputs if isinstance(o, BaseException)]
    for failure in failures:
        if not isinstance(failure, Exception):
            raise failure  # cancellation and the like are not score failures
    questions = [o for o in outputs if isinstance(o, AnswerRelevanceOutput) and o.question]
    if not questions:
        reason = "; ".join(str(f) for f in failures)[:500] or "no question was written"
        message = redact(f"answer_relevance: {reason}")
        return None, [ErrorRecord(**where, kind="score_error", message=message)]
    vectors = await asyncio.to_thread(
        embeddings.embed_documents, [claim, *(q.question for q in questions)]
    )
    target, *others = (np.asarray(v, dtype=float) for v in vectors)
    cosines = [float(v @ target / (np.linalg.norm(v) * np.linalg.norm(target))) for v in others]
    committal = not noncommittal_zero or not all(q.noncommittal for q in questions)
    mean = float(np.clip(np.mean(cosines), -1.0, 1.0))  # identical vectors: 1 + float error
    return _finite(round(mean * committal, RELEVANCE_DECIMALS)), []
