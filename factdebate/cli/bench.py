"""`factdebate bench` and `bench-retrieval`: run methods over datasets, compare runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from factdebate.cli.common import (
    DATASET_HELP,
    EVIDENCE_FROM_HELP,
    METHOD_HELP,
    SET_HELP,
    ProgressEvery,
    checked_settings,
)
from factdebate.cli.console import err, fail, out, print_markdown, save_page
from factdebate.cli.progress import DEFAULT_EVERY_S, bench_progress
from factdebate.settings import (
    MAX_CONCURRENCY,
    MAX_REPEATS,
    check_count,
    check_dataset,
)
from factdebate.tools.core.errors import FactDebateError


def bench(
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="Run directory (resumable).")
    ] = None,
    method: Annotated[str, typer.Option(help=METHOD_HELP)] = "tool-mad",
    dataset: Annotated[str, typer.Option(help=DATASET_HELP)] = "scifact",
    data_dir: Annotated[Path | None, typer.Option(help="Datasets root folder.")] = None,
    limit: Annotated[int | None, typer.Option(help="Sample this many items.")] = None,
    seed: Annotated[int, typer.Option(help="Sampling seed.")] = 0,
    concurrency: Annotated[int, typer.Option(help="Items in flight at once.")] = 1,
    model: Annotated[str | None, typer.Option(help="Model for every role.")] = None,
    set_: Annotated[list[str] | None, typer.Option("--set", help=SET_HELP)] = None,
    server: Annotated[
        str | None, typer.Option(help="LangGraph server URL to run items on.")
    ] = None,
    checkpoint: Annotated[
        str | None,
        typer.Option(
            help="Save every step of every item (sqlite:PATH or postgresql://...): an item "
            "cut off mid-debate resumes there."
        ),
    ] = None,
    compare: Annotated[
        bool, typer.Option("--compare", help="Compare the finished RUN_DIRs given as arguments.")
    ] = False,
    runs: Annotated[
        list[Path] | None, typer.Argument(help="Run directories for --compare.")
    ] = None,
    html: Annotated[
        Path | None,
        typer.Option(help="With --compare: also write the runs side by side as an HTML page here."),
    ] = None,
    langsmith_experiment: Annotated[
        str | None,
        typer.Option(
            help="Also push the run to LangSmith as this experiment (needs LANGSMITH_API_KEY)."
        ),
    ] = None,
    pages: Annotated[
        bool | None,
        typer.Option(
            "--pages/--no-pages",
            help="Write one debate page per item (RUN_DIR/pages/), linked from report.html. "
            "Default: on for runs of at most 50 items.",
            show_default=False,
        ),
    ] = None,
    progress_every: ProgressEvery = DEFAULT_EVERY_S,
    repeats: Annotated[
        int,
        typer.Option(
            help=f"Run the same sample N times (1..{MAX_REPEATS}) into RUN_DIR/repeat-1..N, "
            "repeat r with sampling seed r; RUN_DIR's reports score them together, with "
            "95% intervals over items and repeats.",
        ),
    ] = 1,
    review: Annotated[
        bool,
        typer.Option(
            "--review",
            help="Stop every item before its verdict is final; decide them with "
            "`factdebate review RUN_DIR`.",
        ),
    ] = False,
    match_compute: Annotated[
        Path | None,
        typer.Option(
            help="Self-consistency methods: pick k so the mean cost per item equals this "
            "finished RUN_DIR's, and run on its sample (its dataset, limit, seed and data).",
        ),
    ] = None,
    match_on: Annotated[
        str,
        typer.Option(
            help="With --match-compute: match LLM 'calls' or 'tokens' (a k=1 pilot on a few "
            "items, in RUN_DIR/pilot, measures a sample's tokens).",
        ),
    ] = "calls",
    estimate: Annotated[
        bool,
        typer.Option(
            "--estimate",
            help="Print the expected calls, tokens and USD of this run (from measured means) "
            "and exit; nothing runs.",
        ),
    ] = False,
    estimate_from: Annotated[
        Path | None,
        typer.Option(
            help="With --estimate: take the means per item from this earlier RUN_DIR of the "
            "same method and dataset (with --suite: a finished suite's folder)."
        ),
    ] = None,
    estimate_any_source: Annotated[
        bool,
        typer.Option(
            "--estimate-any-source",
            help="With --estimate-from: accept a run of another method or dataset; the "
            "estimate is titled as that method's figures.",
        ),
    ] = False,
    suite: Annotated[
        str | None,
        typer.Option(
            help="Run a suite into RUN_DIR/<method> folders and compare them: debate-vs-vote "
            "= --method, its paper's baselines and self-consistency at its compute (--match-on).",
        ),
    ] = None,
    skip_bad_rows: Annotated[
        bool,
        typer.Option(
            "--skip-bad-rows",
            help="With --compare: leave out damaged results.jsonl rows (and say how many) "
            "instead of refusing the run.",
        ),
    ] = False,
    evidence_from: Annotated[Path | None, typer.Option(help=EVIDENCE_FROM_HELP)] = None,
    shared_evidence: Annotated[
        bool,
        typer.Option(
            "--shared-evidence",
            help="With --suite: run the debate on live tools first, then every other member "
            "over the documents it read for each claim (claim scope), so all read one pool.",
        ),
    ] = False,
    price: Annotated[
        list[str] | None,
        typer.Option(
            help="MODEL=IN,OUT: USD per million input and output tokens of a model, over the "
            "prices file's and the defaults (repeatable)."
        ),
    ] = None,
    retry_failed: Annotated[
        bool,
        typer.Option(
            "--retry-failed/--no-retry-failed",
            help="Rerunning a RUN_DIR: run again the items that failed (no reply from their "
            "model calls, or their run raised), keeping the finished ones.",
        ),
    ] = True,
) -> None:
    """Run a method over a labelled claim or question dataset; write results and reports."""
    if estimate or estimate_from is not None:
        plan = {"suite": suite, "repeats": repeats, "match_on": match_on, "match": match_compute,
                "seed": seed}  # fmt: skip
        _estimate(method, dataset, data_dir, limit, model, set_, price, estimate_from, plan,
                  estimate_any_source)  # fmt: skip
        return
    try:  # --price values hold for every report this process writes (run or compare)
        from factdebate.bench.judging.prices import add_prices, load_prices

        add_prices(price or [])
        prices = load_prices()
    except FactDebateError as exc:
        fail(str(exc))
    if compare:
        from factdebate.bench import compare_runs

        if not runs:
            fail("--compare needs one or more RUN_DIR arguments")
        from factdebate.tools.core.files import lies_inside

        for run in runs:  # the page would overwrite the run's own report
            if html is not None and lies_inside(html, run):
                fail(f"--html {html}: lies inside the run {run}; write the page outside the runs")
        try:
            print_markdown(
                compare_runs(list(runs or []), prices=prices, skip_bad_rows=skip_bad_rows)
            )
        except FactDebateError as exc:
            fail(str(exc))
        if html is not None:
            from factdebate.bench.judging.page import write_compare_page

            save_page(
                lambda: write_compare_page(
                    html, list(runs or []), prices=prices, skip_bad_rows=skip_bad_rows
                ),
                what="comparison page",
            )
        return
    if html is not None:
        fail("--html goes with --compare; a run writes RUN_DIR/report.html itself")
    if out_dir is None:
        fail("--out RUN_DIR is required")
    assert out_dir is not None
    from factdebate.datasets import DATASETS

    try:
        check_dataset(dataset, list(DATASETS))
        check_count("--concurrency", concurrency, 1, MAX_CONCURRENCY)
        if limit is not None:
            check_count("--limit", limit, 1)
        check_count("--repeats", repeats, 1, MAX_REPEATS)
    except FactDebateError as exc:
        fail(str(exc))
    if repeats > 1 and (review or langsmith_experiment is not None):
        fail("--repeats makes several runs: drop --review / --langsmith-experiment")
    flags = {"model": model, "evidence_from": None if evidence_from is None else str(evidence_from)}
    context = checked_settings(method, "any", set_, flags)  # before the heavy imports
    if review:
        context["review"] = True
    if suite is not None:
        if match_compute is not None or review or langsmith_experiment is not None:
            fail("--suite runs its own members: drop --match-compute, --review, --langsmith-...")
        from factdebate.cli.suite import run_suite_command

        options = {
            "repeats": repeats,
            "data_dir": data_dir,
            "limit": limit,
            "seed": seed,
            "concurrency": concurrency,
            "server_url": server,
            "checkpoint": checkpoint,
            "pages": pages,
            "retry_failed": retry_failed,
        }
        run_suite_command(
            suite,
            method,
            dataset,
            out_dir,
            context,
            match_on=match_on,
            progress_every=progress_every,
            options=options,
            shared_evidence=shared_evidence,
        )
        return
    if match_compute is not None:
        dataset, data_dir, limit, seed = _match_compute(
            match_compute, match_on, method, out_dir, context, concurrency
        )
    from factdebate.bench.running.repeats import run_repeats
    from factdebate.datasets import ANSWER_TASK, dataset_task

    try:
        if langsmith_experiment is not None:
            from factdebate.bench.running.langsmith import require_api_key

            require_api_key()
        score = "EM" if dataset_task(dataset) == ANSWER_TASK else "acc"
        label = f"{method} on {dataset}"
        with bench_progress(label, progress_every, score, method, context) as progress:
            run_repeats(
                method,
                dataset,
                out_dir,
                repeats=repeats,
                data_dir=data_dir,
                limit=limit,
                seed=seed,
                concurrency=concurrency,
                context=context,
                server_url=server,
                progress=progress,
                checkpoint=checkpoint,
                pages=pages,
                retry_failed=retry_failed,
            )
    except FactDebateError as exc:
        fail(str(exc))
    metrics = json.loads((out_dir / "metrics.json").read_text(encoding="utf-8"))
    for issue in metrics.get("run", {}).get("load_issues") or []:
        err.print(f"skipped malformed record: {issue}", markup=False, soft_wrap=True)
    for note in metrics.get("run", {}).get("notes") or []:  # e.g. HoVer run claim-only
        err.print(f"note: {note}", markup=False, soft_wrap=True)
    print_markdown((out_dir / "report.md").read_text(encoding="utf-8"))
    if context.get("review"):
        from factdebate.bench.running.invokers import run_id_of

        how = str(out_dir)
        if server is not None:  # the queue is the run's threads on the server
            how = f"--server {server} --run {run_id_of(str(out_dir.resolve()))}"
        out.print(
            f"decide the review queue with: factdebate review {how}", markup=False, soft_wrap=True
        )
    if (out_dir / "report.html").is_file():
        out.print(
            f"report page: {(out_dir / 'report.html').resolve()}", markup=False, soft_wrap=True
        )
    if langsmith_experiment is not None:
        from factdebate.bench.running.langsmith import push_run

        try:
            pushed = push_run(out_dir, experiment=langsmith_experiment)
        except Exception as exc:  # any SDK or network error: one line, results stay on disk
            fail(f"LangSmith export failed: {type(exc).__name__}: {exc}".splitlines()[0])
        out.print(
            f"LangSmith experiment {pushed['experiment']}: {pushed['items']} items pushed",
            markup=False,
        )
    _exit_on_failed(metrics)


FAILED_ITEMS_EXIT = 3
"""Exit status of a bench that finished with failed items (no reply from their model calls)."""


def _exit_on_failed(metrics: dict[str, Any]) -> None:
    """End with one line and exit status 3 when items failed, naming the command to retry them."""
    failed = int(metrics.get("failed") or 0)
    if not failed:
        return
    import shlex
    import sys

    from factdebate.tools.core.secrets import redact

    again = shlex.join(["factdebate", *(a for a in sys.argv[1:] if a != "--no-retry-failed")])
    err.print(
        redact(
            f"{failed} of {metrics['n']} items failed (no reply from their model calls, or "
            f"their run raised) and are not scored; retry them with: {again}"
        ),
        markup=False,
        soft_wrap=True,
    )
    raise typer.Exit(FAILED_ITEMS_EXIT)


def _estimate(
    method: str,
    dataset: str,
    data_dir: Path | None,
    limit: int | None,
    model: str | None,
    pairs: list[str] | None,
    prices: list[str] | None,
    from_run: Path | None,
    plan: dict[str, Any],
    any_source: bool,
) -> None:
    """Print a run's (or a suite's) expected calls, tokens and USD; import no graph, call no model.

    ``plan`` holds what else the command would run: ``suite``, ``repeats``, ``match_on`` and
    ``match`` (a ``--match-compute`` run: its sample, at the ``k`` it gives).
    """
    from factdebate.bench.judging.estimate import (
        estimate_run,
        estimate_suite,
        matched_sample,
        render_estimate,
        render_suite_estimate,
    )
    from factdebate.bench.judging.prices import load_prices
    from factdebate.datasets import DATASETS

    try:
        check_dataset(dataset, list(DATASETS))
        if limit is not None:
            check_count("--limit", limit, 1)
        check_count("--repeats", plan["repeats"], 1, MAX_REPEATS)
    except FactDebateError as exc:
        fail(str(exc))
    context = checked_settings(method, "any", pairs, {"model": model})
    try:
        if plan.get("match") is not None:  # the matched run's sample, at the k it gives
            matched = matched_sample(method, plan["match"], plan["match_on"], context)
            dataset, data_dir, limit = matched["dataset"], matched["data_dir"], matched["limit"]
            context["k"] = matched["k"]
        if plan["suite"] is not None:
            suite = estimate_suite(
                plan["suite"], method, dataset, limit, context, load_prices(prices or []),
                match_on=plan["match_on"], data_dir=data_dir, from_dir=from_run,
                repeats=plan["repeats"], seed=plan.get("seed", 0),
            )  # fmt: skip
            print_markdown(render_suite_estimate(suite))
            return
        found = estimate_run(
            method, dataset, limit, context, load_prices(prices or []), data_dir=data_dir,
            from_run=from_run, repeats=plan["repeats"], any_source=any_source,
            seed=plan.get("seed", 0),
        )  # fmt: skip
    except FactDebateError as exc:
        fail(str(exc))
    print_markdown(render_estimate(found))


def _match_compute(
    run_dir: Path,
    on: str,
    method: str,
    out_dir: Path,
    context: dict[str, Any],
    concurrency: int,
) -> tuple[str, Path | None, int | None, int]:
    """Set ``k`` to match ``run_dir``'s compute; return its dataset, data root, limit, seed."""
    from factdebate.bench.running.matched import match_k

    try:
        plan = match_k(method, run_dir, on, out_dir, context, concurrency)
    except FactDebateError as exc:
        fail(str(exc))
    context["k"] = plan["k"]
    target = plan["target"]
    err.print(
        f"matching {run_dir} ({target['method']}, {target['items']} items): "
        f"{plan['target_per_item']:g} {on} per item / {plan['per_sample']:g} per sample "
        f"-> k = {plan['k']}",
        markup=False,
        soft_wrap=True,
    )
    root = Path(target["data_dir"]) if target["data_dir"] else None
    return target["dataset"], root, target["limit"], target["seed"]


def bench_retrieval(
    out_dir: Annotated[Path, typer.Option("--out", help="Where to write the results.")],
    dataset: Annotated[str, typer.Option(help="scifact or fever-mini.")] = "scifact",
    data_dir: Annotated[Path | None, typer.Option(help="Datasets root folder.")] = None,
    limit: Annotated[int | None, typer.Option(help="Sample this many claims.")] = None,
    split: Annotated[str, typer.Option(help="SciFact claims: dev or train.")] = "dev",
    rebuild: Annotated[
        bool, typer.Option(help="Re-index even if the same corpus is already indexed.")
    ] = False,
) -> None:
    """Recall@k, hit@k, MRR, build time and ms/query of every engine, as debaters call them."""
    from factdebate.bench.running.retrieval import render_retrieval, run_retrieval_bench

    try:
        result = run_retrieval_bench(
            dataset, data_dir, limit, out_dir, split=split, rebuild=rebuild
        )
    except FactDebateError as exc:
        fail(str(exc))
    print_markdown(render_retrieval(result))


def register(app: typer.Typer) -> None:
    """Add `bench`, `bench-retrieval` to the `factdebate` command."""
    app.command(
        epilog="Example: factdebate bench --method tool-mad --dataset scifact --limit 20 "
        "--out runs/tm-scifact (then open runs/tm-scifact/report.html)"
    )(bench)
    app.command(
        "bench-retrieval",
        epilog="Example: factdebate bench-retrieval --dataset scifact --out runs/retrieval",
    )(bench_retrieval)
