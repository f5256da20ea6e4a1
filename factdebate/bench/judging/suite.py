"""Suites: what a suite runs, and its runs compared in one table and page.

``debate-vs-vote`` runs a debate method, every baseline its paper reports, and the
self-consistency baseline at the debate's compute (``k`` chosen from the debate run's mean
LLM calls or tokens per item, see ``matching``), each into its own run folder under the
suite's folder, then writes ``comparison.md`` and ``comparison.html`` (scores with their
intervals, paired tests, cost per right answer, the accuracy-cost plot). Every member run
resumes like any bench run: the same command picks a killed suite up where it stopped.
Checking and running the members is ``running.suite_runs``; the plan and the comparison
live here.

With ``shared_evidence`` the debate runs first on live tools (its evidence log records what
it read) and every other member reads that log in ``claim`` scope: any query about an item is
answered from the documents the debate read for it, so the table compares methods over one
evidence pool, and the comparison says which member read what.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factdebate.bench.judging.prices import Price
from factdebate.datasets import check_method_fits
from factdebate.graphs.registry import METHODS, MethodSpec, resolve
from factdebate.tools.core.errors import FactDebateError, SettingsError
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
    escalation: str = ""  # the method's escalation (screen first, debate where unsure), if any

    @property
    def members(self) -> tuple[str, ...]:
        """Every method of the suite, in run order (the escalation right after its debate)."""
        escalation = (self.escalation,) if self.escalation else ()
        return (self.method, *escalation, *self.baselines, self.matched)


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
    if spec.role != "method" or spec.family == SELF_CONSISTENCY or spec.screens:
        papers = sorted(
            m
            for m, s in METHODS.items()
            if s.role == "method" and s.family != SELF_CONSISTENCY and not s.screens
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
    escalation = next((n for n, s in METHODS.items() if s.screens == spec.name), "")
    return SuitePlan(spec.name, baselines, matched_method(spec), escalation)


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


def pool_settings(debate: Path) -> dict[str, str]:
    """The settings that make a member read the debate run's evidence pool, in claim scope.

    A repeated debate (``--repeats``) lends the documents of all its repeats.
    """
    return {"evidence_from": str(debate), "evidence_scope": "claim"}


def _evidence_read(folder: Path) -> dict[str, Any]:
    """What frozen evidence the run in ``folder`` read (its ``run.json``), {} for live tools."""
    from factdebate.bench.judging.rows import REPEAT_PREFIX
    from factdebate.runs.reader import read_run_info

    for where in (folder, folder / f"{REPEAT_PREFIX}1"):
        try:
            found = (read_run_info(where).model_extra or {}).get("evidence")
        except FactDebateError:  # no run there, or an unreadable one: nothing it read
            continue
        if isinstance(found, dict) and found.get("from"):
            return found
    return {}


def _logged(folder: Path) -> bool:
    """Whether the run in ``folder`` logged any call (a repeated run: in any repeat)."""
    from factdebate.evidence import LOG_DIR

    return any(folder.glob(f"{LOG_DIR}/*.json")) or any(folder.glob(f"*/{LOG_DIR}/*.json"))


def evidence_lines(folders: list[Path]) -> list[str]:
    """Which evidence each member read: live tools, another run's pool, or none at all.

    Empty when every member read live tools (a suite without ``--shared-evidence``).
    """
    read = {folder: _evidence_read(folder) for folder in folders}
    if not any(read.values()):
        return []
    lines = ["", "## Evidence", "", "| method | evidence it read |", "|---|---|"]
    for folder, found in read.items():
        if folder.name in METHODS and not METHODS[folder.name].retrieves:
            what = "none: it reads the claim alone"
        elif found:
            pool = f"the pool of {Path(str(found['from'])).name}"
            facts = f"{found.get('scope')} scope, snapshot {str(found.get('snapshot', ''))[:12]}"
            what = (
                f"{pool} ({facts}): no live tool"
                if _logged(folder)
                else f"none: it made no retrieval call (given {pool}, {facts})"
            )
        else:
            what = "live tools (recorded in its evidence log)"
        lines.append(f"| {folder.name} | {what} |")
    return [*lines, ""]


def write_comparison(
    out_dir: Path, folders: list[Path], prices: Mapping[str, Price] | None = None
) -> str:
    """Write ``comparison.md`` and ``comparison.html`` of the suite's runs; the Markdown."""
    from factdebate.bench.judging.page import write_compare_page
    from factdebate.bench.judging.report import compare_runs

    table = compare_runs(folders, prices=prices) + "\n".join(evidence_lines(folders))
    write_atomic(Path(out_dir) / COMPARISON, table)
    write_compare_page(Path(out_dir) / COMPARISON_PAGE, folders, prices=prices)
    return table
