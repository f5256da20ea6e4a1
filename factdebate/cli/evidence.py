"""`factdebate evidence`: export runs' evidence as one snapshot file, and summarise a snapshot."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from factdebate.cli.console import fail, out, print_json, print_markdown
from factdebate.tools.core.errors import FactDebateError

evidence_app = typer.Typer(
    no_args_is_help=True,
    help="Frozen evidence: export what runs read, summarise a snapshot.",
)


@evidence_app.command(
    "export", epilog="Example: factdebate evidence export runs/toolmad --out toolmad.evidence"
)
def export_command(
    runs: Annotated[
        list[Path],
        typer.Argument(help="Bench run folders (or snapshots) whose evidence to export."),
    ],
    out_file: Annotated[Path, typer.Option("--out", help="The snapshot file to write.")],
) -> None:
    """Write the evidence of RUN... as one snapshot file: documents once, the calls, provenance."""
    from factdebate.evidence import export_snapshot

    try:
        snapshot = export_snapshot(runs, out_file)
    except FactDebateError as exc:
        fail(str(exc))
    summary = snapshot.summary()
    out.print(
        f"snapshot {out_file}: {summary['calls']} calls, {summary['documents']} documents, "
        f"{summary['items']} items (sha256 {summary['digest'][:12]})",
        markup=False,
        soft_wrap=True,
    )


def _render(path: Path, summary: dict[str, Any]) -> str:
    """The summary of a snapshot as a small markdown table."""
    read = summary.get("read") or {}
    rows = [
        ("items", summary["items"]),
        ("calls", summary["calls"]),
        ("documents", summary["documents"]),
        ("backends", ", ".join(summary["backends"]) or "-"),
        ("tools", ", ".join(summary["tools"]) or "-"),
        ("datasets", ", ".join(summary["datasets"]) or "-"),
        ("first call", summary["first"] or "-"),
        ("last call", summary["last"] or "-"),
        ("scopes it serves", ", ".join(summary["scopes"])),
        ("factdebate version", summary["project_version"] or "-"),
        ("content hash", summary["digest"]),
    ]
    if read:
        rows.append(("replayed from", f"{read.get('snapshot', '')[:12]} ({read.get('scope')})"))
    lines = [f"Evidence snapshot {path}", "", "| | |", "|---|---|"]
    lines += [f"| {name} | {value} |" for name, value in rows]
    return "\n".join(lines)


@evidence_app.command("show", epilog="Example: factdebate evidence show toolmad.evidence")
def show_command(
    path: Annotated[
        Path, typer.Argument(help="A snapshot file, a run folder or a knowledge store.")
    ],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object, nothing else.")
    ] = False,
) -> None:
    """Summarise a snapshot: items, calls, documents, backends and the dates of its calls."""
    from factdebate.evidence import describe

    try:
        summary = describe(path)
    except FactDebateError as exc:
        fail(str(exc))
    if as_json:
        print_json(summary)
        return
    print_markdown(_render(path, summary))


def register(app: typer.Typer) -> None:
    """Add `evidence export` and `evidence show` to the `factdebate` command."""
    app.add_typer(
        evidence_app,
        name="evidence",
        epilog="Example: factdebate evidence export runs/toolmad --out toolmad.evidence",
    )
