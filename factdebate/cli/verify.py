"""`factdebate verify`: check one claim (or answer a question) and show the debate."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from factdebate.cli.common import (
    EVIDENCE_FROM_HELP,
    MODEL_HELP,
    SET_HELP,
    VERIFY_METHOD_HELP,
    checked_settings,
)
from factdebate.cli.console import err, fail, out, run_coroutine, save_page
from factdebate.cli.progress import timed_run
from factdebate.cli.show import print_turn, show_final, without_given
from factdebate.tools.core.errors import FactDebateError, SettingsError
from factdebate.tools.core.secrets import redact
from factdebate.tools.websearch.cache import describe, tallying


def verify(
    claim: Annotated[str, typer.Argument(help="The claim to check (or '-' to read stdin).")],
    method: Annotated[str, typer.Option(help=VERIFY_METHOD_HELP)] = "tool-mad",
    model: Annotated[str | None, typer.Option(help=MODEL_HELP)] = None,
    debater_model: Annotated[str | None, typer.Option(help="Model of the debaters.")] = None,
    judge_model: Annotated[str | None, typer.Option(help="Model of the judge/moderator.")] = None,
    rounds: Annotated[int | None, typer.Option(help="Round limit T.")] = None,
    collection: Annotated[str | None, typer.Option(help="Index to retrieve from.")] = None,
    set_: Annotated[list[str] | None, typer.Option("--set", help=SET_HELP)] = None,
    documents: Annotated[
        Path | None,
        typer.Option(help="JSONL (id, title, text) of documents to use instead of retrieval."),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object, nothing else.")
    ] = False,
    thread: Annotated[
        str | None,
        typer.Option(help="Run id to save under --checkpoint; reuse it to resume or re-show."),
    ] = None,
    checkpoint: Annotated[
        str | None,
        typer.Option(
            help="Where steps are saved for resuming: sqlite:runs/checkpoints.db or "
            "postgresql://USER:PASSWORD@HOST:PORT/DB."
        ),
    ] = None,
    html: Annotated[
        Path | None,
        typer.Option(help="Also write the debate as one self-contained HTML page here."),
    ] = None,
    review: Annotated[
        bool, typer.Option("--review", help="Pause before the verdict is final for your review.")
    ] = False,
    approve: Annotated[
        bool, typer.Option("--approve", help="Approve the verdict of a run awaiting review.")
    ] = False,
    verdict: Annotated[
        str | None, typer.Option(help="Overrule a run awaiting review with this verdict.")
    ] = None,
    note: Annotated[str, typer.Option(help="The reviewer's note (with --approve/--verdict).")] = "",
    evidence_from: Annotated[Path | None, typer.Option(help=EVIDENCE_FROM_HELP)] = None,
    evidence_log: Annotated[
        Path | None,
        typer.Option(
            help="Keep what every retrieval and search call returned in DIR/evidence "
            "(Parquet; replay it with --evidence-from DIR)."
        ),
    ] = None,
) -> None:
    """Verify a claim (or answer a question with MADAM-RAG) and show the debate."""
    claim = _read_claim(claim)
    flags = {
        "model": model,
        "debater_model": debater_model,
        "judge_model": judge_model,
        "max_rounds": rounds,
        "collection": collection,
        "evidence_from": None if evidence_from is None else str(evidence_from),
    }
    settings = checked_settings(method, "verify", set_, flags, claim)  # before the heavy imports
    if evidence_log is not None:  # a device or a pipe there would throw every paid answer away
        from factdebate.evidence.session import check_log_folder
        from factdebate.evidence.store import LOG_DIR

        try:
            check_log_folder(evidence_log.expanduser() / LOG_DIR)
        except FactDebateError as exc:
            fail(str(exc))
    if review or approve or verdict is not None:
        settings["review"] = True
    run = _prepare(claim, method, settings, documents, thread, checkpoint, html, approve, verdict)
    if approve or verdict is not None:  # a later call finishing a run paused for review
        from factdebate.cli.review import resume_run

        decision = {"approve": True} if approve else {"verdict": verdict}
        result = resume_run(
            str(run.thread), str(run.checkpoint), {**decision, "note": note}, settings
        )
        show_final(result, as_json)
        _write_page(html, result, run, settings, None, as_json)  # the review under the verdict
        return
    if not as_json:
        out.print(
            f"[bold]Claim:[/bold] {escape(run.claim)}  [dim](method {method}, model "
            f"{escape(redact(str(run.context.model)))})[/dim]"
        )
        if run.context.evidence_from:  # the reader knows whether a tool may run
            misses = (
                "a call it does not hold goes live"
                if run.context.evidence_miss == "live"
                else "no live retrieval or search"
            )
            out.print(
                f"[dim]evidence replayed from {escape(run.context.evidence_from)} "
                f"({run.context.evidence_scope} scope): {misses}[/dim]"
            )
    started = time.perf_counter()
    try:
        # web searches answered by the cache vs paid calls; on a local model, the expected time
        with tallying() as searches, timed_run(run.spec.name, run.context):
            result = run_coroutine(_stream(claim, run, settings, as_json, evidence_log))
    except KeyboardInterrupt:
        fail("interrupted", 130)
    except FactDebateError as exc:
        fail(str(exc))
    if result.get("status") == "awaiting_review":
        from factdebate.cli.review import finish_verify

        final = finish_verify(
            result,
            claim=run.claim,
            method=method,
            thread=str(run.thread),
            checkpoint=str(run.checkpoint),
            settings=settings,
            as_json=as_json,
        )
        if final is None:  # left for later: the page shows the proposal, awaiting review
            proposed = dict(result["proposed"])
            proposed["review"] = {"status": "pending", "proposed": proposed.get("verdict")}
            _write_page(html, proposed, run, settings, time.perf_counter() - started, as_json)
            return
        result = final
    show_final(without_given(result, run.docs), as_json)  # a 50 MB --documents text once
    if searches.hits or searches.live:
        err.print(describe(searches.summary()), markup=False)
    _write_page(html, result, run, settings, time.perf_counter() - started, as_json)


def _write_page(
    html: Path | None,
    result: dict[str, Any],
    run: _Run,
    settings: dict[str, Any],
    elapsed: float | None,
    as_json: bool,
) -> None:
    """Write the debate page of ``result`` at ``html`` when one was asked for."""
    if html is None:
        return
    from factdebate.api import save_debate_page

    save_page(
        lambda: save_debate_page(html, result, run.claim, run.spec, elapsed_s=elapsed, **settings),
        as_json,
    )


def _read_claim(claim: str) -> str:
    """The claim as given, or read from stdin (``-``) with a size limit, as UTF-8."""
    if claim != "-":
        return claim
    from factdebate.nodes.claims import MAX_TEXT_BYTES, InputError, read_limited

    try:
        raw = read_limited(sys.stdin.buffer, MAX_TEXT_BYTES, "claim on stdin")
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError("the claim is not valid UTF-8 text") from exc
    except FactDebateError as exc:
        fail(str(exc))


@dataclass
class _Run:
    """A checked run: its method, settings object, documents and where it is stored."""

    spec: Any
    context: Any
    claim: str
    docs: list[Any] | None
    thread: str | None
    checkpoint: str | None


def _prepare(
    claim: str,
    method: str,
    settings: dict[str, Any],
    documents: Path | None,
    thread: str | None,
    checkpoint: str | None,
    html: Path | None,
    approve: bool,
    verdict: str | None,
) -> _Run:
    """Check everything a run needs before its first model call; fail in one line otherwise."""
    from factdebate.api import (
        build_context,
        check_checkpoint,
        check_models,
        check_page_path,
        check_reachable,
        make_input,
    )
    from factdebate.graphs.registry import resolve
    from factdebate.nodes.claims import MAX_FILE_BYTES, check_user_file, clean_claim
    from factdebate.tools.retrieval.corpus import load_documents

    try:
        spec = resolve(method)
        if settings.get("review"):
            from factdebate.cli.review import review_store

            thread, checkpoint = review_store(thread, checkpoint, decided=approve or bool(verdict))
        context = build_context(spec, **settings)
        if context.evidence_from:  # a snapshot that cannot be read stops before anything runs
            from factdebate.evidence import open_replay

            open_replay(context)
        if (thread is None) != (checkpoint is None):
            raise SettingsError("--thread and --checkpoint go together: give both or neither")
        if checkpoint is not None:
            check_checkpoint(checkpoint)
        if documents is not None:
            check_user_file(documents, MAX_FILE_BYTES, "documents file", folder_ok=True)
        if html is not None:
            check_page_path(html)
        docs = load_documents(documents) if documents is not None else None
        for doc in docs or []:
            doc["source"] = "given"
        make_input(spec, claim, context, docs)
        check_models(context)
        if docs is None and not context.evidence_from:  # frozen evidence reads no index
            _check_index(context)
        if thread is None and not approve and verdict is None:  # a decision calls no model
            check_reachable(context)  # a dead provider stops here, before any debate call
    except FactDebateError as exc:
        fail(str(exc))
    return _Run(spec, context, clean_claim(claim), docs, thread, checkpoint)


async def _stream(
    claim: str, run: _Run, settings: dict[str, Any], as_json: bool, evidence_log: Path | None
) -> dict[str, Any]:
    """Run the debate, printing each turn as it streams; the result (or the review proposal)."""
    from factdebate.api import astream_verify, check_reachable

    result: dict[str, Any] = {}
    seen_errors: list[dict[str, Any]] = []  # tells an unreadable label from a free-text turn
    # a stored thread probes the provider only once its lease is held (a refusal costs nothing)
    probe = None if run.thread is None else (lambda: check_reachable(run.context))
    async for node, update in astream_verify(
        claim,
        run.spec,
        run.docs,
        checkpoint=run.checkpoint,
        thread=run.thread,
        before_run=probe,
        evidence_log=evidence_log,
        **settings,
    ):
        if node == "result":
            result = update
        elif node == "awaiting_review":
            result = {"status": "awaiting_review", "thread": run.thread, "proposed": update}
        elif node == "checkpoint":
            status = update.get("status")
            if status != "new":
                note = "resuming" if status == "resumed" else "already finished; stored result"
                err.print(f"thread {run.thread}: {note}", markup=False)
        elif not as_json:
            seen_errors += update.get("errors") or []
            for turn in update.get("transcript", []):
                print_turn(turn, seen_errors)
            tool_mad = run.spec.family == "tool-mad" and run.spec.role != "baseline"
            if node == "judge" and tool_mad:  # Tool-MAD's judge comes after the round limit
                out.print("[dim]judge is deciding after the round limit[/dim]")
    return result


def _check_index(context: Any) -> None:
    """A named collection must exist before a run (the default one is built on demand)."""
    from factdebate.tools.retrieval.corpus import DEFAULT_COLLECTION
    from factdebate.tools.retrieval.manifest import IndexMissingError
    from factdebate.tools.retrieval.vectorstore import collection_exists

    if getattr(context, "collection", DEFAULT_COLLECTION) == DEFAULT_COLLECTION:
        return
    if not collection_exists(context.collection, context.milvus_uri):
        raise IndexMissingError(context.collection)
    if getattr(context, "embed_model", ""):  # refuse another encoder before any model call
        from factdebate.tools.dispatch import check_encoder

        check_encoder(context.collection, context.embed_model, context.milvus_uri)


def register(app: typer.Typer) -> None:
    """Add `verify` to the `factdebate` command."""
    app.command(
        epilog='Example: factdebate verify "The Eiffel Tower is in Paris." --html debate.html'
    )(verify)
