"""A bench run's review queue: every item paused before its verdict, then decided one by one."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import Any

from factdebate.api import build_context, contract
from factdebate.bench.judging.page import item_page, write_bench_page, write_item_page
from factdebate.bench.judging.report import write_summary
from factdebate.bench.judging.scoring import RESULTS, prediction
from factdebate.bench.running.invokers import Invoker, durable_invoker, thread_of
from factdebate.datasets import LABEL_TASK
from factdebate.nodes.review import PENDING, pending_review, proposal, proposed_of
from factdebate.review.resume import aresume
from factdebate.runs.checkpoints import open_checkpointer
from factdebate.runs.folder import RUN_FILE, read_rows, rows_lock, write_rows
from factdebate.tools.core.errors import FactDebateError
from factdebate.tools.core.json_text import json_problem, parse_json
from factdebate.tools.core.secrets import REDACTED, redact_deep

QUEUE_DB = "review.sqlite"
"""The checkpoint file of a bench run's review queue, inside the run folder."""
REVIEW_RECORD = ("status", "proposed", "note", "at", "by")
"""What a decision adds to an item's row; where the item waited (server, checkpoint) stays."""


class QueueError(FactDebateError, ValueError):
    """A run folder that holds no review queue, or an item that is not waiting."""


def queue_checkpoint(out_dir: Path) -> str:
    """The checkpoint spec of ``out_dir``'s review queue (an absolute path)."""
    return f"sqlite:{Path(out_dir).absolute() / QUEUE_DB}"


def _pending(inner: Invoker, where: Callable[[str], dict[str, Any]]) -> Invoker:
    """``inner`` marking each item that paused as awaiting review, ``where(item)`` it waits."""

    async def invoke(payload: dict[str, Any], context: Any, item_id: str) -> dict[str, Any]:
        out = await inner(payload, context, item_id)
        if out.pop("__interrupt__", None):
            proposed = proposed_of(out)
            out["review"] = {**(out.get("review") or {}), "status": PENDING, "proposed": proposed}
            out["review"].update(where(item_id))
        return out

    return invoke


def review_invoker(graph: Any, checkpoint: str, run_key: str) -> Invoker:
    """Run bench items durably (one thread each) so each one stops at its review step."""
    return _pending(
        durable_invoker(graph, checkpoint, run_key),
        lambda item: {"thread": thread_of(run_key, item), "checkpoint": checkpoint},
    )


def server_review_invoker(inner: Invoker, url: str, run_id: str) -> Invoker:
    """``inner`` (a server invoker with a queue) marking each paused item as awaiting review.

    The item's thread stays on the server; ``factdebate review --server URL --run ID``
    decides it there (a row keeps the server and the run id it waits under).
    """
    return _pending(inner, lambda item: {"server": url, "run": run_id})


def sync_server_queue(out_dir: Path) -> tuple[int, int, str]:
    """Write the decisions taken on the server into a run folder whose items wait there.

    Each row still ``pending`` whose thread the server shows decided takes that decision
    (prediction and review record), and the metrics and report are written again.
    Returns ``(rows updated, rows still waiting on the server, "--server URL --run ID")``.

    Raises:
        QueueError: not a bench run made with ``--review``, or a server that cannot answer.
    """
    from factdebate.review.server_queue import adecided

    out_dir = Path(out_dir)
    run = _run(out_dir)
    with rows_lock(out_dir / RESULTS, wait=False):  # one writer: never under a running bench
        rows = queue_rows(out_dir / RESULTS)
        waiting = [
            r
            for r in rows
            if (r.get("review") or {}).get("status") == PENDING and r["review"].get("server")
        ]
        if not waiting:
            return 0, 0, ""
        url, run_id = str(waiting[0]["review"]["server"]), str(waiting[0]["review"].get("run"))
        try:
            decided = asyncio.run(adecided(url, run_id))
        except Exception as exc:  # the SDK's HTTP or connection error: one line
            raise QueueError(f"server {url}: {type(exc).__name__}: {exc}".splitlines()[0]) from exc
        task = run.get("task") or LABEL_TASK
        updated = 0
        for row in waiting:
            values = decided.get(str(row["id"]))
            if values is None:
                continue
            take_decision(out_dir, run, row, contract(values), task)
            updated += 1
        if updated:
            write_rows(out_dir / RESULTS, rows)
            _rewrite_report(out_dir, rows, run, task)
        return updated, len(waiting) - updated, f"--server {url} --run {run_id}"


def _run(out_dir: Path) -> dict[str, Any]:
    path = Path(out_dir) / RUN_FILE
    if not path.is_file():
        raise QueueError(f"{out_dir}: no {RUN_FILE}; give a bench run folder")
    run: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if not (run.get("context") or {}).get("review"):
        raise QueueError(f"{out_dir}: this run has no review queue (run bench with --review)")
    return run


def _checkpoint(row: dict[str, Any], out_dir: Path, override: str | None) -> str:
    """Where an item's thread is stored: the override, the row's record, or the run folder."""
    stored = str(row["review"].get("checkpoint") or "")
    if override:
        return override
    own = Path(out_dir) / QUEUE_DB
    if stored.startswith("sqlite:") and Path(stored[7:]).name == QUEUE_DB and own.is_file():
        return queue_checkpoint(out_dir)  # the folder's own queue, wherever the folder now is
    if stored and REDACTED not in stored:  # a redacted password cannot be used again
        return stored
    return queue_checkpoint(out_dir)


def pending_items(
    out_dir: Path, checkpoint: str | None = None
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The rows still awaiting review, each with what its reviewer is shown.

    Raises:
        QueueError: not a bench run made with ``--review``.
    """
    run = _run(out_dir)
    with rows_lock(Path(out_dir) / RESULTS, wait=False):  # refused while a bench writes it
        rows = queue_rows(Path(out_dir) / RESULTS)
    waiting = [r for r in rows if (r.get("review") or {}).get("status") == PENDING]
    on_server = next((r["review"] for r in waiting if r["review"].get("server")), None)
    if on_server is not None:
        raise QueueError(
            f"{out_dir}: its items wait on a server: factdebate review --server "
            f"{on_server['server']} --run {on_server.get('run')}"
        )

    async def load() -> list[tuple[dict[str, Any], dict[str, Any]]]:
        found = []
        graph = _graph(run["method"])
        for row in waiting:
            async with open_checkpointer(
                _checkpoint(row, out_dir, checkpoint), existing=True
            ) as saver:
                durable = graph.builder.compile(checkpointer=saver)
                config = {"configurable": {"thread_id": row["review"]["thread"]}}
                snapshot = await durable.aget_state(config)
            request = pending_review(snapshot)
            if request is not None:
                found.append((row, proposal(request, dict(snapshot.values or {}))))
        return found

    return asyncio.run(load())


def queue_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a results file the review rewrites; a line it cannot read is refused.

    The bench's own reader drops a torn or corrupt line; a rewrite here would then lose it
    for good, so the review stops first and names the line.

    Raises:
        QueueError: a symlinked file, or a line that is not a JSON row with an id.
    """
    if path.is_symlink():
        raise QueueError(f"{path}: is a symlink; review rewrites it in place, give the real folder")
    if not path.is_file():
        return []
    text = path.read_text(encoding="utf-8", errors="replace")
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            row = parse_json(line)
        except json.JSONDecodeError as exc:
            problem = f"not JSON ({json_problem(exc, line=False)})"
        else:
            problem = "" if isinstance(row, dict) and "id" in row else "a row needs an id"
        if problem:
            raise QueueError(
                f"{path}: line {number} cannot be read ({problem}); review would drop it when "
                "it rewrites the file: fix or remove that line, then review again"
            )
    return read_rows(path)


def _graph(method: str) -> Any:
    from factdebate.graphs.registry import load_method

    return load_method(method)[0]


def apply_decision(
    out_dir: Path,
    item_id: str,
    decision: dict[str, Any],
    model: str | None = None,
    checkpoint: str | None = None,
) -> dict[str, Any]:
    """Resume one waiting item with ``decision``; rewrite its row and the run's report.

    Returns the updated row.

    Raises:
        QueueError: an unknown item, or one not waiting for review.
        ValueError: a decision the method refuses (nothing is changed).
    """
    out_dir = Path(out_dir)
    run = _run(out_dir)
    with rows_lock(out_dir / RESULTS, wait=False):  # one writer: never under a running bench
        return _apply(out_dir, run, item_id, decision, model, checkpoint)


def _apply(
    out_dir: Path,
    run: dict[str, Any],
    item_id: str,
    decision: dict[str, Any],
    model: str | None,
    checkpoint: str | None,
) -> dict[str, Any]:
    """``apply_decision`` while holding the results file."""
    rows = queue_rows(out_dir / RESULTS)
    row = next((r for r in rows if str(r["id"]) == str(item_id)), None)
    if row is None or (row.get("review") or {}).get("status") != PENDING:
        raise QueueError(f"item {item_id!r} is not awaiting review in {out_dir}")
    settings = dict(run.get("context") or {})
    if model:
        settings["model"] = model
    build_context(run["method"], **settings)  # bad settings fail before anything changes
    result = asyncio.run(
        aresume(
            row["review"]["thread"],
            checkpoint=_checkpoint(row, out_dir, checkpoint),
            method=run["method"],
            **decision,
            **settings,
        )
    )
    task = run.get("task") or LABEL_TASK
    take_decision(out_dir, run, row, result, task)
    write_rows(out_dir / RESULTS, rows)
    _rewrite_report(out_dir, rows, run, task)
    return row


def take_decision(
    out_dir: Path, run: dict[str, Any], row: dict[str, Any], result: dict[str, Any], task: str
) -> None:
    """A decided item's row: prediction, review record and its whole ``result`` as decided.

    ``result`` is the item's result contract after the decision (the decided verdict, the
    review record, ``decided_by``); the row keeps where its thread waited. The item's debate
    page, where the run wrote one, is written again with the decision.
    """
    result = dict(redact_deep(result))
    row["prediction"] = prediction(result, task)
    decided = result.get("review") or {}
    row["review"] = {**row["review"], **{k: decided[k] for k in REVIEW_RECORD if k in decided}}
    row["result"] = result
    if (out_dir / item_page(row["id"])).is_file():
        write_item_page(out_dir, row, result, str(run["method"]), _shown_settings(run))


def _shown_settings(run: dict[str, Any]) -> dict[str, Any]:
    """The settings an item's page shows: every field of the run's settings, as the bench did."""
    settings = dict(run.get("context") or {})
    if run.get("server_url"):
        return settings  # a server's run shows the settings it sent
    built = build_context(str(run["method"]), **settings)
    return {f.name: getattr(built, f.name) for f in fields(built)}


def _rewrite_report(
    out_dir: Path, rows: list[dict[str, Any]], run: dict[str, Any], task: str
) -> None:
    """Metrics and pages again, now with the reviewed verdicts."""
    metrics_path = out_dir / "metrics.json"
    labels: list[str] = []
    if metrics_path.is_file():
        labels = list(json.loads(metrics_path.read_text(encoding="utf-8")).get("labels") or [])
    metrics = write_summary(out_dir, rows, labels, run, task)
    write_bench_page(out_dir, metrics, rows)
