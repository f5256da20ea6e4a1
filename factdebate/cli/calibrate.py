"""`factdebate calibrate-gate` and `calibrate-escalation`: rules chosen from finished bench runs."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Annotated

import typer

from factdebate.cli.console import fail, out, print_markdown
from factdebate.tools.core.errors import FactDebateError

EPILOG = (
    "Example: factdebate calibrate-gate runs/tm-fever --out runs/tm-fever/calibration "
    "(the rule and its defaults: docs/methods/tool-mad.md)"
)


def calibrate_gate(
    run_dirs: Annotated[
        list[Path], typer.Argument(help="Finished Tool-MAD bench run folders (results.jsonl).")
    ],
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out", help="Where to write calibration.md/.png (default RUN_DIR/calibration)."
        ),
    ] = None,
    keep: Annotated[
        float, typer.Option(help="Share of right agreements each threshold must keep, (0, 1].")
    ] = 0.9,
    reject: Annotated[
        float, typer.Option(help="Share of wrong agreements to reject (a target, reported), 0..1.")
    ] = 0.5,
    ceiling_faithfulness: Annotated[
        float, typer.Option(help="Highest faithfulness threshold proposed (the paper's), 0..1.")
    ] = 0.7,
    ceiling_relevance: Annotated[
        float, typer.Option(help="Highest relevance threshold proposed (the paper's), 0..1.")
    ] = 0.8,
    name: Annotated[
        str, typer.Option(help="Profile name for the proposed row of the profile table.")
    ] = "calibrated",
    skip_bad_rows: Annotated[
        bool,
        typer.Option(
            "--skip-bad-rows",
            help="Leave out damaged results.jsonl rows (named in the report) instead of refusing.",
        ),
    ] = False,
) -> None:
    """Propose stability thresholds from the scores of right and wrong agreements (Fig. 3)."""
    from factdebate.bench.judging.calibration import calibrate, profile_line, report, write

    _refuse_other_methods(run_dirs)
    try:
        found = calibrate(
            run_dirs, keep, reject, (ceiling_faithfulness, ceiling_relevance), skip_bad_rows
        )
        paths = write(found, out_dir or run_dirs[0] / "calibration")
    except FactDebateError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write the calibration: {exc.strerror or exc}")
    print_markdown(report(found))
    out.print("Profile row for nodes/tool_mad/gate.py (PROFILES):", markup=False)
    print_markdown(profile_line(found, name, datetime.date.today().isoformat()))
    for path in paths:
        out.print(f"written: {path.resolve()}", markup=False, soft_wrap=True)


def _refuse_other_methods(run_dirs: list[Path]) -> None:
    """One line for a run folder of a method without Tool-MAD's stability gate."""
    from dataclasses import fields

    from factdebate.runs.folder import read_run
    from factdebate.settings import context_class

    for run_dir in run_dirs:
        try:
            method = read_run(run_dir).get("method")
            names = set() if method is None else {f.name for f in fields(context_class(method))}
            gated = method is None or "stability_score" in names
        except FactDebateError as exc:
            fail(str(exc))
        if not gated:
            fail(
                f"{run_dir} is a run of {method}, which has no stability gate: calibrate-gate "
                "reads the debaters' scores of Tool-MAD runs (tool-mad and its ablations)"
            )


ESCALATION_EPILOG = (
    "Example: factdebate bench --method escalate-tool-mad --set screen_all=true --out "
    "runs/esc; factdebate calibrate-escalation runs/esc (docs/methods/escalation.md)"
)


def calibrate_escalation(
    run_dirs: Annotated[
        list[Path],
        typer.Argument(help="Finished escalate-* bench run folders made with screen_all=true."),
    ],
    skip_bad_rows: Annotated[
        bool,
        typer.Option(
            "--skip-bad-rows",
            help="Leave out damaged results.jsonl rows (named in the report) instead of refusing.",
        ),
    ] = False,
) -> None:
    """Propose screen_share: the largest saving within one item per 50 of the method's accuracy."""
    from factdebate.bench.judging.escalation import read_screened, report

    skipped: list[str] = []
    try:
        items = read_screened(run_dirs, skip_bad_rows, skipped)
        lines = report(items, skipped)
    except FactDebateError as exc:
        fail(str(exc))
    print_markdown("\n".join(lines))


def register(app: typer.Typer) -> None:
    """Add `calibrate-gate` and `calibrate-escalation` to the `factdebate` command."""
    app.command("calibrate-gate", epilog=EPILOG)(calibrate_gate)
    app.command("calibrate-escalation", epilog=ESCALATION_EPILOG)(calibrate_escalation)
