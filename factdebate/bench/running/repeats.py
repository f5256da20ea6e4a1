"""`bench --repeats N`: the same sample run N times, each repeat a run folder of its own.

``OUT/repeat-1`` ... ``OUT/repeat-N`` are ordinary bench run folders (each resumes on its own);
``OUT`` holds the combined ``run.json``, ``metrics.json``, ``report.md`` and ``report.html``
over every repeat's rows, with intervals over items and repeats (``stats``). Repeat r sends
sampling seed r to models that take one (the ``sampling_seed`` setting), or none with
``sampling_seed=-1``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from factdebate.bench.judging.page import write_bench_page
from factdebate.bench.judging.report import write_summary
from factdebate.bench.judging.rows import REPEAT_PREFIX, load_run
from factdebate.bench.judging.scoring import RESULTS
from factdebate.bench.running.runner import SAME_RUN_KEYS, Progress, arun_bench, merge_outside
from factdebate.datasets import ANSWER_TASK, LABEL_TASK
from factdebate.runs.folder import RUN_FILE, RunFolderError, check_out_dir, check_same_run
from factdebate.settings import MAX_REPEATS, check_count
from factdebate.tools.core.errors import SettingsError
from factdebate.tools.core.secrets import redact_deep

SEED_SETTING = "sampling_seed"
UNSEEDED = -1
"""The ``sampling_seed`` that sends none: repeats then sample as the provider draws."""
REPEATS_KEYS = tuple(k for k in SAME_RUN_KEYS if k != "data") + ("repeats",)
"""What a repeated run's ``run.json`` records; all but ``repeats`` must match to resume
(more or fewer repeats reuse the finished ones)."""
GREEDY_NOTE = (
    "temperature 0: most providers give the same answers on every repeat; set a temperature "
    "above 0 (--set temperature=0.7) for repeats to vary"
)


def repeat_dir(out_dir: Path, repeat: int) -> Path:
    """The run folder of repeat ``repeat`` (1-based)."""
    return Path(out_dir) / f"{REPEAT_PREFIX}{repeat}"


def check_no_llm_cache() -> None:
    """Refuse when a LangChain response cache is set: repeats would replay the first answers.

    Raises:
        SettingsError: ``langchain_core.globals.set_llm_cache`` holds a cache.
    """
    from langchain_core.globals import get_llm_cache

    if get_llm_cache() is not None:
        raise SettingsError(
            "--repeats needs the LangChain LLM cache off (set_llm_cache(None)): "
            "a cache would replay the first repeat's answers"
        )


def _temperature(method: str, settings: dict[str, Any]) -> float | None:
    """The sampling temperature the method's settings give (None: unknown, e.g. unset class)."""
    from factdebate.graphs.registry import resolve

    context_cls = resolve(method).load_graph().builder.context_schema
    if context_cls is None:
        return None
    return float(getattr(context_cls.from_settings(settings), "temperature", 0.0))


async def arun_repeats(
    method: str,
    dataset: str,
    out_dir: Path,
    *,
    repeats: int,
    context: dict[str, Any] | None = None,
    progress: Progress | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Async ``run_repeats`` (see there)."""
    check_count("--repeats", repeats, 1, MAX_REPEATS)
    settings = dict(context or {})
    if repeats == 1:
        return await arun_bench(
            method, dataset, out_dir, context=settings, progress=progress, **options
        )
    unseeded = settings.get(SEED_SETTING) == UNSEEDED
    if SEED_SETTING in settings and not unseeded:
        raise SettingsError(
            f"--repeats sets {SEED_SETTING} itself (repeat r: seed r); drop it, or give "
            f"{SEED_SETTING}={UNSEEDED} for repeats that send none"
        )
    if settings.get("review"):
        raise SettingsError("--review decides one run: drop --repeats")
    check_no_llm_cache()
    out_dir = Path(out_dir)
    check_out_dir(out_dir, (RUN_FILE, "metrics.json", "report.md"))
    if (out_dir / RESULTS).is_file():
        raise RunFolderError(f"{out_dir} holds a run without repeats; give another --out")
    run: dict[str, Any] = redact_deep(
        {
            "method": method,
            "dataset": dataset,
            "limit": options.get("limit"),
            "seed": options.get("seed", 0),
            "context": settings,
            "server_url": options.get("server_url"),
            "repeats": repeats,
        }
    )
    compared = [k for k in REPEATS_KEYS if k != "repeats"]
    if (out_dir / RUN_FILE).is_file():  # another run's folder is refused before anything runs
        check_same_run(out_dir, run, compared)
    notes: list[str] = []
    if options.get("server_url") is None and _temperature(method, settings) == 0.0:
        notes.append(GREEDY_NOTE)
    first: dict[str, Any] = {}
    wall = 0.0
    outside: list[dict[str, Any] | None] = []  # each repeat's calls no row holds
    retried = {"items": 0, "still_failed": 0}
    before = {"correct": 0.0, "calls": 0.0, "tok": 0.0}  # the repeats already finished
    for r in range(1, repeats + 1):
        latest = dict.fromkeys(before, 0.0)  # this repeat's, as its progress last said

        def tracked(
            done: int,
            total: int,
            acc: float,
            calls: int,
            tok: int,
            r: int = r,
            latest: dict[str, float] = latest,
        ) -> None:  # the progress line counts the whole run, not this repeat alone
            latest.update(correct=acc * done, calls=calls, tok=tok)
            if progress is not None:
                seen = (r - 1) * total + done
                right = (before["correct"] + acc * done) / max(1, seen)
                used, spent = int(before["calls"]) + calls, int(before["tok"]) + tok
                progress(seen, repeats * total, right, used, spent)

        metrics = await arun_bench(
            method,
            dataset,
            repeat_dir(out_dir, r),
            context={**settings, SEED_SETTING: UNSEEDED if unseeded else r},
            progress=tracked,
            **options,
        )
        for key in before:  # in place: ``tracked`` reads this same dict
            before[key] += latest[key]
        first = first or metrics
        wall += float(metrics["run"].get("wall_s") or 0.0)
        outside.append(metrics["run"].get("outside_rows"))
        for key in retried:
            retried[key] += int((metrics["run"].get("retried") or {}).get(key, 0))
        if r == 1:  # repeat 1 checked the settings and the data: record the whole run
            check_same_run(out_dir, run, compared)
    task = str(first["task"]) if "task" in first else LABEL_TASK
    run.update(
        task=task,
        wall_s=round(wall, 3),
        load_issues=first["run"].get("load_issues") or [],
        notes=[*notes, *(first["run"].get("notes") or [])],
        data=first["run"].get("data"),
        dataset_sha256=first["run"].get("dataset_sha256"),
        provenance=first["run"].get("provenance"),
        repeat_dirs=[repeat_dir(out_dir, r).name for r in range(1, repeats + 1)],
        retried=retried,
        outside_rows=merge_outside(outside),
    )
    check_same_run(out_dir, run, compared)  # records repeats, task and data beside the rest
    rows = await asyncio.to_thread(load_run, out_dir)
    labels = [] if task == ANSWER_TASK else list(first.get("labels") or [])
    combined = await asyncio.to_thread(write_summary, out_dir, rows, labels, run, task)
    await asyncio.to_thread(write_bench_page, out_dir, combined, rows)
    return combined


def run_repeats(
    method: str,
    dataset: str,
    out_dir: Path,
    *,
    repeats: int,
    context: dict[str, Any] | None = None,
    progress: Progress | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Run ``run_bench`` ``repeats`` times into ``OUT/repeat-r``; write combined reports in OUT.

    ``repeats`` 1 is exactly ``run_bench`` into ``out_dir``. Otherwise every repeat runs the
    same sample (same ``limit`` and ``seed``) with ``sampling_seed`` r, and ``OUT``'s
    ``metrics.json`` / ``report.md`` / ``report.html`` score all repeats' rows together (its
    ``n`` counts rows: items x repeats) with 95 % intervals over items and repeats.
    ``options`` are ``run_bench``'s other keyword arguments. Progress counts rows of all
    repeats.

    Raises:
        SettingsError: ``repeats`` outside 1..MAX_REPEATS, a ``sampling_seed`` given (but -1),
            ``--review``, or a LangChain LLM cache set.
        RunFolderError: ``out_dir`` holds another run (or one without repeats).
    """
    return asyncio.run(
        arun_repeats(
            method,
            dataset,
            out_dir,
            repeats=repeats,
            context=context,
            progress=progress,
            **options,
        )
    )
