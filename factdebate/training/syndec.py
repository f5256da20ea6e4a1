"""SynDeC: synthetic debate data from DebateCV runs on labelled claims, plus SFT and DPO exports.

``run_syndec`` debates each claim with DebateCV; when the moderator's verdict is a label other
than the gold one, a Corrector writes the justification that leads to the gold verdict.
Every finished claim is appended as one line to ``syndec.jsonl`` (flushed and synced), so a
killed run restarts where it stopped: ids already written are skipped and a truncated last
line is cut off. ``sft.jsonl`` (correct verdicts) and ``dpo.jsonl`` (chosen = gold verdict
with the corrected justification, rejected = the wrong prediction) are then rebuilt from
``syndec.jsonl`` as a whole, so they never hold duplicates. Their prompts are the messages of
the moderator's last call, rebuilt by the moderator node's own prompt functions, so a trained
moderator is trained on exactly what it is asked when it runs.

Runs whose moderator gave no valid verdict (``predicted_verdict`` null) are kept in
``syndec.jsonl`` but reach neither the Corrector nor the training files: there is no labelled
prediction to prefer the gold answer over.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from langchain_core.messages import convert_to_openai_messages
from pydantic import BaseModel

from factdebate.api import check_concurrency
from factdebate.datasets import ClaimItem
from factdebate.graphs.debate_cv import graph
from factdebate.nodes.common import model_for
from factdebate.nodes.debate_cv.context import DebateCVContext
from factdebate.nodes.debate_cv.debate_turn import render_dialogue
from factdebate.nodes.debate_cv.moderator import (
    CorrectedJustification,
    FinalVerdict,
    ModeratorDecision,
    ask_with_retry,
    final_prompt,
    render_notes,
    round_prompt,
)
from factdebate.nodes.debate_cv.state import DebateCVState, EvidenceClaimInput, ModeratorNote
from factdebate.nodes.evidence_block import render_evidence
from factdebate.prompts import debate_cv as prompts
from factdebate.runs.folder import RunFolderError, append_rows, read_rows, rows_lock, write_rows
from factdebate.tools.core.errors import FactDebateError
from factdebate.tools.core.records import ErrorRecord, RoleCost, add_costs
from factdebate.tools.models.llm import redact, schema_prompt

log = logging.getLogger(__name__)

SYNDEC_FILE = "syndec.jsonl"
SFT_FILE = "sft.jsonl"
DPO_FILE = "dpo.jsonl"


class SynDeCError(FactDebateError, RuntimeError):
    """An output file that cannot be resumed safely (corrupt line before the last one)."""


@dataclass
class SynDeCSummary:
    """What one ``run_syndec`` call did."""

    out_dir: Path
    new: int = 0
    skipped: int = 0
    correct: int = 0
    corrected: int = 0
    uncorrected: int = 0
    unparsed: int = 0
    sft: int = 0
    dpo: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)


def completed_ids(path: Path) -> set[str]:
    """Ids already in a SynDeC file; a truncated last line (no newline) is cut off.

    Records are written as one line ending in a newline, so only the text after the last
    newline can be the remains of a killed write.

    Raises:
        SynDeCError: If a newline-terminated line is not a JSON object with an ``id``.
    """
    try:
        return {str(row["id"]) for row in read_rows(path, strict=True, repair=True)}
    except RunFolderError as exc:
        raise SynDeCError(str(exc)) from exc


def load_claims(
    dataset: str, folder: Path | None, split: str = "dev", file: Path | None = None
) -> list[ClaimItem]:
    """Labelled claims to debate: a dataset's default claims, another AVeriTeC split, or a file.

    The paper builds SynDeC from the AVeriTeC train split (not shipped here): pass
    ``split="train"`` with a datasets folder holding ``averitec/train.json``, or the file.

    Raises:
        DatasetError: An unknown dataset, a split or file asked of a dataset without them,
            or a missing or malformed file.
    """
    from factdebate.datasets import DATASETS, DatasetError, load_averitec

    if dataset not in DATASETS:
        raise DatasetError(f"unknown dataset {dataset!r}; choose one of {sorted(DATASETS)}")
    if dataset == "averitec":
        return load_averitec(file or folder, split).items
    if split != "dev" or file is not None:
        raise DatasetError(f"--split and --file are only for averitec, not {dataset!r}")
    return DATASETS[dataset].load(folder).items


def moderator_call(
    rec: dict[str, Any], ctx: DebateCVContext
) -> tuple[list[dict[str, Any]], type[BaseModel], dict[str, Any]] | None:
    """Rebuild the moderator's last call of a SynDeC record, as a post-trained model gets it.

    The paper trains the moderator on its answer in the debate's final round. That answer
    came from the end-of-round question (the moderator stopped early) or from the
    round-limit question; the state it saw is the finished state minus what that call
    added (its note and its turn). The prompt is built by the node's own function and framed
    as ``prompt``-mode structured output frames it (``hf-local:`` moderators use that mode),
    after the date message every agent gets, so training and inference see the same text.

    Returns:
        Chat messages (system date, user prompt), the answer's schema, and the answer the
        moderator gave; None for a record without a final moderator answer.
    """
    stop = rec.get("stop_reason")
    notes = list(rec.get("moderator_notes") or [])
    turns = [t for t in rec.get("debate") or [] if t.get("agent") == "moderator"]
    if stop not in ("moderator", "round_limit") or not notes or not turns:
        return None
    try:
        answer = json.loads(turns[-1].get("answer", ""))
    except ValueError:
        return None
    state = DebateCVState(
        claim=rec["claim"],
        evidence=rec.get("evidence") or [],
        transcript=rec.get("debate") or [],
        moderator_notes=notes[:-1],
        round=int(notes[-1].get("round") or rec.get("rounds") or 1),
    )
    schema: type[BaseModel]
    if stop == "moderator":
        schema, prompt = ModeratorDecision, round_prompt(state, ctx)
    else:
        schema, prompt = FinalVerdict, final_prompt(state, ctx)
    dated = replace(ctx, current_date=str(rec.get("today") or ctx.today()))
    site = dated.site(role="moderator", agent="moderator", stage="final", round_no=state["round"])
    messages = convert_to_openai_messages(site.messages(schema_prompt(prompt, schema)))
    return messages, schema, answer


def answer_text(schema: type[BaseModel], answer: dict[str, Any], **change: Any) -> str:
    """The moderator's answer as the JSON text a trained model should write (checked)."""
    return schema.model_validate({**answer, **change}).model_dump_json()


async def correct(
    record: dict[str, Any], ctx: DebateCVContext
) -> tuple[str | None, dict[str, RoleCost], list[ErrorRecord]]:
    """Ask the Corrector for the justification leading to the gold verdict."""
    prompt = prompts.CORRECTOR.format(
        gold=record["gold_verdict"],
        evidence_rules=prompts.EVIDENCE_RULES,
        claim=record["claim"],
        evidence=render_evidence(record["evidence"], ctx.max_doc_chars),
        debate=render_dialogue(record["debate"], ctx.max_doc_chars),
        notes=render_notes(record.get("moderator_notes", []), ctx.max_doc_chars),
    )
    model = await model_for(ctx, "judge")
    parsed, cost, errors, _ = await ask_with_retry(
        model,
        prompt,
        CorrectedJustification,
        attempts=ctx.moderator_retries + 1,
        site=ctx.site(role="corrector", agent="corrector", stage="correct", round_no=0),
    )
    return (parsed.justification if parsed else None), cost, errors


async def synthesize(
    item: ClaimItem,
    ctx: DebateCVContext,
    corrector_ctx: DebateCVContext,
    use_gold_evidence: bool = True,
) -> dict[str, Any]:
    """Debate one labelled claim and, if the verdict is a wrong label, correct it."""
    inputs = EvidenceClaimInput(claim=item.claim)
    if use_gold_evidence and item.evidence:
        inputs["evidence"] = item.evidence
    out = await graph.ainvoke(inputs, context=ctx)
    notes: list[ModeratorNote] = out.get("moderator_notes", [])
    record: dict[str, Any] = {
        "id": item.id,
        "claim": item.claim,
        "evidence": out.get("evidence", []),
        "debate": out.get("transcript", []),
        "moderator_notes": notes,
        "gold_verdict": item.label,
        "predicted_verdict": out.get("verdict"),
        "predicted_justification": out.get("justification", ""),
        "corrected_justification": None,
        "stop_reason": out.get("stop_reason"),
        "today": ctx.today(),
        "rounds": out.get("rounds"),
        "cost": out.get("cost", {}),
        "errors": out.get("errors", []),
    }
    predicted = record["predicted_verdict"]
    if predicted is None:
        record["status"] = "unparsed"
    elif predicted == item.label:
        record["status"] = "correct"
    else:
        fixed, cost, errors = await correct(record, corrector_ctx)
        record["corrected_justification"] = fixed
        record["cost"] = add_costs(record["cost"], cost)
        record["errors"] = record["errors"] + errors
        record["status"] = "corrected" if fixed is not None else "uncorrected"
    return record


def read_records(path: Path) -> list[dict[str, Any]]:
    """All complete records of a SynDeC file, first occurrence of each id kept."""
    return read_rows(path)


def export_training(out_dir: str | Path, ctx: DebateCVContext | None = None) -> tuple[int, int]:
    """Rebuild ``sft.jsonl`` and ``dpo.jsonl`` from ``syndec.jsonl``; returns their sizes.

    Each row is the moderator's last call (see ``moderator_call``) in chat-message form.
    SFT rows: ``{"id", "messages": [system, user, assistant]}`` for correct verdicts. DPO
    rows: ``{"id", "prompt": [system, user], "chosen": [assistant], "rejected": [assistant]}``
    (TRL's conversational preference format) for wrong verdicts with a corrected
    justification: chosen is the same answer with the gold verdict and that justification.
    ``ctx`` must hold the settings of the run (``max_doc_chars``, ``max_rounds``).
    """
    ctx = ctx or DebateCVContext()
    out = Path(out_dir)
    sft: list[dict[str, Any]] = []
    dpo: list[dict[str, Any]] = []
    for rec in read_records(out / SYNDEC_FILE):
        status = rec.get("status")
        call = moderator_call(rec, ctx) if status in ("correct", "corrected") else None
        if call is None:
            continue
        messages, schema, answer = call
        try:
            given = answer_text(schema, answer)
            gold = answer_text(
                schema,
                answer,
                verdict=rec["gold_verdict"],
                justification=rec.get("corrected_justification") or "",
            )
        except ValueError as exc:
            log.warning("record %s: moderator answer not usable for training (%s)", rec["id"], exc)
            continue
        if status == "correct":
            sft.append(
                {"id": rec["id"], "messages": [*messages, {"role": "assistant", "content": given}]}
            )
        elif rec.get("corrected_justification"):
            dpo.append(
                {
                    "id": rec["id"],
                    "prompt": messages,
                    "chosen": [{"role": "assistant", "content": gold}],
                    "rejected": [{"role": "assistant", "content": given}],
                }
            )
    write_rows(out / SFT_FILE, sft)
    write_rows(out / DPO_FILE, dpo)
    return len(sft), len(dpo)


async def run_syndec(
    items: Iterable[ClaimItem],
    out_dir: str | Path,
    *,
    context: DebateCVContext | None = None,
    corrector_model: str | None = None,
    use_gold_evidence: bool = True,
    concurrency: int = 1,
) -> SynDeCSummary:
    """Build (or resume) a SynDeC dataset in ``out_dir`` and export SFT/DPO files.

    Args:
        items: Labelled claims (e.g. ``load_averitec().items``); ids must be unique.
        out_dir: Output folder (created); holds syndec.jsonl, sft.jsonl, dpo.jsonl.
        context: DebateCV settings (models per role, rounds...); defaults otherwise.
        corrector_model: Model of the Corrector; default = the moderator's (judge) model.
        use_gold_evidence: Debate on the items' evidence; False = retrieve per claim.
        concurrency: Claims debated at once.

    Returns:
        Counts of new, skipped, correct, corrected, unparsed and failed claims and the
        sizes of the exports. A claim whose run raised is not written (retried next time).
    """
    check_concurrency(concurrency)
    ctx = context or DebateCVContext()
    corrector_ctx = replace(ctx, judge_model=corrector_model) if corrector_model else ctx
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / SYNDEC_FILE
    with rows_lock(path, wait=False):  # the repair rewrites: only as the file's one writer
        done = completed_ids(path)
    summary = SynDeCSummary(out_dir=out)
    todo: list[ClaimItem] = []
    for item in items:
        if item.id in done:
            summary.skipped += 1
        else:
            done.add(item.id)
            todo.append(item)
    gate = asyncio.Semaphore(concurrency)

    with append_rows(path, fsync=True) as sink:

        async def one(item: ClaimItem) -> None:
            async with gate:
                try:
                    record = await synthesize(item, ctx, corrector_ctx, use_gold_evidence)
                except Exception as exc:  # one bad claim must not end the whole run
                    log.warning("claim %s failed: %s", item.id, exc)
                    summary.failed.append((item.id, redact(f"{type(exc).__name__}: {exc}")))
                    return
            sink.add(record)
            summary.new += 1
            status = record["status"]
            if status in ("correct", "corrected", "uncorrected", "unparsed"):
                setattr(summary, status, getattr(summary, status) + 1)

        await asyncio.gather(*(one(item) for item in todo))
    summary.sft, summary.dpo = export_training(out, ctx)
    return summary
