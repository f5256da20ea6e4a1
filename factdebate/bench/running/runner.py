"""Benchmark runner: run a method over a claim or question dataset concurrently and resumably.

Each finished item is appended to ``results.jsonl`` at once (flushed), so an interrupted run
resumes where it stopped, and a rerun retries the items that failed (``retry_failed``); every
request an item sends is journalled as it ends (``call_journal``), so a killed item's calls stay
in the bill; ``metrics.json``, ``report.md``, ``report.html`` (with plots) and (for
labels) ``confusion.png`` are written at the end. With ``server_url`` every item is sent as a
run to a LangGraph server instead. Claim datasets are scored as labels; question datasets
(RAMDocs) as answer lists.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import Any

from factdebate.api import check_concurrency, check_models, check_reachable, input_keys
from factdebate.bench.judging.metrics import failed_item
from factdebate.bench.judging.page import pages_wanted, write_bench_page, write_item_page
from factdebate.bench.judging.provenance import run_provenance
from factdebate.bench.judging.report import write_summary
from factdebate.bench.judging.scoring import RESULTS, correct, llm_calls, tokens
from factdebate.bench.running.call_journal import (
    ATTEMPT,
    JOURNAL,
    new_attempt,
    note_connection_checks,
    open_journal,
    unrowed_calls,
)
from factdebate.bench.running.corpus import prepare_collection
from factdebate.bench.running.invokers import (
    ServerError,
    durable_invoker,
    local_invoker,
    run_id_of,
    server_invoker,
)
from factdebate.bench.running.items import BenchItem, data_identity, load_items
from factdebate.bench.running.results import (
    failed_row,
    repair_results,
    result_row,
    retried_rows,
    set_aside,
)
from factdebate.datasets import check_method_fits, dataset_task
from factdebate.evidence import EvidenceRun, evidence_session, open_replay, served_evidence
from factdebate.graphs.registry import resolve
from factdebate.runs.checkpoints import check_checkpoint
from factdebate.runs.folder import (
    RUN_FILE,
    append_rows,
    check_out_dir,
    check_rows_free,
    check_same_run,
    make_out_dir,
    rows_lock,
)
from factdebate.settings import defaults
from factdebate.tools.core.errors import FactDebateError, SettingsError
from factdebate.tools.core.evidence_hook import item_scope
from factdebate.tools.core.secrets import redact_deep
from factdebate.tools.websearch.cache import tallying

SAME_RUN_KEYS = ("method", "dataset", "limit", "seed", "context", "server_url", "data")
"""What must match for a run folder to be resumed (``data``: recorded since resumes checked it)."""
Progress = Callable[[int, int, float, int, int], None]
"""Called as ``(done, total, running accuracy, llm calls, tokens)`` after each item (and once
at the start, with the items already done when resuming). For answer datasets the running
accuracy is the strict exact match."""


async def arun_bench(
    method: str,
    dataset: str,
    out_dir: Path,
    *,
    data_dir: Path | None = None,
    limit: int | None = None,
    seed: int = 0,
    concurrency: int = 4,
    context: dict[str, Any] | None = None,
    server_url: str | None = None,
    progress: Progress | None = None,
    pages: bool | None = None,
    checkpoint: str | None = None,
    retry_failed: bool = True,
) -> dict[str, Any]:
    """Async ``run_bench`` (see there)."""
    check_concurrency(concurrency)
    spec = resolve(method)
    check_method_fits(spec, dataset)
    if checkpoint is not None:
        if server_url is not None:
            raise SettingsError("--checkpoint is for local runs: a server keeps its own threads")
        check_checkpoint(checkpoint)
    out_dir = Path(out_dir)
    check_out_dir(out_dir, (RESULTS, RUN_FILE))
    check_rows_free(out_dir / RESULTS)  # a bench still writing here: refused before any call
    graph = spec.load_graph()
    context_cls = graph.builder.context_schema
    task = dataset_task(dataset)
    issues: list[str] = []
    notes: list[str] = []
    fingerprint: dict[str, str] = {}
    items, labels = load_items(dataset, data_dir, limit, seed, issues, notes, fingerprint)
    settings = dict(context or {})
    wanted_items = [item.id for item in items]  # a knowledge store reads only these claims
    replay = None if server_url is not None else open_replay(settings, dataset, wanted_items)
    # on a server the snapshot is the operator's, on its disk: named here, opened there
    served_read = served_evidence(settings) if server_url is not None else {}
    read = replay[1] if replay is not None else served_read
    if read.get("scope") == "claim":  # a pool per claim (a knowledge store, a run's calls)
        for item in items:  # the pool, not the dataset's own evidence, is what agents read
            if item.inputs.get("evidence"):
                item.inputs["evidence"] = None
        notes.append(
            f"{dataset}: its own evidence is withheld; each claim's pool in "
            f"{settings['evidence_from']} answers every retrieval and search"
        )
    if server_url is not None:  # the server checks the settings (before any item runs)
        queue = (run_id_of(str(out_dir.resolve())), dataset) if settings.get("review") else None
        server_invoke = await server_invoker(server_url, method, settings, queue)
    else:  # names and values, before anything runs
        checked = context_cls.from_settings(settings)
        # an unknown or malformed model fails here, before any item runs
        await asyncio.to_thread(check_models, checked)
        if replay is None:  # frozen evidence needs no index
            settings = await asyncio.to_thread(
                prepare_collection, spec, dataset, data_dir, settings, context_cls
            )
    run: dict[str, Any] = redact_deep(  # a key inside a model URL is never written or shown
        {
            "method": method,
            "dataset": dataset,
            "limit": limit,
            "seed": seed,
            "context": settings,
            "server_url": server_url,
            "concurrency": concurrency,
            "data": data_identity(dataset, data_dir, items),
            # the whole dataset's fingerprint: runs pair item by item only when it matches
            "dataset_sha256": fingerprint.get("dataset_sha256"),
            # what produced it (models per role, encoders, search, version, commit): never
            # compared on resume, so folders from before it was recorded still resume
            "provenance": _provenance(context_cls, settings),
        }
    )
    if read:
        run["evidence"] = read  # which snapshot (its content hash, locally) and scope it read
    # a folder holding another run is refused before the provider is called
    check_same_run(out_dir, run, SAME_RUN_KEYS, recorded_later=("data",), write=False)
    probes = 0
    if server_url is None:
        # a provider that cannot be reached (no connection, 401/403, 404) stops it here, after
        # every refusal that needs no model and before the run folder is made
        probes = await asyncio.to_thread(check_reachable, checked)
    make_out_dir(out_dir)
    if probes:  # the probes were requests too: the bill counts them from the journal
        with open_journal(out_dir / JOURNAL) as calls:
            note_connection_checks(calls, probes)
    check_same_run(out_dir, run, SAME_RUN_KEYS, recorded_later=("data",))

    wanted = {i.id for i in items}
    with rows_lock(out_dir / RESULTS, wait=False):  # the repair rewrites: its one writer only
        every_row = repair_results(out_dir / RESULTS)
        # failed items run again (their rows set aside, their calls still in the bill)
        retrying = [r for r in every_row if str(r["id"]) in wanted and failed_item(r)]
        if retry_failed:
            set_aside(out_dir, every_row, retrying)
        else:
            retrying = []
        aside = {id(r) for r in retrying}
        rows = [r for r in every_row if str(r["id"]) in wanted and id(r) not in aside]
    retried_ids = {str(r["id"]) for r in retrying}
    done_ids = {str(r["id"]) for r in rows}
    todo = [i for i in items if i.id not in done_ids]
    accepted = input_keys(graph)
    if server_url is not None:
        invoke = server_invoke
    elif checkpoint is not None:  # each item its own thread: an interrupted debate resumes
        invoke = durable_invoker(graph, checkpoint, str(out_dir.resolve()))
    else:
        invoke = local_invoker(graph)
    if settings.get("review"):  # every item stops before its verdict: `factdebate review OUT`
        from factdebate.bench.running.review_queue import queue_checkpoint, review_invoker

        if server_url is not None:  # items wait on the server, each a thread of the run
            from factdebate.bench.running.review_queue import server_review_invoker

            invoke = server_review_invoker(invoke, server_url, run_id_of(str(out_dir.resolve())))
        else:
            store = checkpoint or queue_checkpoint(out_dir)
            invoke = review_invoker(graph, store, str(out_dir.resolve()))
    halted: list[ServerError] = []  # the server went away: stop, resume with the same command
    ctx_obj = None if server_url else context_cls.from_settings(settings)
    pages = pages_wanted(pages, len(items))
    shown = (  # the settings a page shows: every field of the run's context
        settings if ctx_obj is None else {f.name: getattr(ctx_obj, f.name) for f in fields(ctx_obj)}
    )

    stats: dict[str, float] = {
        "correct": sum(correct(r, task) for r in rows),
        "calls": sum(llm_calls(r) for r in rows),
        "tokens": sum(tokens(r) for r in rows),
    }

    def report() -> None:
        if progress is not None:
            progress(
                len(rows),
                len(items),
                stats["correct"] / max(1, len(rows)),
                int(stats["calls"]),
                int(stats["tokens"]),
            )

    report()
    semaphore = asyncio.Semaphore(concurrency)
    started = time.perf_counter()
    # what each call returned, in OUT/evidence (a server's calls: read back from each result)
    served = {**defaults(context_cls), **settings}
    # (what a server opens is not opened here: its path names a file on the server's disk)
    here = {k: v for k, v in settings.items() if k != "evidence_from"} if served_read else settings
    recording = evidence_session(here, out_dir, dataset, replay)
    # a second bench on the same folder is refused here, before it runs any item twice
    with (
        append_rows(out_dir / RESULTS, wait=False) as sink,
        recording as evidence,
        open_journal(out_dir / JOURNAL) as calls,
    ):

        async def one(item: BenchItem) -> None:
            payload = item.graph_input(accepted)
            async with semaphore:
                if halted:
                    return
                t0 = time.perf_counter()
                attempt = new_attempt()  # the journal's requests of this try carry it
                try:
                    claim = str(next(iter(item.text().values()), ""))
                    with item_scope(item.id, claim), calls.item(item.id, attempt):
                        out = await invoke(
                            payload, ctx_obj if ctx_obj is not None else settings, item.id
                        )
                    row = result_row(item, out, time.perf_counter() - t0, task)
                    if server_url is not None:  # its calls were made on the server
                        evidence.log.add_transcript(item.id, claim, out, served)
                except ServerError as exc:  # no row: the item runs when the bench resumes
                    halted.append(exc)
                    return
                except Exception as exc:  # one failing item must not stop the run
                    row = failed_row(item, exc, time.perf_counter() - t0)
                    out = row
                row[ATTEMPT] = attempt
            if pages:
                await asyncio.to_thread(write_item_page, out_dir, row, out, method, shown)
            sink.add(row)
            rows.append(row)
            stats["correct"] += correct(row, task)
            stats["calls"] += llm_calls(row)
            stats["tokens"] += tokens(row)
            report()

        with tallying() as searches:  # web searches answered by the cache vs paid calls
            await asyncio.gather(*(one(item) for item in todo))
    if halted:
        raise ServerError(
            f"{halted[0]}; {len(rows)} of {len(items)} items done "
            "(run the same command again to resume)"
        )
    run["wall_s"] = round(time.perf_counter() - started, 3)
    if server_url is None:  # a server's searches are counted there, not here
        run["web_search"] = searches.summary()
    run["load_issues"] = issues
    if evidence is not None and evidence.note():
        notes.append(evidence.note())
    elif served_read:
        notes.append(EvidenceRun(evidence.log, served_read).note())
    run["notes"] = notes
    run["resumed_items"] = len(done_ids)
    run["retried"] = {
        "items": len(retried_ids),
        "still_failed": sum(str(r["id"]) in retried_ids and failed_item(r) for r in rows),
    }
    earlier = retried_rows(out_dir)  # every try of a failed item a rerun replaced
    kept = [*rows, *earlier, *(r for r in every_row if str(r["id"]) not in wanted)]
    unrowed = await asyncio.to_thread(unrowed_calls, out_dir / JOURNAL, kept)
    run["outside_rows"] = outside_rows(earlier, unrowed)
    run["task"] = task
    order = {i.id: n for n, i in enumerate(items)}
    rows.sort(key=lambda r: order[str(r["id"])])
    metrics = await asyncio.to_thread(write_summary, out_dir, rows, labels, run, task)
    await asyncio.to_thread(write_bench_page, out_dir, metrics, rows)
    return metrics


def outside_rows(
    earlier: list[dict[str, Any]], unrowed: dict[str, Any] | None
) -> dict[str, Any] | None:
    """The calls a run paid for that no scored row holds (None: none), for its cost totals.

    ``earlier``: rows of failed tries a rerun replaced; ``unrowed``: the journal's requests of
    tries that left no row (items a kill cut off). ``cost`` is one usage per role and
    ``total``, as a row's.
    """
    costs = [r.get("cost") or {} for r in earlier]
    if unrowed is not None:
        costs.append(unrowed["cost"])
    if not any(costs):
        return None
    summed: dict[str, dict[str, int]] = {}
    for cost in costs:
        for role, usage in cost.items():
            have = summed.setdefault(role, {})
            for key in ("llm_calls", "rejected", "input_tokens", "output_tokens"):
                have[key] = have.get(key, 0) + int(usage.get(key, 0))
    return {
        "cost": summed,
        "retried_rows": len(earlier),
        "cut_off_items": 0 if unrowed is None else unrowed["items"],
        "cut_off_requests": 0 if unrowed is None else unrowed["requests"],
        "connection_checks": 0 if unrowed is None else unrowed.get("checks", 0),
    }


def merge_outside(parts: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    """Several runs' ``outside_rows`` (a run with repeats) as one (None: none had any)."""
    found = [p for p in parts if p]
    if not found:
        return None
    cost: dict[str, dict[str, int]] = {}
    for part in found:
        for role, usage in part["cost"].items():
            have = cost.setdefault(role, {})
            for key, value in usage.items():
                have[key] = have.get(key, 0) + int(value)
    counts = ("retried_rows", "cut_off_items", "cut_off_requests", "connection_checks")
    return {"cost": cost, **{k: sum(int(p.get(k, 0)) for p in found) for k in counts}}


def _provenance(context_cls: Any, settings: dict[str, Any]) -> dict[str, Any] | None:
    """What produced the run (``run_provenance``), or None when the settings are not ours to read.

    A server run's settings are checked by the server; one its environment accepts but this
    machine's refuses leaves the record out rather than failing the run.
    """
    try:
        return run_provenance(context_cls.from_settings(settings))
    except FactDebateError:
        return None


def run_bench(
    method: str,
    dataset: str,
    out_dir: Path,
    *,
    data_dir: Path | None,
    limit: int | None,
    seed: int,
    concurrency: int,
    context: dict[str, Any],
    server_url: str | None = None,
    progress: Progress | None = None,
    pages: bool | None = None,
    checkpoint: str | None = None,
    retry_failed: bool = True,
) -> dict[str, Any]:
    """Run ``method`` over ``dataset`` and write results.jsonl, metrics.json, report.md.

    Args:
        method: A method of the catalog (``factdebate.graphs.registry.METHODS``).
        dataset: Dataset name (``factdebate.datasets.DATASETS``); claim datasets need a claim
            method and are scored as labels, ``ramdocs`` needs a question method (MADAM-RAG and
            its baselines) and is scored by strict exact match and answer precision/recall/F1.
        out_dir: Run directory; an existing one with the same settings is resumed.
        data_dir: Shared datasets root (default ``../shared/datasets`` or $FACTDEBATE_DATASETS).
        limit: Seeded random sample of this many items (None = all).
        seed: Sampling seed.
        concurrency: Items in flight at once.
        context: Settings for the method's context class (e.g. ``{"tool_b": "rag"}``).
        server_url: Send each item as a run to this LangGraph server (an assistant of
            ``method`` with these settings, which the server checks before any item runs).
        progress: Called as ``(done, total, running accuracy, llm calls, tokens)``.
        pages: Write one debate page per item under ``pages/``, linked from report.html;
            None = only for runs of at most ``page.AUTO_PAGES`` items.
        checkpoint: ``sqlite:PATH`` or ``postgresql://...``: every finished step of every
            item is saved (one thread per item), so an item cut off mid-debate resumes there.
        retry_failed: On resume, run again the items whose row says they failed (their
            model calls brought no reply, or their run raised); their old rows move to
            ``retried.jsonl``, their calls still counted in the cost. False keeps them.

    Returns:
        The metrics dict also written to ``metrics.json``.

    Raises:
        DatasetError: unknown or unusable dataset, or a method taking another kind of input.
        ServerError: the server cannot be reached or refuses the run (a ValueError; the
            finished items stay in results.jsonl and the same call resumes).

    """
    return asyncio.run(
        arun_bench(
            method,
            dataset,
            out_dir,
            data_dir=data_dir,
            limit=limit,
            seed=seed,
            concurrency=concurrency,
            context=context,
            server_url=server_url,
            progress=progress,
            pages=pages,
            checkpoint=checkpoint,
            retry_failed=retry_failed,
        )
    )
