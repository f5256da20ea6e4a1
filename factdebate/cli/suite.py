"""`factdebate bench --suite NAME`: several bench runs on one sample and their comparison."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from factdebate.cli.console import err, fail, out, print_markdown
from factdebate.cli.progress import bench_progress
from factdebate.tools.core.errors import FactDebateError


def run_suite_command(
    suite: str,
    method: str,
    dataset: str,
    out_dir: Path,
    context: dict[str, Any],
    *,
    match_on: str,
    progress_every: float,
    options: dict[str, Any],
    shared_evidence: bool = False,
) -> None:
    """Run every member of ``suite`` into ``out_dir/<method>``, then print the comparison.

    ``options`` are the bench's other keyword arguments (data folder, limit, seed, repeats,
    concurrency, server, checkpoint, pages), the same for every member. With
    ``shared_evidence`` the members after the debate read its evidence pool.
    """
    from factdebate.bench.judging.suite import COMPARISON_PAGE, plan_suite, write_comparison
    from factdebate.bench.running.matched import match_k
    from factdebate.bench.running.repeats import run_repeats
    from factdebate.bench.running.suite_runs import check_suite, run_suite

    try:  # every option of every member, before any member calls a model
        plan = plan_suite(suite, method, dataset)
        check_suite(
            plan,
            dataset,
            out_dir,
            context,
            match_on=match_on,
            options=options,
            shared_evidence=shared_evidence,
        )
    except FactDebateError as exc:
        fail(str(exc))
    err.print(
        f"suite {suite}: {', '.join(plan.members)} on {dataset} into {out_dir}",
        markup=False,
        soft_wrap=True,
    )

    def run(name: str, folder: Path, settings: dict[str, Any]) -> None:
        from factdebate.datasets import ANSWER_TASK, dataset_task

        score = "EM" if dataset_task(dataset) == ANSWER_TASK else "acc"  # as bench's own line
        label = f"{name} on {dataset}"
        with bench_progress(label, progress_every, score, name, settings) as progress:
            run_repeats(name, dataset, folder, context=settings, progress=progress, **options)

    def match(name: str, debate: Path, folder: Path, settings: dict[str, Any]) -> int:
        plan_k = match_k(name, debate, match_on, folder, settings, options.get("concurrency", 1))
        err.print(
            f"{name}: k = {plan_k['k']} matches {debate.name}'s "
            f"{plan_k['target_per_item']:g} {match_on} per item",
            markup=False,
            soft_wrap=True,
        )
        return int(plan_k["k"])

    try:
        folders = run_suite(plan, out_dir, context, run, match, shared_evidence=shared_evidence)
        print_markdown(write_comparison(out_dir, folders))
    except FactDebateError as exc:
        fail(str(exc))
    out.print(
        f"comparison page: {(out_dir / COMPARISON_PAGE).resolve()}", markup=False, soft_wrap=True
    )
