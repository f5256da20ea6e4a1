"""Programmatic entry point: verify a claim with any registered method, get the contract."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import fields
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from factdebate.graphs.registry import CONTRACT_KEYS, MethodSpec, resolve
from factdebate.nodes.claims import InputError, clean_claim
from factdebate.nodes.review import is_review, proposal, review_wanted
from factdebate.runs.checkpoints import check_checkpoint as check_checkpoint
from factdebate.runs.checkpoints import checkpoint_path as checkpoint_path
from factdebate.runs.checkpoints import open_checkpointer, recorded_metadata, thread_lease
from factdebate.tools.core.errors import SettingsError
from factdebate.tools.core.files import check_target
from factdebate.tools.core.records import Evidence
from factdebate.tools.core.secrets import redact_deep
from factdebate.tools.models.providers import is_remote, register_model, resolve_model

MODEL_FIELDS = ("model", "debater_model", "judge_model", "scorer_model")
MAX_CONCURRENCY = 64  # items in flight in one bench or SynDeC run
METHOD_KEY = "factdebate_method"
"""Checkpoint metadata naming the method of a stored thread (review, history and replay)."""
EVIDENCE_KEY = "factdebate_evidence"
"""Checkpoint metadata: a thread's evidence log (``log``) and the snapshot it read, as JSON text."""


def check_concurrency(concurrency: int) -> None:
    """Refuse a batch concurrency outside 1..MAX_CONCURRENCY (ValueError, one line)."""
    if isinstance(concurrency, bool) or not isinstance(concurrency, int):
        raise SettingsError(f"concurrency must be an integer, got {concurrency!r}")
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        raise SettingsError(f"concurrency must be within 1..{MAX_CONCURRENCY}, got {concurrency}")


def _spec(value: Any) -> Any:
    """Model objects are registered under a name so settings stay plain strings."""
    if isinstance(value, BaseChatModel):
        return register_model(f"object:{type(value).__name__}:{id(value)}", value)
    return value


def build_context(method: str | MethodSpec, **settings: Any) -> Any:
    """The method's settings object; unknown names and bad values raise ValueError."""
    spec = resolve(method)
    given = {k: _spec(v) for k, v in settings.items() if v is not None}
    return spec.context_class().from_settings(given)


def check_models(context: Any) -> None:
    """Load every role's model now, so a bad model name fails before the debate starts."""
    for role in ("debater", "judge", "scorer"):
        resolve_model(
            context.model_for(role),
            temperature=context.temperature,
            max_tokens=context.max_output_tokens,
            timeout=context.call_timeout_s,
            top_p=context.top_p,
        )


def check_reachable(context: Any) -> int:
    """Send each distinct remote model of the run one tiny call; refuse one that cannot be reached.

    Embedded models and model objects are skipped. A refused connection, an unknown host,
    refused credentials (401/403) or an unknown model (404) raise at once; rate limits, 5xx
    and slow answers let the run go on (its calls retry them as usual).

    Returns the number of probe requests sent (each one a request the provider bills).

    Raises:
        ModelUnreachableError: a role's model cannot be reached (one line, with the cause).
    """
    from factdebate.tools.models.reach import PROBE_TIMEOUT_S, probe

    specs = [context.model_for(role) for role in ("debater", "judge", "scorer")]
    for name in ("juror_models", "expert_models"):
        specs += list(getattr(context, name, None) or [])
    sent = 0
    for spec in dict.fromkeys(specs):  # each model once, in role order
        if not is_remote(spec):
            continue
        model = resolve_model(
            spec,
            temperature=context.temperature,
            max_tokens=context.max_output_tokens,
            timeout=context.call_timeout_s,
            top_p=context.top_p,
        )
        sent += 1
        probe(spec, model, min(PROBE_TIMEOUT_S, float(context.call_timeout_s)))
    return sent


def input_keys(graph: Any) -> set[str]:
    """Keys of a compiled graph's input schema (a TypedDict)."""
    schema = getattr(getattr(graph, "builder", None), "input_schema", None)
    keys = getattr(schema, "__required_keys__", set()) | getattr(schema, "__optional_keys__", set())
    return {str(k) for k in keys}


def make_input(
    method: str | MethodSpec,
    text: str,
    context: Any,
    documents: list[Evidence] | None = None,
    graph: Any = None,
) -> dict[str, Any]:
    """The graph input for a claim or question, with caller-supplied documents if any.

    ``graph`` is the method's compiled graph when the caller has it (loaded otherwise, only
    to see whether it takes documents).

    Raises:
        InputError: bad text, an answer-scoring method (use ``score_answer``), or documents
            given to a method that retrieves its own.
    """
    spec = resolve(method)
    if spec.input_kind == "answer":
        raise InputError(f"{spec.name} scores long answers: use `factdebate score-answer`")
    key = "claim" if spec.input_kind == "claim" else "question"
    payload: dict[str, Any] = {key: clean_claim(text, context.max_claim_chars)}
    if documents is not None:
        keys = input_keys(graph if graph is not None else spec.load_graph())
        doc_key = next((k for k in ("documents", "evidence") if k in keys), None)
        if doc_key is None:
            raise InputError(f"{spec.name} retrieves its own evidence and takes no documents")
        payload[doc_key] = documents
    return payload


def output_keys(builder: Any) -> set[str]:
    """Keys of a graph builder's output schema (a TypedDict)."""
    schema = getattr(builder, "output_schema", None)
    keys = getattr(schema, "__required_keys__", set()) | getattr(schema, "__optional_keys__", set())
    return {str(k) for k in keys}


async def stream_events(
    graph: Any, payload: Any, context: Any, **kwargs: Any
) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """Run ``graph`` on ``payload`` (an input, None to resume, or a resume ``Command``).

    Yields ``(node, update)`` (secrets redacted), then ``("result", contract)``, or
    ``("awaiting_review", proposal)`` when the run paused for a person's review.
    """
    state: dict[str, Any] = {}
    request: dict[str, Any] | None = None
    async for chunk in graph.astream(
        payload, context=context, stream_mode=["updates", "values"], **kwargs
    ):
        mode, data = chunk
        if mode == "updates":
            for node, update in data.items():
                if node == "__interrupt__":  # the review step waits for a person
                    request = next((i.value for i in update if is_review(i.value)), request)
                    continue
                yield node, redact_deep(update or {})
        else:
            state = data
    if request is not None:
        yield "awaiting_review", proposal(request, state)
        return
    yield "result", contract(state)


async def astream_verify(
    text: str,
    method: str | MethodSpec = "tool-mad",
    documents: list[Evidence] | None = None,
    *,
    checkpoint: str | None = None,
    thread: str | None = None,
    before_run: Callable[[], object] | None = None,
    evidence_log: str | Path | None = None,
    **settings: Any,
) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """Yield ``(node name, update)`` while the debate runs, then ``("result", contract)``.

    Every retrieval and search call is recorded; with ``evidence_log`` (a folder) the log is
    kept in ``evidence_log/evidence``. With the setting ``evidence_from`` every call is
    answered from that frozen evidence instead (``evidence_scope``, ``evidence_miss``).

    ``documents`` replaces retrieval for methods that accept given evidence (MADAM-RAG,
    DebateCV); ``settings`` are fields of the method's ``Context``.

    With ``checkpoint`` (``sqlite:PATH`` or ``postgresql://...``) and ``thread`` every finished
    step is saved under that thread id. Running again with the same thread resumes an
    interrupted run from its last saved step (finished steps are not recomputed), or returns
    the stored result of a finished one; either way a ``("checkpoint", {"thread", "status"})``
    event comes first, status ``new``, ``resumed`` or ``finished``. Settings are not stored:
    pass the same ones.

    ``before_run`` (a blocking check such as ``check_reachable``) is called, in a worker
    thread, just before the graph runs: after every refusal that needs no model (a thread
    another process is running, a thread holding another claim or method), and not at all
    for a finished thread, so a refused run costs no call to a provider.

    Raises:
        InputError: bad text, or a thread that holds a different claim.
        ValueError: bad settings, a bad checkpoint spec, or only one of checkpoint/thread.
        EvidenceError: ``evidence_from`` names no evidence this version can read.
    """
    from factdebate.evidence import evidence_session, open_replay
    from factdebate.tools.core.evidence_hook import item_scope

    spec = resolve(method)
    replay = open_replay(build_context(spec, **settings))  # a bad snapshot: one line, first
    folder = None if evidence_log is None else Path(evidence_log).expanduser()
    with evidence_session(settings, folder, None, replay), item_scope(thread or "", text.strip()):
        # the checkpoint's run record names the log and the frozen evidence the run read
        record = {
            "log": "" if folder is None else str(folder / "evidence"),
            "read": {} if replay is None else replay[1],
        }
        async for event in _astream_verify(
            text, spec, documents, checkpoint, thread, before_run, settings, record
        ):
            yield event


async def _astream_verify(
    text: str,
    spec: MethodSpec,
    documents: list[Evidence] | None,
    checkpoint: str | None,
    thread: str | None,
    before_run: Callable[[], object] | None,
    settings: dict[str, Any],
    evidence: dict[str, Any],
) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """``astream_verify`` inside its evidence log (see there)."""
    graph = spec.load_graph()
    context = build_context(spec, **settings)
    payload = make_input(spec, text, context, documents, graph)
    if checkpoint is None and thread is None:
        if review_wanted(context):
            raise SettingsError(
                "review needs --checkpoint and --thread, to resume after the review"
            )
        if before_run is not None:
            await asyncio.to_thread(before_run)
        async for event in stream_events(graph, payload, context):
            yield event
        return
    if not checkpoint or not thread:
        raise SettingsError("--thread and --checkpoint go together: give both or neither")
    builder = graph.builder
    # one runner per stored thread: a second process (or task) is refused, never forks it
    async with open_checkpointer(checkpoint) as saver, thread_lease(saver, checkpoint, thread):
        durable = builder.compile(checkpointer=saver, name=spec.name)
        config: dict[str, Any] = {
            "configurable": {"thread_id": thread},
            "metadata": {METHOD_KEY: spec.name, EVIDENCE_KEY: json.dumps(evidence)},
        }
        snapshot = await durable.aget_state(config)
        stored = dict(snapshot.values or {})
        recorded = await recorded_metadata(saver, thread, METHOD_KEY) if stored else None
        if recorded not in (None, spec.name):
            raise InputError(
                f"thread {thread!r} was run with method {recorded}, not {spec.name}: "
                f"give --method {recorded}"
            )
        key = "claim" if "claim" in payload else "question"
        if stored and stored.get(key) not in (None, payload[key]):
            raise InputError(
                f"thread {thread!r} holds a different {key}: {str(stored[key])[:80]!r}"
            )
        if stored and not snapshot.next:
            yield "checkpoint", {"thread": thread, "status": "finished"}
            keys = output_keys(builder)
            yield "result", contract({k: v for k, v in stored.items() if not keys or k in keys})
            return
        resume = bool(stored) and bool(snapshot.next)
        if before_run is not None:  # the lease is held: a refused run has cost nothing
            await asyncio.to_thread(before_run)
        yield "checkpoint", {"thread": thread, "status": "resumed" if resume else "new"}
        async for event in stream_events(
            durable, None if resume else payload, context, config=config, durability="sync"
        ):
            yield event


async def averify(
    text: str,
    method: str = "tool-mad",
    documents: list[Evidence] | None = None,
    *,
    checkpoint: str | None = None,
    thread: str | None = None,
    html: str | Path | None = None,
    evidence_log: str | Path | None = None,
    **settings: Any,
) -> dict[str, Any]:
    """Verify ``text`` and return the result contract (see ``astream_verify``).

    With ``html`` the debate is also written there as one self-contained page
    (``save_debate_page``). With ``review=True`` (and ``checkpoint`` and ``thread``) the run
    stops before its verdict is final and returns ``{"status": "awaiting_review", "thread",
    "proposed"}``; ``factdebate.review.resume.aresume`` finishes it.
    """
    if html is not None:
        check_page_path(html)
    spec = resolve(method)
    result: dict[str, Any] = {}
    started = time.perf_counter()
    async for node, update in astream_verify(
        text,
        spec,
        documents,
        checkpoint=checkpoint,
        thread=thread,
        evidence_log=evidence_log,
        **settings,
    ):
        if node == "result":
            result = update
        elif node == "awaiting_review":
            return {"status": "awaiting_review", "thread": thread, "proposed": update}
    if html is not None:
        elapsed = time.perf_counter() - started
        await asyncio.to_thread(
            lambda: save_debate_page(html, result, text, spec, elapsed_s=elapsed, **settings)
        )
    return result


def check_page_path(path: str | Path) -> None:
    """Fail before a run when its page could not be written (a folder, or no folder to write).

    Raises:
        ValueError: ``path`` is a folder, or its folder cannot be created.
    """
    target = Path(path).expanduser()
    if target.is_dir():
        raise SettingsError(f"--html {path}: is a folder; give a file name such as debate.html")
    check_target(target, "--html")  # a device, pipe or symlink is never written through
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SettingsError(f"--html {path}: cannot create its folder ({exc.strerror})") from exc


def save_debate_page(
    path: str | Path,
    result: dict[str, Any],
    text: str,
    method: str | MethodSpec,
    *,
    elapsed_s: float | None = None,
    **settings: Any,
) -> Path:
    """Write the debate page of ``result`` to ``path`` (atomically) and return the path.

    ``settings`` are the run's (the page shows them all); ``elapsed_s`` the run's seconds.

    Raises:
        ValueError: bad settings, or a path that cannot be written.
    """
    from factdebate.pages.debate import write_debate_page

    spec = resolve(method)
    context = build_context(spec, **settings)
    shown = {f.name: getattr(context, f.name) for f in fields(context)}
    return write_debate_page(path, result, " ".join(text.split()), spec.name, shown, elapsed_s)


def verify(
    text: str,
    method: str = "tool-mad",
    documents: list[Evidence] | None = None,
    *,
    checkpoint: str | None = None,
    thread: str | None = None,
    html: str | Path | None = None,
    evidence_log: str | Path | None = None,
    **settings: Any,
) -> dict[str, Any]:
    """Synchronous ``averify`` (for scripts and notebooks without a running event loop)."""
    return asyncio.run(
        averify(
            text,
            method,
            documents,
            checkpoint=checkpoint,
            thread=thread,
            html=html,
            evidence_log=evidence_log,
            **settings,
        )
    )


METHOD_KEYS = (  # documented extras of some methods (docs/result-contract.md)
    "answers",  # MADAM-RAG and its baselines
    "documents",  # MADAM-RAG and its baselines
    "evidence",  # DebateCV, RAG-CoT, Majority, Cooperation
    "moderator_notes",  # DebateCV
    "claims",  # MAD-Fact
    "split_without_model",  # MAD-Fact
    "dropped",  # MAD-Fact
    "scores",  # MAD-Fact
    "golden",  # MAD-Fact
    "review",  # any method run with review: the person's decision (nodes/review.py)
    "proposed_verdict",  # any method run with review: the verdict held for the person
    "screen",  # the escalation methods: the screen's labels, agreement, why it escalated
)
STREAM_ONLY_KEYS = (  # streamed while a run goes on (docs/streaming.md), never in the contract
    "drafts",
    "pending_query",
    "knowledge",
    "references",
    "claim_texts",
    "reference_claims",
    "claim_results",
)


def contract(state: dict[str, Any]) -> dict[str, Any]:
    """The result contract of a final state: the shared keys plus documented method extras.

    Anything else a graph keeps (round counters, run keys, drafts) is left out; each
    transcript turn gains ``reasoning``, its answer without the label line (for display).
    """
    from factdebate.nodes.labelled import without_label
    from factdebate.nodes.state import fallback_decided_by

    out = {key: state.get(key) for key in CONTRACT_KEYS}
    out["transcript"] = [
        {**turn, "reasoning": without_label(str(turn.get("answer") or ""))}
        for turn in out["transcript"] or []
    ]
    out["errors"] = out["errors"] or []
    out["cost"] = out["cost"] or {}
    out["decided_by"] = out["decided_by"] or fallback_decided_by(state)
    out.update({k: state[k] for k in METHOD_KEYS if k in state})
    return dict(redact_deep(out))


os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
