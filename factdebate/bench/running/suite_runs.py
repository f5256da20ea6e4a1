"""Running a suite: every member checked before the first call, then run in order.

The plan (which members, in which order) and the comparison they end in are
``judging.suite``; here each member is run into its own folder and the self-consistency
member's ``k`` is chosen from the debate run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from factdebate.bench.judging.suite import SuitePlan, check_shared_settings, pool_settings
from factdebate.datasets import check_method_fits
from factdebate.graphs.registry import resolve
from factdebate.tools.core.errors import SettingsError


def check_suite(
    plan: SuitePlan,
    dataset: str,
    out_dir: Path,
    context: dict[str, Any],
    *,
    match_on: str,
    options: Mapping[str, Any],
    shared_evidence: bool = False,
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
    from factdebate.bench.judging.matching import MATCH_ON
    from factdebate.bench.running.items import load_items
    from factdebate.bench.running.repeats import SEED_SETTING
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
    if shared_evidence and options.get("server_url") is not None:
        raise SettingsError(
            "--shared-evidence is for local runs: the pool is a run folder here, not on the server"
        )
    if shared_evidence and context.get("evidence_from"):
        raise SettingsError(
            "--shared-evidence makes the debate's own run the evidence: drop --evidence-from"
        )
    load_items(
        dataset, options.get("data_dir"), options.get("limit"), int(options.get("seed") or 0)
    )


Runner = Callable[[str, Path, dict[str, Any]], None]
"""Runs one member: ``(method, run folder, settings)``."""
Matcher = Callable[[str, Path, Path, dict[str, Any]], int]
"""Chooses ``k``: ``(self-consistency method, debate run folder, its own folder, settings)``."""


def run_suite(
    plan: SuitePlan,
    out_dir: Path,
    context: dict[str, Any],
    run: Runner,
    match: Matcher,
    *,
    shared_evidence: bool = False,
) -> list[Path]:
    """Run every member of ``plan`` into ``out_dir/<method>``; the run folders, in order.

    With ``shared_evidence`` every member after the debate reads the debate's evidence pool
    (``pool_settings``) instead of live tools.
    """
    out_dir = Path(out_dir)
    folders: list[Path] = []
    shared = dict(context)
    for name in plan.members[:-1]:  # the vote last: its k is matched to the debate's compute
        folder = out_dir / name
        run(name, folder, dict(context if name == plan.method else shared))
        folders.append(folder)
        if name == plan.method and shared_evidence:
            shared = {**context, **pool_settings(folder)}
    matched = out_dir / plan.matched
    k = match(plan.matched, folders[0], matched, dict(shared))
    run(plan.matched, matched, {**shared, "k": k})
    folders.append(matched)
    return folders
