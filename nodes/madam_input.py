"""Question-answering input: check the question, take the caller's documents or retrieve them."""

from __future__ import annotations

import uuid
from typing import Any

from langgraph.runtime import Runtime

from graphs.madam_state import MadamContext, MadamState
from graphs.state import ErrorRecord
from nodes.claims import InputError, clean_claim, given_documents
from nodes.common import settings
from tools.evidence import Evidence
from tools.llm import redact
from tools.retrieval import retrieve


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
    if raw:
        docs = given_documents(raw)
    else:
        try:
            docs = await retrieve(
                "rag",
                question,
                k=ctx.top_k,
                collection=ctx.collection,
                milvus_uri=ctx.milvus_uri,
                timeout=ctx.call_timeout_s,
            )
        except Exception as exc:  # any backend fault is recorded; the run ends with no answer
            return [], [
                ErrorRecord(
                    round=0,
                    agent="retriever",
                    stage="retrieve",
                    kind="tool_error",
                    message=redact(f"{type(exc).__name__}: {exc}"),
                )
            ]
    errors: list[ErrorRecord] = []
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
