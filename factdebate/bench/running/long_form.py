"""Long-form factuality: generate and score long answers, evaluate a claim checker."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from factdebate.bench.judging.metrics import binary_metrics
from factdebate.datasets import AtomicClaimItem, PromptItem
from factdebate.runs.folder import (
    append_rows,
    check_same_run,
    read_rows,
    read_run,
    rows_lock,
    write_rows,
)
from factdebate.tools.core.errors import SettingsError
from factdebate.tools.core.files import write_atomic
from factdebate.tools.core.secrets import redact_deep

Checker = Literal["mad-fact", "single-verifier"]


async def ascore_answer(
    answer: str, question: str = "", references: Sequence[str] | None = None, **settings: Any
) -> dict[str, Any]:
    """Run MAD-Fact on one answer; ``settings`` are ``MADFactContext`` fields.

    Returns the result contract plus ``claims`` (per-claim verdicts), ``dropped``,
    ``scores`` and ``golden``.
    """
    from factdebate.api import contract
    from factdebate.graphs.mad_fact import graph
    from factdebate.nodes.mad_fact.context import MADFactContext
    from factdebate.nodes.mad_fact.state import AnswerInput

    if settings.get("review"):
        raise SettingsError(
            "score-answer does not pause for review: run mad-fact on a LangGraph server with "
            "context review=true, or compile factdebate.graphs.mad_fact with a checkpointer"
        )
    payload = AnswerInput(question=question, answer=answer, references=list(references or []))
    result = await graph.ainvoke(payload, context=MADFactContext(**settings))
    return contract(dict(result))  # the streamed-only channels (claim_texts, ...) stay out


def score_answer(
    answer: str, question: str = "", references: Sequence[str] | None = None, **settings: Any
) -> dict[str, Any]:
    """Synchronous ``ascore_answer``."""
    return asyncio.run(ascore_answer(answer, question, references, **settings))


async def acheck_claim(
    claim: str, checker: Checker = "mad-fact", question: str = "", **settings: Any
) -> tuple[bool | None, dict[str, Any]]:
    """Judge one atomic claim with the jury or the single verifier: (factual?, raw output)."""
    if checker == "mad-fact":
        from factdebate.graphs.jury import graph as jury
        from factdebate.nodes.mad_fact.context import MADFactContext

        out = await jury.ainvoke(
            {"claim": claim, "question": question}, context=MADFactContext(**settings)
        )
        verdict = (out.get("claim_results") or [{}])[0].get("verdict")
    elif checker == "single-verifier":
        from factdebate.graphs.single_verifier import graph as verifier
        from factdebate.nodes.mad_fact.context import SingleVerifierContext

        out = await verifier.ainvoke({"claim": claim}, context=SingleVerifierContext(**settings))
        verdict = out.get("verdict")
    else:
        raise SettingsError(f"unknown checker {checker!r}: mad-fact or single-verifier")
    return (None if verdict is None else verdict == "TRUE"), out


async def aevaluate_checker(
    items: Sequence[AtomicClaimItem],
    checker: Checker = "mad-fact",
    concurrency: int = 4,
    **settings: Any,
) -> dict[str, Any]:
    """Per-class P/R/F1 (TRUE and FALSE) of a checker on labelled atomic claims.

    Use with ``load_factcheck_bench().items`` or ``load_factool_qa().items``. Claims
    without a readable verdict count as wrong (``metrics["unparsed"]``).
    """
    limit = asyncio.Semaphore(max(1, concurrency))

    async def one(item: AtomicClaimItem) -> tuple[bool | None, dict[str, Any]]:
        async with limit:
            return await acheck_claim(
                item.claim, checker, str(item.meta.get("question") or ""), **settings
            )

    outputs = await asyncio.gather(*(one(item) for item in items))
    preds = [pred for pred, _ in outputs]
    return {
        "checker": checker,
        "metrics": binary_metrics([item.label for item in items], preds),
        "predictions": [
            {
                "id": item.id,
                "claim": item.claim,
                "gold": item.label,
                "pred": pred,
                "errors": out.get("errors", []),
            }
            for item, (pred, out) in zip(items, outputs, strict=True)
        ],
    }


# --------------------------------------------------------------------------- answer folders

ANSWERS_FILE = "answers.jsonl"
SCORES_FILE = "scores.jsonl"
SUMMARY_FILE = "summary.json"
Progress = Callable[[int, int], None]
"""Called as ``(done, total)`` once at the start and after each item."""


async def _run_all(
    todo: Sequence[Any],
    one: Callable[[Any], Awaitable[dict[str, Any]]],
    sink_path: Path,
    concurrency: int,
    done: int,
    total: int,
    progress: Progress | None,
) -> list[dict[str, Any]]:
    """Run ``one`` over ``todo`` with bounded concurrency, appending each row as it finishes."""
    if not 1 <= concurrency <= 64:
        raise SettingsError(f"concurrency must be 1..64, got {concurrency}")
    gate = asyncio.Semaphore(concurrency)
    new: list[dict[str, Any]] = []
    if progress:
        progress(done, total)
    with append_rows(sink_path) as sink:

        async def run(item: Any) -> None:
            async with gate:
                row = await one(item)
            sink.add(row)
            new.append(row)
            if progress:
                progress(done + len(new), total)

        await asyncio.gather(*(run(item) for item in todo))
    return new


async def agen_answers(
    prompts: Sequence[PromptItem],
    out_dir: Path,
    *,
    model: str,
    dataset: str = "longfact",
    concurrency: int = 1,
    max_output_tokens: int = 1024,
    timeout: float = 300.0,
    retries: int = 2,
    progress: Progress | None = None,
) -> dict[str, int]:
    """Write a long answer per prompt to ``out_dir/answers.jsonl``; re-running resumes.

    Prompts already answered are skipped; failed ones (no text, e.g. a timeout) are asked
    again. The folder remembers its model and dataset and refuses another.

    Returns:
        ``{"new": ..., "skipped": ..., "failed": ...}``.

    """
    from factdebate.tools.models.llm import CallSite, ask
    from factdebate.tools.models.providers import resolve_model

    if not 16 <= max_output_tokens <= 32_768:
        raise SettingsError(f"max_output_tokens must be 16..32768, got {max_output_tokens}")
    out_dir.mkdir(parents=True, exist_ok=True)
    check_same_run(
        out_dir,
        {"dataset": dataset, "model": model, "max_output_tokens": max_output_tokens},
        what="answers with a",
    )
    path = out_dir / ANSWERS_FILE
    wanted = {p.id for p in prompts}
    with rows_lock(path, wait=False):  # the rewrite: only as the file's one writer
        kept = [r for r in read_rows(path) if r.get("answer") and str(r["id"]) in wanted]
        write_rows(path, kept)
    done = {str(r["id"]) for r in kept}
    chat = resolve_model(model, max_tokens=max_output_tokens, timeout=timeout)
    site = CallSite(role="writer", agent="writer", stage="answer", timeout=timeout, retries=retries)

    async def one(item: PromptItem) -> dict[str, Any]:
        started = time.perf_counter()
        reply = await ask(chat, item.prompt, site)
        return {
            "id": item.id,
            "prompt": item.prompt,
            "answer": reply.text,
            "model": redact_deep(model),  # no key from a model URL in answers.jsonl
            "topic": item.meta.get("topic"),
            "cost": reply.cost,
            "errors": reply.errors,
            "latency_s": round(time.perf_counter() - started, 3),
        }

    todo = [p for p in prompts if p.id not in done]
    new = await _run_all(todo, one, path, concurrency, len(done), len(prompts), progress)
    failed = sum(not r["answer"] for r in new)
    return {"new": len(new) - failed, "skipped": len(done), "failed": failed}


async def ascore_answers(
    answer_dir: Path,
    *,
    concurrency: int = 1,
    progress: Progress | None = None,
    **settings: Any,
) -> dict[str, Any]:
    """Score every answer in ``answer_dir/answers.jsonl`` with MAD-Fact; re-running resumes.

    Each answer's result goes to ``scores.jsonl`` (claims, verdict, scores, errors, cost);
    an answer whose run raised is recorded with the error and scored again next time. The
    means over scored answers go to ``summary.json`` and are returned.
    """
    from factdebate.nodes.mad_fact.context import MADFactContext

    MADFactContext(**settings)  # bad settings fail before anything runs
    answers = [r for r in read_rows(answer_dir / ANSWERS_FILE) if r.get("answer")]
    if not answers:
        raise SettingsError(f"{answer_dir}: no answers in {ANSWERS_FILE}")
    path = answer_dir / SCORES_FILE
    with rows_lock(path, wait=False):  # the rewrite: only as the file's one writer
        kept = [r for r in read_rows(path) if not r.get("failed")]
        write_rows(path, kept)
    done = {str(r["id"]) for r in kept}

    async def one(row: dict[str, Any]) -> dict[str, Any]:
        try:
            out = await ascore_answer(str(row["answer"]), str(row.get("prompt") or ""), **settings)
        except Exception as exc:  # one failing answer must not stop the folder
            from factdebate.tools.models.llm import redact

            message = redact(f"{type(exc).__name__}: {exc}")[:2000]
            return {
                "id": row["id"],
                "failed": True,
                "errors": [{"kind": "exception", "message": message}],
            }
        scores = {k: v for k, v in (out.get("scores") or {}).items() if not isinstance(v, list)}
        return {
            "id": row["id"],
            "verdict": out.get("verdict"),
            "claims": [
                {"claim": c.get("claim"), "verdict": c.get("verdict")}
                for c in out.get("claims", [])
            ],
            "scores": scores,
            "errors": out.get("errors") or [],
            "cost": out.get("cost") or {},
        }

    todo = [r for r in answers if str(r["id"]) not in done]
    new = await _run_all(todo, one, path, concurrency, len(done), len(answers), progress)
    run = read_run(answer_dir)
    summary = _summary(str(run.get("model") or answer_dir.name), [*kept, *new], len(answers))
    write_atomic(answer_dir / SUMMARY_FILE, json.dumps(summary, indent=2) + "\n")
    return summary


def _summary(model: str, rows: Sequence[dict[str, Any]], n_answers: int) -> dict[str, Any]:
    """Means over scored answers; precision over answers that had at least one judged claim."""
    scored = [r for r in rows if not r.get("failed")]

    def mean(key: str) -> float | None:
        values = [r["scores"][key] for r in scored if isinstance(r["scores"].get(key), int | float)]
        return sum(values) / len(values) if values else None

    return {
        "model": model,
        "answers": n_answers,
        "scored": len(scored),
        "failed": len(rows) - len(scored),
        "claims_per_answer": mean("n_claims"),
        "true_per_answer": mean("n_true"),
        "false_per_answer": mean("n_false"),
        "precision": mean("precision"),
        "f1_at_gamma": mean("f1_at_gamma"),
        "answers_with_errors": sum(bool(r.get("errors")) for r in rows),
    }


def render_factuality(summaries: Sequence[dict[str, Any]]) -> str:
    """A markdown table comparing models by the factuality of their answers."""

    def fmt(value: Any) -> str:
        return "-" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)

    head = "| model | answers | scored | claims/answer | true/answer | false/answer "
    lines = [head + "| precision | F1@γ |", "|" + "---|" * 8]
    keys = (
        "model",
        "answers",
        "scored",
        "claims_per_answer",
        "true_per_answer",
        "false_per_answer",
        "precision",
        "f1_at_gamma",
    )
    lines += ["| " + " | ".join(fmt(s.get(k)) for k in keys) + " |" for s in summaries]
    return "\n".join(lines) + "\n"
