"""Question-answering input: check the question, take the caller's documents or retrieve them."""

from __future__ import annotations

import uuid
from typing import Any

from langgraph.runtime import Runtime

from factdebate.nodes.claims import InputError, clean_claim, given_documents
from factdebate.nodes.common import settings
from factdebate.nodes.madam_rag.context import MadamContext
from factdebate.nodes.madam_rag.state import MadamState
from factdebate.nodes.retrieval import retrieve_or_record
from factdebate.nodes.state import decided
from factdebate.tools.core.records import ErrorRecord, Evidence


def clean_question(text: object, max_chars: int) -> str:
    """Strip and check the question; raise InputError naming the problem."""
    try:
        return clean_claim(text, max_chars)
    except InputError as exc:
        raise InputError(str(exc).replace("claim", "question")) from None


async def _documents(
    state: MadamState, ctx: MadamContext, question: str
) -> tuple[list[Evidence], list[ErrorRecord]]:
    raw = state.get("documents")
    errors: list[ErrorRecord] = []
    if raw:
        docs = given_documents(raw)
    else:  # a backend fault is recorded; the run then ends with no answer
        docs, errors = await retrieve_or_record(
            ctx, "rag", question, agent="retriever", round_no=0, claim=question
        )
    if len(docs) > ctx.max_documents:
        errors.append(
            ErrorRecord(
                round=0,
                agent="retriever",
                stage="documents",
                kind="documents_dropped",
                message=f"{len(docs)} documents given; kept the first {ctx.max_documents} "
                "(max_documents)",
            )
        )
        docs = docs[: ctx.max_documents]
    return docs, errors


async def _prepare(state: MadamState, ctx: MadamContext, use_documents: bool) -> dict[str, Any]:
    question = clean_question(state.get("question"), ctx.max_claim_chars)
    update: dict[str, Any] = {
        "question": question,
        "round": 1,
        "rounds": 0,
        "run_key": uuid.uuid4().hex,
        "last_answers": None,
        "last_explanation": "",
        "documents": [],
    }
    if not use_documents:
        return update
    docs, errors = await _documents(state, ctx, question)
    update.update(documents=docs, errors=errors)
    if not docs:
        update.update(
            answers=[],
            verdict=None,
            stop_reason="no_documents",
            justification="No documents were given or retrieved.",
            decided_by=decided(
                "prepare", 0, "no_documents", "No documents were given or retrieved."
            ),
        )
    return update


async def prepare(state: MadamState, runtime: Runtime[MadamContext]) -> dict[str, Any]:
    """Check the question and settings, take or retrieve the documents, open round 1."""
    return await _prepare(state, settings(runtime, MadamContext), use_documents=True)


async def prepare_question_only(
    state: MadamState, runtime: Runtime[MadamContext]
) -> dict[str, Any]:
    """Check the question and settings; never read or retrieve documents (no-RAG)."""
    return await _prepare(state, settings(runtime, MadamContext), use_documents=False)
