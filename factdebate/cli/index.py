"""`factdebate index` and `index-corpus`: build retrieval indexes from documents."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from factdebate.cli.common import (
    ProgressEvery,
)
from factdebate.cli.console import err, fail, out
from factdebate.cli.progress import DEFAULT_EVERY_S, track_progress
from factdebate.tools.core.errors import FactDebateError

Lexical = Annotated[
    str,
    typer.Option(
        "--lexical",
        help="Where the BM25 index goes: auto (Milvus when it has full-text search: 2.5+ or "
        "Milvus Lite 3; else bm25s), milvus, or bm25s (shards in this machine's FACTDEBATE_HOME). "
        "Default: FACTDEBATE_LEXICAL, else auto.",
    ),
]


def index(
    path: Annotated[
        Path,
        typer.Argument(
            help="JSONL(.gz) (id, title, text), Parquet, FEVER wiki-pages, KILT, a folder of "
            "shards or of .txt/.md."
        ),
    ],
    collection: Annotated[str, typer.Option(help="Name of the index to (re)build.")] = "default",
    milvus_uri: Annotated[str, typer.Option(help="Milvus server URI; default Milvus Lite.")] = "",
    progress_every: ProgressEvery = DEFAULT_EVERY_S,
    corpus_format: Annotated[
        str,
        typer.Option(
            "--format", help="auto, jsonl, parquet, fever, kilt or text (auto: detected)."
        ),
    ] = "auto",
    lexical: Lexical = "",
) -> None:
    """Build (or rebuild) a retrieval index from your own documents, streamed in batches.

    Bad records are skipped and listed as FILE:LINE: problem; the live index is replaced
    only when the new one is complete. A killed build resumes when the same command is run
    again (docs/corpus.md).
    """
    _run_index(path, collection, milvus_uri, corpus_format, progress_every, lexical)


def index_corpus(
    dataset: Annotated[
        str, typer.Argument(help="Dataset whose corpus to index: pubmedqa, medqa, scifact, ...")
    ],
    data_dir: Annotated[Path | None, typer.Option(help="Datasets root folder.")] = None,
    collection: Annotated[
        str | None, typer.Option(help="Index name; default the one `bench` uses.")
    ] = None,
    milvus_uri: Annotated[str, typer.Option(help="Milvus server URI; default Milvus Lite.")] = "",
    progress_every: ProgressEvery = DEFAULT_EVERY_S,
    lexical: Lexical = "",
) -> None:
    """Index a dataset's retrieval corpus (PubMed abstracts for Tool-MAD's medical setting)."""
    from factdebate.bench.running.corpus import collection_name
    from factdebate.datasets import CATALOG, DATASETS, corpus_source, load_corpus

    source = corpus_source(dataset) if dataset in CATALOG else None
    if source is None:
        with_corpus = [name for name in DATASETS if corpus_source(name) is not None]
        fail(f"{dataset} has no retrieval corpus; choose one of: {', '.join(with_corpus)}")
    from factdebate.tools.retrieval.full_text import requested_lexical

    try:
        requested_lexical(lexical)
        docs = load_corpus(source, data_dir)
    except FactDebateError as exc:
        fail(str(exc))
    _index_with_progress(
        docs, collection or collection_name(source), milvus_uri, progress_every, lexical
    )


def _index_with_progress(
    docs: Any, collection: str, milvus_uri: str, every: float = DEFAULT_EVERY_S, lexical: str = ""
) -> None:
    """Build ``collection`` from documents with progress, then say what was indexed."""
    from factdebate.tools.retrieval.index import build_index, split_passages

    total = len(split_passages(docs))
    done = [0]
    with track_progress(f"embedding into {collection!r}", every, "passages") as track:

        def advance(n: int) -> None:
            done[0] += n
            track(done[0], total, "")

        track(0, total, "")
        try:
            count = build_index(docs, collection, milvus_uri, progress=advance, lexical=lexical)
        except FactDebateError as exc:
            fail(str(exc))
    out.print(f"indexed {len(docs)} documents as {count} passages into collection {collection!r}")


SHOWN_PROBLEMS = 200  # bad records listed one by one; the rest are only counted


def _run_index(
    path: Path,
    collection: str,
    milvus_uri: str,
    fmt: str,
    progress_every: float,
    lexical: str = "",
) -> None:
    """Check the arguments, stream ``path`` into ``collection``, report what was indexed.

    Progress counts documents against the corpus's record count (one quick pass first), so
    the time left is shown; it moves with every encoder call (a step's documents counted in
    proportion to its passages embedded). Bad records are listed (the first
    ``SHOWN_PROBLEMS``) and counted.
    """
    from factdebate.tools.retrieval.corpus import FORMATS, count_records
    from factdebate.tools.retrieval.full_text import requested_lexical
    from factdebate.tools.retrieval.index import index_path
    from factdebate.tools.retrieval.manifest import check_name

    if fmt not in FORMATS:
        fail(f"unknown --format {fmt!r}: expected one of {', '.join(FORMATS)}")
    skipped = [0]

    def problem(text: str) -> None:
        skipped[0] += 1
        if skipped[0] <= SHOWN_PROBLEMS:
            err.print(f"skipped {text}", markup=False, highlight=False, soft_wrap=True)

    try:
        check_name(collection)
        requested_lexical(lexical)
        total = count_records(path, fmt)
    except FactDebateError as exc:
        fail(str(exc))
    try:
        with track_progress(f"indexing into {collection!r}", progress_every, "documents") as track:

            def step(documents: int, passages: int) -> None:
                track(documents, max(total, documents), f"{passages} passages")

            manifest = index_path(  # moves per encoder call, not only per 2,048-passage step
                path,
                collection,
                milvus_uri,
                fmt=fmt,
                problem=problem,
                on_batch=step,
                on_embedded=step,
                lexical=lexical,
            )
    except FactDebateError as exc:
        fail(_why(str(exc), collection, skipped[0], fmt))
    if skipped[0]:
        err.print(f"skipped {skipped[0]} bad record(s)", markup=False, highlight=False)
    out.print(
        f"indexed {manifest.documents} documents as {manifest.passages} passages into "
        f"collection {collection!r}"
    )


def _why(message: str, collection: str, skipped: int, fmt: str) -> str:
    """A failed build's one line, with the bad-record count when nothing was left to index."""
    if skipped and message.startswith("no passages to index"):
        hint = f" (is --format {fmt} right for this corpus?)" if fmt != "auto" else ""
        return (
            f"no passages to index into {collection!r}: all {skipped} record(s) were bad "
            f"(listed above){hint}"
        )
    return message


def register(app: typer.Typer) -> None:
    """Add `index`, `index-corpus` to the `factdebate` command."""
    app.command(epilog="Example: factdebate index my_docs.jsonl --collection mine")(index)
    app.command(
        "index-corpus",
        epilog="Example: factdebate index-corpus pubmedqa (then bench --method tool-mad "
        "--dataset medqa --set search_backend=openalex)",
    )(index_corpus)
