"""The `factdebate index` command's work: stream a corpus into an index with progress lines."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

SHOWN_PROBLEMS = 200  # bad records listed one by one; the rest are only counted

Tracker = Callable[[int, int | None, str], None]


def run_index(
    path: Path,
    collection: str,
    milvus_uri: str,
    fmt: str,
    *,
    progress: Callable[[], AbstractContextManager[Tracker]],
    fail: Callable[[str], None],  # prints a one-line error and exits
    err: Any,
    out: Any,
) -> None:
    """Check the arguments, stream ``path`` into ``collection``, report what was indexed.

    Progress counts documents against the corpus's record count (one quick pass first), so
    the time left is shown; bad records are listed (the first ``SHOWN_PROBLEMS``) and counted.
    """
    from factdebate.tools.retrieval.corpus import FORMATS, CorpusError, count_records
    from factdebate.tools.retrieval.index import index_path
    from factdebate.tools.retrieval.manifest import check_name

    if fmt not in FORMATS:
        fail(f"unknown --format {fmt!r}: expected one of {', '.join(FORMATS)}")
        return
    skipped = [0]

    def problem(text: str) -> None:
        skipped[0] += 1
        if skipped[0] <= SHOWN_PROBLEMS:
            err.print(f"skipped {text}", markup=False, highlight=False, soft_wrap=True)

    try:
        check_name(collection)
        total = count_records(path, fmt)
    except (CorpusError, ValueError, OSError) as exc:
        fail(str(exc))
        return
    try:
        with progress() as track:

            def batch(documents: int, passages: int) -> None:
                track(documents, max(total, documents), f"{passages} passages")

            manifest = index_path(
                path, collection, milvus_uri, fmt=fmt, problem=problem, on_batch=batch
            )
    except (CorpusError, ValueError) as exc:
        fail(str(exc))
        return
    if skipped[0]:
        err.print(f"skipped {skipped[0]} bad record(s)", markup=False, highlight=False)
    out.print(
        f"indexed {manifest.documents} documents as {manifest.passages} passages into "
        f"collection {collection!r}"
    )
