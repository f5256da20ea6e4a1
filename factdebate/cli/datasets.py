"""`factdebate datasets` (every dataset, its source, licence and files) and `datasets get`."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from factdebate.cli.console import err, fail, out

datasets_app = typer.Typer(
    invoke_without_command=True,
    no_args_is_help=False,
    help="Every dataset with its official source, licence and files; `get NAME` fetches one.",
)


@datasets_app.callback()
def list_datasets(ctx: typer.Context) -> None:
    """Every dataset with its official source, licence and files; `get NAME` fetches one."""
    if ctx.invoked_subcommand is not None:
        return
    from factdebate.datasets import CATALOG, dataset_folder, datasets_root
    from factdebate.datasets.records import download_root
    from factdebate.datasets.sources import RELEASES

    root = datasets_root()
    out.print(
        f"datasets are read from {root} (or --data-dir); `datasets get` writes into "
        f"{download_root()} (FACTDEBATE_DATASETS, else the factdebate home)",
        markup=False,
        soft_wrap=True,
    )
    for name, spec in CATALOG.items():
        release = RELEASES[name]
        folder = dataset_folder(name, root)
        here = "present" if folder is not None and folder.exists() else "absent"
        how = "factdebate datasets get " + name if release.downloads else "by hand: " + release.how
        out.print(f"{name} ({spec.task}, {here}): {spec.description}", markup=False, soft_wrap=True)
        for key, value in (
            ("source", release.source),
            ("licence", release.licence),
            ("files", ", ".join(release.files)),
            ("get", how),
        ):
            out.print(f"  {key}: {value}", markup=False, soft_wrap=True)


@datasets_app.command("get", epilog="Example: factdebate datasets get fever-mini")
def get(
    name: Annotated[
        str, typer.Argument(help="The dataset to download (see `factdebate datasets`).")
    ],
    mirror: Annotated[
        str | None,
        typer.Option(
            "--mirror",
            help="A base URL serving the official files under their own paths "
            "(default: $FACTDEBATE_DATASETS_MIRROR, else the official hosts).",
        ),
    ] = None,
    deadline: Annotated[
        float | None,
        typer.Option(
            "--deadline",
            help="Seconds the whole download may take (every file, every retry; "
            "default 10800). A cut download keeps its partial file.",
        ),
    ] = None,
    min_rate: Annotated[
        int | None,
        typer.Option(
            "--min-rate",
            help="Bytes a second under which a download is cut, over 30 s (default 1024; 0: none).",
        ),
    ] = None,
) -> None:
    """Download a dataset's official release into the datasets folder, checked by SHA-256.

    A dropped connection is resumed at once; an interrupted or cut download resumes when the
    command is run again; files already there and checked are not fetched twice.
    """
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

    from factdebate.datasets import DatasetError, dataset, dataset_folder
    from factdebate.datasets.download import MIRROR_ENV, limits
    from factdebate.datasets.records import download_root
    from factdebate.datasets.sources import get_release

    try:
        dataset(name)
        bounds = limits(deadline, min_rate)
    except DatasetError as exc:
        fail(str(exc))
    root = download_root()
    if root.exists() and not root.is_dir():
        fail(f"the datasets folder {root} is not a folder (FACTDEBATE_DATASETS names a file?)")
    folder = dataset_folder(name, root)
    assert folder is not None  # a root was given
    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn())
    with Progress(*columns, TransferSpeedColumn(), console=err, transient=True) as bar:
        tasks: dict[str, int] = {}

        def progress(file: str, done: int, total: int) -> None:
            if file not in tasks:
                tasks[file] = int(bar.add_task(file, total=total))
            bar.update(tasks[file], completed=done)  # type: ignore[arg-type]

        try:
            source = mirror or os.environ.get(MIRROR_ENV)
            fetched = get_release(name, folder, source, progress, bounds, root)
        except DatasetError as exc:
            fail(str(exc))
    kept = "downloaded " + ", ".join(fetched) if fetched else "already there, checked"
    out.print(f"{name}: {kept}; ready in {folder}", markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add `datasets` (and `datasets get`) to the `factdebate` command."""
    app.add_typer(
        datasets_app, name="datasets", epilog="Example: factdebate datasets get fever-mini"
    )
