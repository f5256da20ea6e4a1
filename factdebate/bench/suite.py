"""Suites: several bench runs on one sample, compared in one table and page.

``debate-vs-vote`` runs a debate method, every baseline its paper reports, and the
self-consistency baseline at the debate's compute (``k`` chosen from the debate run's mean
LLM calls or tokens per item, see ``matching``), each into its own run folder under the
suite's folder, then writes ``comparison.md`` and ``comparison.html`` (scores with their
intervals, paired tests, cost per right answer, the accuracy-cost plot). Every member run
resumes like any bench run: the same command picks a killed suite up where it stopped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factdebate.bench.items import check_method_fits
from factdebate.bench.prices import Price
from factdebate.graphs.registry import METHODS, MethodSpec, resolve
from factdebate.tools.core.errors import SettingsError
from factdebate.tools.core.files import write_atomic

SUITES = {
    "debate-vs-vote": "a debate method, its paper's baselines and self-consistency at its compute",
}
"""Every suite, with what it runs."""
SELF_CONSISTENCY = "self-consistency"
"""The catalog family whose ``k`` the suite matches to the debate's compute."""
COMPARISON = "comparison.md"
COMPARISON_PAGE = "comparison.html"


@dataclass(frozen=True)
class SuitePlan:
    """The runs of one suite, in the order they run (the debate first: it sets the compute)."""

    method: str
    baselines: tuple[str, ...]
    matched: str  # the self-consistency method run at the debate's compute

    @property
    def members(self) -> tuple[str, ...]:
        """Every method of the suite, in run order."""
        return (self.method, *self.baselines, self.matched)


def matched_method(spec: MethodSpec) -> str:
    """The self-consistency method that reads what ``spec`` reads (evidence or not)."""
    fitting = [
        s
        for s in METHODS.values()
        if s.family == SELF_CONSISTENCY
        and s.input_kind == spec.input_kind
        and s.retrieves == spec.retrieves
    ]
    if not fitting:
        raise SettingsError(f"no self-consistency method reads {spec.input_kind}s like {spec.name}")
    return fitting[0].name


def plan_suite(suite: str, method: str, dataset: str) -> SuitePlan:
    """What ``suite`` runs for ``method`` on ``dataset``.

    Raises:
        SettingsError: an unknown suite, or a method that is not a paper's own method.
        DatasetError: the method cannot read the dataset's items.
    """
    if suite not in SUITES:
        raise SettingsError(f"unknown suite {suite!r}; choose from: {', '.join(SUITES)}")
    spec = resolve(method)
    if spec.role != "method" or spec.family == SELF_CONSISTENCY:
        papers = sorted(
            m for m, s in METHODS.items() if s.role == "method" and s.family != SELF_CONSISTENCY
        )
        raise SettingsError(
            f"--suite {suite} compares a paper's method with its baselines: use one of "
            f"{', '.join(papers)}, not {spec.name}"
        )
    check_method_fits(spec, dataset)
    baselines = tuple(
        name
        for name, s in METHODS.items()
        if s.family == spec.family and s.role == "baseline" and s.input_kind == spec.input_kind
    )
    return SuitePlan(spec.name, baselines, matched_method(spec))


def check_shared_settings(plan: SuitePlan, context: dict[str, Any]) -> None:
    """Refuse a setting that some member method does not take (each gets the same settings).

    Raises:
        SettingsError: naming the setting and the method without it.
    """
    from dataclasses import fields

    for name in plan.members:
        known = {f.name for f in fields(resolve(name).context_class())}
        for key in context:
            if key not in known:
                raise SettingsError(
                    f"--set {key}: {name} has no such setting, and the suite sends the same "
                    "settings to every method (keep to the shared ones, e.g. model)"
                )


def check_suite(
    plan: SuitePlan,
    dataset: str,
    out_dir: Path,
    context: dict[str, Any],
    *,
    match_on: str,
    options: Mapping[str, Any],
) -> None:
    """Check every option and every member's settings before the first member runs.

    Nothing here calls a model: a suite refused here has spent nothing. Checked: the matching
    rule, each member's settings (names and values, under that member's own settings class),
    that each member reads the dataset, ``k`` (the suite picks it), ``--repeats`` and its
    seed setting, ``--checkpoint`` with ``--server``, each member's run folder, and that the
    sample loads.

    Raises:
        SettingsError: a bad option or setting, naming it (and the member it fails for).
        DatasetError: the dataset cannot be loaded or a member cannot read it.
        RunFolderError: a member's run folder cannot be used.
    """
    from factdebate.bench.items import load_items
    from factdebate.bench.matching import MATCH_ON
    from factdebate.bench.repeats import SEED_SETTING
    from factdebate.runs.folder import check_out_dir
    from factdebate.settings import MAX_REPEATS, check_count

    if match_on not in MATCH_ON:
        raise SettingsError(f"--match-on must be calls or tokens, got {match_on!r}")
    if "k" in context:
        raise SettingsError("--suite picks the vote's k itself (--match-on): drop --set k=...")
    check_shared_settings(plan, context)
    for name in plan.members:
        spec = resolve(name)
        check_method_fits(spec, dataset)
        try:
            spec.context_class()(**context)
        except (TypeError, ValueError) as exc:
            raise SettingsError(f"--set for {name}: {str(exc).splitlines()[0]}") from None
        check_out_dir(Path(out_dir) / name)
    repeats = int(options.get("repeats") or 1)
    check_count("--repeats", repeats, 1, MAX_REPEATS)
    if repeats > 1 and SEED_SETTING in context:
        raise SettingsError(f"--repeats sets {SEED_SETTING} itself (repeat r: seed r); drop it")
    if options.get("checkpoint") is not None and options.get("server_url") is not None:
        raise SettingsError("--checkpoint is for local runs: a server keeps its own threads")
    load_items(
        dataset, options.get("data_dir"), options.get("limit"), int(options.get("seed") or 0)
    )


Runner = Callable[[str, Path, dict[str, Any]], None]
"""Runs one member: ``(method, run folder, settings)``."""
Matcher = Callable[[str, Path, Path, dict[str, Any]], int]
"""Chooses ``k``: ``(self-consistency method, debate run folder, its own folder, settings)``."""


def run_suite(
    plan: SuitePlan, out_dir: Path, context: dict[str, Any], run: Runner, match: Matcher
) -> list[Path]:
    """Run every member of ``plan`` into ``out_dir/<method>``; the run folders, in order."""
    out_dir = Path(out_dir)
    folders: list[Path] = []
    for name in (plan.method, *plan.baselines):
        folder = out_dir / name
        run(name, folder, dict(context))
        folders.append(folder)
    matched = out_dir / plan.matched
    k = match(plan.matched, folders[0], matched, dict(context))
    run(plan.matched, matched, {**context, "k": k})
    folders.append(matched)
    return folders


def write_comparison(
    out_dir: Path, folders: list[Path], prices: Mapping[str, Price] | None = None
) -> str:
    """Write ``comparison.md`` and ``comparison.html`` of the suite's runs; the Markdown."""
    from factdebate.bench.page import write_compare_page
    from factdebate.bench.report import compare_runs

    table = compare_runs(folders, prices=prices)
    write_atomic(Path(out_dir) / COMPARISON, table)
    write_compare_page(Path(out_dir) / COMPARISON_PAGE, folders, prices=prices)
    return table
