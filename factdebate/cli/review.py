"""The command line of human review and replay: `verify --review`, `review`, `history`, `replay`."""

from __future__ import annotations

import atexit
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated, Any

import typer

from factdebate.cli.common import parse_settings
from factdebate.cli.console import err, fail, out, print_json, run_coroutine
from factdebate.cli.show import print_result, print_turn
from factdebate.tools.core.errors import FactDebateError, SettingsError

SHOWN_EVIDENCE_CHARS = 300
QUEUE_DB = "review.sqlite"
"""The checkpoint file of a bench run's review queue, inside the run folder."""


def review_store(
    thread: str | None, checkpoint: str | None, decided: bool
) -> tuple[str | None, str | None]:
    """Where a reviewed run is stored: the given thread and checkpoint, or a temporary file.

    The temporary SQLite file (a review answered now, on a terminal) is removed at exit.

    Raises:
        ValueError: a decision without the paused run's thread, or a review without a
            terminal to ask on and nowhere to store the run until it is decided.
    """
    if thread is not None or checkpoint is not None:
        return thread, checkpoint
    if decided:
        raise SettingsError(
            "--approve/--verdict finish a paused run: give its --thread and --checkpoint"
        )
    if not sys.stdin.isatty():
        raise SettingsError(
            "--review without a terminal needs --thread and --checkpoint (decide later)"
        )
    folder = tempfile.mkdtemp(prefix="factdebate-review-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return "review", f"sqlite:{Path(folder) / 'review.sqlite'}"


def show_proposal(proposed: dict[str, Any]) -> None:
    """Print what a reviewer decides on: the verdict, its reasoning, the evidence."""
    out.rule("Awaiting review")
    by = proposed.get("decided_by") or {}
    who = f" by the {by['agent']} after round {by.get('round')}" if by.get("agent") else ""
    out.print(f"Proposed verdict{who}: [bold]{proposed.get('verdict') or 'none'}[/bold]")
    if proposed.get("justification"):
        out.print(
            " ".join(str(proposed["justification"]).split())[:1200], markup=False, soft_wrap=True
        )
    for doc in proposed.get("evidence") or []:
        text = " ".join(str(doc.get("text") or "").split())
        cut = "…" if len(text) > SHOWN_EVIDENCE_CHARS else ""
        out.print(
            f"  [{doc.get('id')}] {doc.get('title') or ''}: {text[:SHOWN_EVIDENCE_CHARS]}{cut}",
            markup=False,
            soft_wrap=True,
        )
    choices = proposed.get("choices")
    out.print(
        "Choices: " + (", ".join(choices) if choices else "any answers, several separated by ';'"),
        markup=False,
        soft_wrap=True,
    )


def ask_decision(proposed: dict[str, Any]) -> dict[str, Any] | None:
    """Ask on the terminal: approve, overrule (verdict and note) or leave it for later (None)."""
    while True:
        answer = typer.prompt("Approve [a], overrule [o] or leave for later [l]", default="l")
        key = answer.strip().lower()[:1]
        if key == "l":
            return None
        if key == "a":
            return {"approve": True, "note": typer.prompt("Note", default="")}
        if key == "o":
            verdict = typer.prompt("Verdict")
            return {"verdict": verdict, "note": typer.prompt("Note", default="")}
        err.print(f"answer a, o or l (got {answer!r})", markup=False, soft_wrap=True)


def later_hint(claim: str, thread: str, checkpoint: str, method: str) -> None:
    """How to finish a paused run from a script."""
    base = (
        f'factdebate verify "{claim}" --method {method} --thread {thread} --checkpoint {checkpoint}'
    )
    out.print(f"awaiting review: thread {thread}. Finish it with", markup=False, soft_wrap=True)
    out.print(f"  {base} --approve [--note TEXT]", markup=False, soft_wrap=True)
    out.print(f"  {base} --verdict LABEL --note TEXT", markup=False, soft_wrap=True)


async def _drain(events: AsyncIterator[tuple[str, dict[str, Any]]], quiet: bool) -> dict[str, Any]:
    """Print the turns of a stream; return its result (or the awaiting-review proposal)."""
    result: dict[str, Any] = {}
    async for node, update in events:
        if node in ("result", "awaiting_review"):
            result = {"_event": node, **update}
        elif not quiet:
            for turn in update.get("transcript", []) or []:
                print_turn(turn)
    return result


def resume_run(
    thread: str, checkpoint: str, decision: dict[str, Any], settings: dict[str, Any]
) -> dict[str, Any]:
    """Apply ``decision`` to the paused ``thread``; the result contract (one-line errors)."""
    from factdebate.review.resume import aresume

    try:
        return run_coroutine(aresume(thread, checkpoint=checkpoint, **decision, **settings))
    except FactDebateError as exc:
        fail(str(exc))
        raise  # unreachable: fail exits


def finish_verify(
    result: dict[str, Any],
    *,
    claim: str,
    method: str,
    thread: str,
    checkpoint: str,
    settings: dict[str, Any],
    as_json: bool,
) -> dict[str, Any] | None:
    """After `verify --review` paused: ask on a terminal, else say how to finish later.

    Returns the final result, or None when the run stays paused.
    """
    if as_json:
        print_json(result)
        return None
    proposed = result["proposed"]
    show_proposal(proposed)
    decision = ask_decision(proposed) if sys.stdin.isatty() else None
    if decision is None:
        later_hint(claim, thread, checkpoint, method)
        return None
    return resume_run(thread, checkpoint, decision, settings)


def history(
    thread: Annotated[str, typer.Argument(help="The thread (run id) to list.")],
    checkpoint: Annotated[
        str, typer.Option(help="Where it is stored: sqlite:PATH or postgresql://...")
    ],
    method: Annotated[
        str | None, typer.Option(help="Method, when the thread does not record it.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON list, nothing else.")] = False,
) -> None:
    """List the stored steps of a debate (what ran, the round, the verdict so far)."""
    from factdebate.review.replay import ahistory

    try:
        steps = run_coroutine(ahistory(thread, checkpoint=checkpoint, method=method))
    except FactDebateError as exc:
        fail(str(exc))
    if as_json:
        print_json(steps, ascii_only=True)
        return
    for step in steps:
        nxt = ", ".join(step["next"]) or "(finished)"
        extra = f" round {step['round']}" if step.get("round") is not None else ""
        verdict = f" verdict {step['verdict']}" if step.get("verdict") else ""
        fork = " (fork of " + step["replay"]["parent_thread"] + ")" if step.get("replay") else ""
        out.print(
            f"step {step['step']:>3}: next {nxt}{extra}{verdict}{fork}",
            markup=False,
            soft_wrap=True,
        )


def replay(
    thread: Annotated[str, typer.Argument(help="The stored thread to fork.")],
    start: Annotated[str, typer.Option("--from", help="Fork where NODE[@ROUND] was about to run.")],
    checkpoint: Annotated[
        str, typer.Option(help="Where it is stored: sqlite:PATH or postgresql://...")
    ],
    to: Annotated[
        str | None, typer.Option(help="Name of the new thread (default: derived).")
    ] = None,
    model: Annotated[str | None, typer.Option(help="Model for every role.")] = None,
    judge_model: Annotated[str | None, typer.Option(help="Model of the judge/moderator.")] = None,
    set_: Annotated[list[str] | None, typer.Option("--set", help="Any setting, KEY=VALUE.")] = None,
    method: Annotated[
        str | None, typer.Option(help="Method, when the thread does not record it.")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object, nothing else.")
    ] = False,
) -> None:
    """Fork a stored debate at one step with changed settings and run it on (original kept)."""
    from factdebate.graphs.registry import load_method
    from factdebate.review.replay import astream_replay, parse_start
    from factdebate.review.resume import stored_method_sync

    try:
        parse_start(start)
        name = method or stored_method_sync(thread, checkpoint)
        _, context_cls = load_method(name)
        settings = parse_settings(set_ or [], context_cls)
        settings.update(
            {k: v for k, v in {"model": model, "judge_model": judge_model}.items() if v}
        )
    except FactDebateError as exc:
        fail(str(exc))
    events = astream_replay(
        thread, start, checkpoint=checkpoint, new_thread=to, method=name, **settings
    )

    async def run() -> tuple[dict[str, Any], dict[str, Any]]:
        record: dict[str, Any] = {}

        async def tagged() -> AsyncIterator[tuple[str, dict[str, Any]]]:
            async for node, update in events:
                if node == "replay":
                    record.update(update)
                    if not as_json:
                        out.print(
                            f"fork {update['thread']} of {thread} at {start}",
                            markup=False,
                            soft_wrap=True,
                        )
                    continue
                yield node, update

        return await _drain(tagged(), as_json), record

    try:
        result, record = run_coroutine(run())
    except FactDebateError as exc:
        fail(str(exc))
    _show(result, as_json, f"factdebate verify ... --thread {record.get('thread')}")


def _show(result: dict[str, Any], as_json: bool, how: str) -> None:
    """Print a final result or a paused proposal."""
    event = result.pop("_event", "result")
    if as_json:
        print_json(result)
    elif event == "awaiting_review":
        show_proposal(result)
        out.print(f"awaiting review: finish it with {how} --approve", markup=False, soft_wrap=True)
    else:
        print_result(result)


def review_queue(
    run_dir: Annotated[
        Path | None, typer.Argument(help="A bench run folder made with --review.")
    ] = None,
    approve_all: Annotated[bool, typer.Option(help="Approve every waiting item.")] = False,
    model: Annotated[
        str | None, typer.Option(help="Model for every role (when run.json's is redacted).")
    ] = None,
    checkpoint: Annotated[
        str | None, typer.Option(help="Where the items are stored, when not in the run folder.")
    ] = None,
    server: Annotated[
        str | None, typer.Option(help="A LangGraph server whose threads hold the queue (--run).")
    ] = None,
    run: Annotated[
        str | None, typer.Option("--run", help="The bench run id of the queue on --server.")
    ] = None,
) -> None:
    """Walk a bench run's review queue: approve or overrule each waiting item."""
    from factdebate.bench.running.review_queue import apply_decision, pending_items

    if server is not None or run is not None:
        if server is None or run is None or run_dir is not None:
            fail("a queue on a server takes --server URL --run ID (and no run folder)")
        server_queue(server, run, approve_all)
        return
    if run_dir is None:
        fail("give a bench run folder made with --review, or --server URL --run ID")
    try:
        from factdebate.bench.running.review_queue import sync_server_queue

        updated, left, where = sync_server_queue(run_dir)
    except FactDebateError as exc:
        fail(str(exc))
    if updated or left:
        out.print(
            f"{run_dir}: {updated} decision(s) taken on the server written to the run; "
            f"{left} item(s) still wait there" + (f": factdebate review {where}" if left else ""),
            markup=False,
            soft_wrap=True,
        )
    if left:
        return
    try:
        waiting = pending_items(run_dir, checkpoint)
    except FactDebateError as exc:
        fail(str(exc))
    if not waiting:
        out.print(f"{run_dir}: nothing awaits review", markup=False, soft_wrap=True)
        return
    done = 0
    for row, proposed in waiting:
        out.print(f"\n[bold]{row['id']}[/bold]: {row.get('claim') or row.get('question') or ''}")
        if approve_all:
            decision: dict[str, Any] | None = {"approve": True}
        else:
            show_proposal(proposed)
            decision = ask_decision(proposed)
        if decision is None:
            continue
        try:
            final = apply_decision(run_dir, row["id"], decision, model=model, checkpoint=checkpoint)
        except FactDebateError as exc:
            err.print(f"{row['id']}: {exc}", markup=False, soft_wrap=True)
            continue
        done += 1
        out.print(
            f"  → {final.get('prediction')} ({final['review']['status']})",
            markup=False,
            soft_wrap=True,
        )
    out.print(
        f"{done} of {len(waiting)} reviewed; report updated in {run_dir}",
        markup=False,
        soft_wrap=True,
    )


def server_queue(url: str, run_id: str, approve_all: bool) -> None:
    """Decide the threads of bench run ``run_id`` waiting for review on the server ``url``."""
    from factdebate.review.server_queue import adecide, aended, alist_queue

    try:
        waiting = run_coroutine(alist_queue(url, run_id))
        ended = run_coroutine(aended(url, run_id))
    except FactDebateError as exc:
        fail(str(exc))
    except Exception as exc:  # the SDK's HTTP or connection error: one line
        fail(f"server {url}: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
    for entry in ended:  # never decided, and no longer waiting: said, not left pending
        out.print(
            f"{entry['item']}: ended without a decision on {url} (thread {entry['thread']}, "
            f"{entry['status']}); run the item again to review it",
            markup=False,
            soft_wrap=True,
        )
    if not waiting:
        out.print(f"run {run_id}: nothing awaits review on {url}", markup=False, soft_wrap=True)
        return
    done = 0
    for entry in waiting:
        out.print(f"\n[bold]{entry['item']}[/bold] ({entry['dataset']}, thread {entry['thread']})")
        out.print(str(entry["input"]), markup=False, soft_wrap=True)
        decision: dict[str, Any] | None = {"approve": True}
        if not approve_all:
            show_proposal(entry["proposed"])
            decision = ask_decision(entry["proposed"])
        if decision is None:
            continue
        try:
            values = run_coroutine(adecide(url, entry["thread"], decision))
        except FactDebateError as exc:
            err.print(f"{entry['item']}: {exc}", markup=False, soft_wrap=True)
            continue
        done += 1
        status = (values.get("review") or {}).get("status")
        out.print(f"  → {values.get('verdict')} ({status})", markup=False, soft_wrap=True)
    out.print(f"{done} of {len(waiting)} reviewed on {url}", markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add `history`, `replay` and `review` to the `factdebate` command."""
    app.command(epilog="Example: factdebate history t1 --checkpoint sqlite:runs/c.db")(history)
    app.command(
        epilog="Example: factdebate replay t1 --from judge@3 --checkpoint sqlite:runs/c.db "
        "--judge-model openai:gpt-4o"
    )(replay)
    app.command(
        "review",
        epilog="Examples: factdebate review runs/bench-fever; "
        "factdebate review --server http://127.0.0.1:2024 --run bench-0123abcd4567ef89",
    )(review_queue)
