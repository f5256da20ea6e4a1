"""The `factdebate` command: verify claims, build indexes (benchmarks plug in here too)."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path
from typing import Annotated, Any, Literal

for _name, _value in {
    "HF_HUB_OFFLINE": "1",
    "RAGAS_DO_NOT_TRACK": "true",
    "GRPC_VERBOSITY": "NONE",
    "TRANSFORMERS_VERBOSITY": "error",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TOKENIZERS_PARALLELISM": "false",
}.items():
    os.environ.setdefault(_name, _value)

import typer  # noqa: E402
from rich.markup import escape  # noqa: E402

from factdebate.cli.progress import (  # noqa: E402
    DEFAULT_EVERY_S,
    MAX_EVERY_S,
    MIN_EVERY_S,
    Pace,
    ProgressLines,
)
from factdebate.settings import (  # noqa: E402
    GROUPS,
    MAX_CONCURRENCY,
    budget_names,
    check_count,
    check_dataset,
    check_method,
    check_settings,
    context_class,
    describe,
    render,
)
from factdebate.settings import parse_settings as _parse_settings  # noqa: E402
from factdebate.tools.core.secrets import redact  # noqa: E402
from factdebate.tools.core.terminal import SafeConsole  # noqa: E402

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Verify facts by multi-agent LLM debate over evidence.",
)
out = SafeConsole(highlight=False)  # strips escape sequences from model and document text
err = SafeConsole(stderr=True, highlight=False)


def _names(kind: str) -> str:
    """The registered method names (``verify``: those taking a claim or question), or datasets."""
    from factdebate.graphs.registry import METHODS

    if kind == "methods":
        return ", ".join(METHODS)
    if kind == "verify":
        return ", ".join(n for n, spec in METHODS.items() if spec.input_kind != "answer")
    from factdebate.datasets import DATASETS

    return ", ".join(DATASETS)


METHOD_HELP = f"Method: {_names('methods')}."
VERIFY_METHOD_HELP = f"Method: {_names('verify')} (mad-fact: use score-answer)."
DATASET_HELP = f"Dataset: {_names('datasets')}."
MODEL_HELP = "Model for every role: local, hf:OWNER/REPO/FILE.gguf, openai:gpt-4o-mini, ..."
SET_HELP = (
    "A setting, KEY=VALUE (repeat it). Budgets per item: "
    f"{', '.join(budget_names())}. Every setting, its default and range: "
    "`factdebate settings METHOD`."
)
MAD_FACT_SET_HELP = "A MAD-Fact setting, KEY=VALUE (repeat it); all: factdebate settings mad-fact."
DEBATE_CV_SET_HELP = "A DebateCV setting, KEY=VALUE (repeat it); all: factdebate settings debate-cv"
PROGRESS_HELP = "Seconds between progress lines when stderr is not a terminal (a log file, CI)."
ProgressEvery = Annotated[
    float,
    typer.Option(
        min=MIN_EVERY_S, max=MAX_EVERY_S, envvar="FACTDEBATE_PROGRESS_EVERY", help=PROGRESS_HELP
    ),
]
"""The --progress-every option of the long-running commands."""


Tracker = Callable[[int, int | None, str], None]
"""``track(done, total, note)``: report work done so far (see ``_progress``)."""


def _progress_bar(eta: bool = True) -> Any:
    """A stderr progress bar: description, bar, done/total and (``eta``) rich's time left."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    columns: list[Any] = [
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
    ]
    if eta:
        columns.append(TimeRemainingColumn())
    return Progress(*columns, console=err)


@contextmanager
def _progress(label: str, every: float, unit: str = "items") -> Iterator[Tracker]:
    """Progress on stderr: a live bar on a terminal, else a plain line every ``every`` seconds.

    Yields ``track(done, total, note)``; rich's bar prints nothing when stderr is a log file or
    CI, so there the lines say done/total, rate, time left and ``note``.
    """
    if not err.is_terminal:
        with ProgressLines(label, err.file, every, unit) as lines:
            yield lines.update
        return
    pace = Pace(unit=unit)
    with _progress_bar(eta=False) as bar:
        task = bar.add_task(label, total=None)

        def track(done: int, total: int | None = None, note: str = "") -> None:
            rate = pace.update(done, total) if total else ""
            shown = " · ".join(part for part in (label, note, rate) if part)
            bar.update(task, completed=done, total=total, description=shown)

        yield track


def print_markdown(text: str) -> None:
    """Print a markdown report as it is: no markup, no wrapping (a wrapped table breaks)."""
    out.print(text, markup=False, soft_wrap=True)


def fail(message: str, code: int = 2) -> None:
    """Print a one-line error (secrets redacted) and exit non-zero (no traceback)."""
    message = redact(message)
    err.print(f"[red]error:[/red] {escape(message)}", markup=True, highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def parse_settings(pairs: list[str], context_cls: Any, method: str | None = None) -> dict[str, Any]:
    """Turn ``key=value`` strings into typed settings of ``context_cls`` (did-you-mean on typos)."""
    return _parse_settings(pairs, context_cls, method)


FLAG_OF = {
    "model": "--model",
    "debater_model": "--debater-model",
    "judge_model": "--judge-model",
    "max_rounds": "--rounds",
    "collection": "--collection",
}
"""Settings that have an option of their own: an error names the option the user typed."""


def _fast_settings(
    method: str,
    kind: Literal["any", "verify"],
    pairs: list[str] | None,
    flags: dict[str, Any],
    text: str | None = None,
) -> dict[str, Any]:
    """Check the method, the settings and ``text`` before the heavy imports; fail at once.

    Errors name the option typed (``--rounds``) and suggest the closest method or setting.
    Returns the typed settings (``--set`` pairs plus the options given).
    """
    from factdebate.nodes.claims import clean_claim

    try:
        check_method(method, kind)
        context_cls = context_class(method)
        settings = parse_settings(pairs or [], context_cls, method)
        settings.update({k: v for k, v in flags.items() if v is not None})
        typed = {k: FLAG_OF[k] for k, v in flags.items() if v is not None}
        context = check_settings(context_cls, settings, typed)
        if text is not None:
            clean_claim(text, context.max_claim_chars)
    except ValueError as exc:
        fail(str(exc))
    return settings


def _print_turn(turn: dict[str, Any], errors: list[dict[str, Any]] | None = None) -> None:
    """One transcript turn; ``errors`` (the run's so far) tell an unreadable label from none."""
    from factdebate.nodes.labelled import shown_label, without_label

    def fmt(v: Any) -> str:
        return "n/a" if v is None else f"{v:.2f}"

    evidence = (
        ", ".join(f"{e.get('title') or e.get('id')}" for e in turn.get("evidence", [])) or "-"
    )
    label = shown_label(turn, errors or [])
    out.print(
        f"[bold]Round {turn.get('round')} · {escape(str(turn.get('agent')))}[/bold] "
        f"({escape(str(turn.get('tool', '')))})"
        + (f" → [cyan]{escape(label)}[/cyan]" if label else "")
    )
    if turn.get("query"):
        out.print(f"  query: {turn['query']}", markup=False)
    out.print(f"  evidence: {evidence}", markup=False)
    answer = " ".join((without_label(str(turn.get("answer") or "")) or "(no answer)").split())
    out.print(f"  answer: {answer[:400]}{'…' if len(answer) > 400 else ''}", markup=False)
    if "faithfulness" in turn or "answer_relevance" in turn:
        out.print(
            f"  faithfulness {fmt(turn.get('faithfulness'))} · "
            f"answer relevance {fmt(turn.get('answer_relevance'))}"
        )


def _print_result(result: dict[str, Any]) -> None:
    total = result["cost"].get("total", {})
    out.rule("Verdict")
    out.print(
        f"[bold green]{result.get('verdict') or 'NO VERDICT (unparseable)'}[/bold green] "
        f"— stop reason: {result.get('stop_reason')}, rounds: {result.get('rounds')}"
    )
    decided_by = result.get("decided_by") or {}
    if decided_by.get("agent"):
        out.print(
            f"decided by {decided_by['agent']} after round {decided_by.get('round')}: "
            f"{decided_by.get('detail', '')}",
            markup=False,
        )
    if result.get("justification"):
        out.print(" ".join(str(result["justification"]).split())[:1200], markup=False)
    if review := result.get("review"):  # a person approved or overruled the proposed verdict
        note = f"; note: {review['note']}" if review.get("note") else ""
        out.print(
            f"reviewed: {review.get('status')} (proposed {review.get('proposed')}) at "
            f"{review.get('at')}{note}",
            markup=False,
        )
    if replay := result.get("replay"):
        out.print(
            f"replay of thread {replay.get('parent_thread')} from {replay.get('from')} "
            f"(step {replay.get('parent_step')}), now thread {replay.get('thread')}",
            markup=False,
        )
    out.print(
        f"LLM calls {total.get('llm_calls', 0)}, tokens in {total.get('input_tokens', 0)}"
        f" / out {total.get('output_tokens', 0)}; recorded errors: {len(result['errors'])}"
    )


@app.command(epilog='Example: factdebate verify "The Eiffel Tower is in Paris." --html debate.html')
def verify(
    claim: Annotated[str, typer.Argument(help="The claim to check (or '-' to read stdin).")],
    method: Annotated[str, typer.Option(help=VERIFY_METHOD_HELP)] = "tool-mad",
    model: Annotated[str | None, typer.Option(help=MODEL_HELP)] = None,
    debater_model: Annotated[str | None, typer.Option(help="Model of the debaters.")] = None,
    judge_model: Annotated[str | None, typer.Option(help="Model of the judge/moderator.")] = None,
    rounds: Annotated[int | None, typer.Option(help="Round limit T.")] = None,
    collection: Annotated[str | None, typer.Option(help="Index to retrieve from.")] = None,
    set_: Annotated[list[str] | None, typer.Option("--set", help=SET_HELP)] = None,
    documents: Annotated[
        Path | None,
        typer.Option(help="JSONL (id, title, text) of documents to use instead of retrieval."),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object, nothing else.")
    ] = False,
    thread: Annotated[
        str | None,
        typer.Option(help="Run id to save under --checkpoint; reuse it to resume or re-show."),
    ] = None,
    checkpoint: Annotated[
        str | None,
        typer.Option(
            help="Where steps are saved for resuming: sqlite:runs/checkpoints.db or "
            "postgresql://USER:PASSWORD@HOST:PORT/DB."
        ),
    ] = None,
    html: Annotated[
        Path | None,
        typer.Option(help="Also write the debate as one self-contained HTML page here."),
    ] = None,
    review: Annotated[
        bool, typer.Option("--review", help="Pause before the verdict is final for your review.")
    ] = False,
    approve: Annotated[
        bool, typer.Option("--approve", help="Approve the verdict of a run awaiting review.")
    ] = False,
    verdict: Annotated[
        str | None, typer.Option(help="Overrule a run awaiting review with this verdict.")
    ] = None,
    note: Annotated[str, typer.Option(help="The reviewer's note (with --approve/--verdict).")] = "",
) -> None:
    """Verify a claim (or answer a question with MADAM-RAG) and show the debate."""
    from factdebate.nodes.claims import (
        MAX_FILE_BYTES,
        MAX_TEXT_BYTES,
        InputError,
        check_user_file,
        clean_claim,
        read_limited,
    )

    if claim == "-":
        try:
            raw = read_limited(sys.stdin.buffer, MAX_TEXT_BYTES, "claim on stdin")
            claim = raw.decode("utf-8")
        except InputError as exc:
            fail(str(exc))
        except UnicodeDecodeError:
            fail("the claim is not valid UTF-8 text")
    flags = {
        "model": model,
        "debater_model": debater_model,
        "judge_model": judge_model,
        "max_rounds": rounds,
        "collection": collection,
    }
    settings = _fast_settings(method, "verify", set_, flags, claim)  # before the heavy imports
    from factdebate.api import (
        astream_verify,
        build_context,
        check_checkpoint,
        check_models,
        check_page_path,
        make_input,
        save_debate_page,
    )
    from factdebate.graphs.registry import UnknownMethodError
    from factdebate.tools.core.records import ModelConfigError
    from factdebate.tools.retrieval.corpus import CorpusError, load_documents
    from factdebate.tools.retrieval.manifest import IndexMissingError

    try:
        if review or approve or verdict is not None:
            from factdebate.cli.review import review_store

            settings["review"] = True
            thread, checkpoint = review_store(thread, checkpoint, decided=approve or bool(verdict))
        context = build_context(method, **settings)
        if (thread is None) != (checkpoint is None):
            raise ValueError("--thread and --checkpoint go together: give both or neither")
        if checkpoint is not None:
            check_checkpoint(checkpoint)
        if documents is not None:
            check_user_file(documents, MAX_FILE_BYTES, "documents file", folder_ok=True)
        if html is not None:
            check_page_path(html)
        docs = load_documents(documents) if documents is not None else None
        for doc in docs or []:
            doc["source"] = "given"
        make_input(method, claim, context, docs)
        check_models(context)
        if docs is None:
            _check_index(context)
    except (
        InputError,
        UnknownMethodError,
        ModelConfigError,
        IndexMissingError,
        CorpusError,
        ValueError,
    ) as exc:
        fail(str(exc))
    if approve or verdict is not None:  # a later call finishing a run paused for review
        from factdebate.cli.review import resume_run

        decision = {"approve": True} if approve else {"verdict": verdict}
        result = resume_run(str(thread), str(checkpoint), {**decision, "note": note}, settings)
        _show_final(result, as_json)
        return

    async def run() -> dict[str, Any]:
        result: dict[str, Any] = {}
        seen_errors: list[dict[str, Any]] = []  # tells an unreadable label from a free-text turn
        async for node, update in astream_verify(
            claim, method, docs, checkpoint=checkpoint, thread=thread, **settings
        ):
            if node == "result":
                result = update
            elif node == "awaiting_review":
                result = {"status": "awaiting_review", "thread": thread, "proposed": update}
            elif node == "checkpoint":
                status = update.get("status")
                if status != "new":
                    note = "resuming" if status == "resumed" else "already finished; stored result"
                    err.print(f"thread {thread}: {note}", markup=False)
            elif not as_json:
                seen_errors += update.get("errors") or []
                for turn in update.get("transcript", []):
                    _print_turn(turn, seen_errors)
                if node == "judge" and method.startswith("tool-mad"):  # MAD's judges every round
                    out.print("[dim]judge is deciding after the round limit[/dim]")
        return result

    if not as_json:
        out.print(
            f"[bold]Claim:[/bold] {escape(clean_claim(claim))}  [dim](method {method}, model "
            f"{escape(redact(str(context.model)))})[/dim]"
        )
    started = time.perf_counter()
    try:
        result = asyncio.run(run())
    except KeyboardInterrupt:
        fail("interrupted", 130)
    except (InputError, ValueError) as exc:
        fail(str(exc))
    except sqlite3.DatabaseError as exc:  # a damaged checkpoint file
        fail(f"checkpoint {checkpoint}: {exc}")
    if result.get("status") == "awaiting_review":
        from factdebate.cli.review import finish_verify

        final = finish_verify(
            result,
            claim=clean_claim(claim),
            method=method,
            thread=str(thread),
            checkpoint=str(checkpoint),
            settings=settings,
            as_json=as_json,
        )
        if final is None:
            return
        result = final
    _show_final(_without_given(result, docs), as_json)  # a 50 MB --documents text once
    if html is not None:
        elapsed = time.perf_counter() - started
        _write_page(
            lambda: save_debate_page(html, result, claim, method, elapsed_s=elapsed, **settings),
            as_json,
        )


def _show_final(result: dict[str, Any], as_json: bool) -> None:
    """Print a result: one JSON object, or the verdict block."""
    if as_json:
        sys.stdout.write(json.dumps(result, ensure_ascii=False, default=str) + "\n")
    else:
        _print_result(result)


def _without_given(result: dict[str, Any], docs: list[Any] | None) -> dict[str, Any]:
    """``result`` less a top-level copy of the caller's own ``--documents``.

    The text is in the transcript's evidence where an agent read it, and in the caller's file.
    """
    if not docs:
        return result
    given = {str(d.get("id")) for d in docs}

    def echoed(value: Any) -> bool:
        return isinstance(value, list) and all(
            isinstance(d, dict) and str(d.get("id")) in given for d in value
        )

    return {k: v for k, v in result.items() if k not in ("documents", "evidence") or not echoed(v)}


def _write_page(write: Callable[[], Path], quiet: bool = False, what: str = "debate page") -> None:
    """Write a report page and print its path (on stderr when ``quiet``: --json stays clean)."""
    try:
        path = write()
    except ValueError as exc:
        fail(str(exc))
    (err if quiet else out).print(f"{what}: {path.resolve()}", markup=False, soft_wrap=True)


def _check_index(context: Any) -> None:
    """A named collection must exist before a run (the default one is built on demand)."""
    from factdebate.tools.retrieval.corpus import DEFAULT_COLLECTION
    from factdebate.tools.retrieval.manifest import IndexMissingError
    from factdebate.tools.retrieval.vectorstore import collection_exists

    if getattr(context, "collection", DEFAULT_COLLECTION) == DEFAULT_COLLECTION:
        return
    if not collection_exists(context.collection, context.milvus_uri):
        raise IndexMissingError(context.collection)
    if getattr(context, "embed_model", ""):  # refuse another encoder before any model call
        from factdebate.tools.dispatch import check_encoder

        check_encoder(context.collection, context.embed_model, context.milvus_uri)


@app.command(epilog="Example: factdebate index my_docs.jsonl --collection mine")
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
) -> None:
    """Build (or rebuild) a retrieval index from your own documents, streamed in batches.

    Bad records are skipped and listed as FILE:LINE: problem; the live index is replaced
    only when the new one is complete. A killed build resumes when the same command is run
    again (docs/corpus.md).
    """
    from factdebate.cli.ingest import run_index

    run_index(
        path,
        collection,
        milvus_uri,
        corpus_format,
        progress=lambda: _progress(f"indexing into {collection!r}", progress_every, "documents"),
        fail=fail,
        err=err,
        out=out,
    )


def _index_with_progress(
    docs: Any, collection: str, milvus_uri: str, every: float = DEFAULT_EVERY_S
) -> None:
    """Build ``collection`` from documents with progress, then say what was indexed."""
    from factdebate.tools.retrieval.index import build_index, split_passages

    total = len(split_passages(docs))
    done = [0]
    with _progress(f"embedding into {collection!r}", every, "passages") as track:

        def advance(n: int) -> None:
            done[0] += n
            track(done[0], total, "")

        track(0, total, "")
        count = build_index(docs, collection, milvus_uri, progress=advance)
    out.print(f"indexed {len(docs)} documents as {count} passages into collection {collection!r}")


@app.command(
    "index-corpus",
    epilog="Example: factdebate index-corpus pubmedqa (then bench --method tool-mad "
    "--dataset medqa --set search_backend=openalex)",
)
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
) -> None:
    """Index a dataset's retrieval corpus (PubMed abstracts for Tool-MAD's medical setting)."""
    from factdebate.bench.runner import CORPORA, collection_name, corpus_source, dataset_folder
    from factdebate.datasets import DatasetError

    source = corpus_source(dataset)
    if source not in CORPORA:
        fail(f"{dataset} has no retrieval corpus; choose one of: {', '.join(CORPORA)}, medqa")
    try:
        folder = dataset_folder(source, data_dir)
        docs = CORPORA[source](folder) if folder is not None else CORPORA[source]()
    except DatasetError as exc:
        fail(str(exc))
    _index_with_progress(docs, collection or collection_name(source), milvus_uri, progress_every)


@app.command(
    epilog="Example: factdebate bench --method tool-mad --dataset scifact --limit 20 "
    "--out runs/tm-scifact (then open runs/tm-scifact/report.html)"
)
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
    review: Annotated[
        bool,
        typer.Option(
            "--review",
            help="Stop every item before its verdict is final; decide them with "
            "`factdebate review RUN_DIR`.",
        ),
    ] = False,
) -> None:
    """Run a method over a labelled claim or question dataset; write results and reports."""
    if compare:
        from factdebate.bench.runner import compare_runs

        if not runs:
            fail("--compare needs one or more RUN_DIR arguments")
        try:
            print_markdown(compare_runs(list(runs or [])))
        except (FileNotFoundError, ValueError) as exc:
            fail(str(exc))
        if html is not None:
            from factdebate.bench.page import write_compare_page

            _write_page(lambda: write_compare_page(html, list(runs or [])), what="comparison page")
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
    except ValueError as exc:
        fail(str(exc))
    context = _fast_settings(method, "any", set_, {"model": model})  # before the heavy imports
    if review:
        context["review"] = True
    from factdebate.bench.runner import dataset_task, run_bench
    from factdebate.datasets import DatasetError
    from factdebate.graphs.registry import UnknownMethodError
    from factdebate.tools.core.records import ModelConfigError

    try:
        if langsmith_experiment is not None:
            from factdebate.bench.langsmith import require_api_key

            require_api_key()
        score = "EM" if dataset_task(dataset) == "answers" else "acc"
        with _progress(f"{method} on {dataset}", progress_every) as track:

            def progress(done: int, total: int, accuracy: float, calls: int, tokens: int) -> None:
                track(done, total, f"{score} {accuracy:.1%} · {calls} calls · {tokens} tok")

            run_bench(
                method,
                dataset,
                out_dir,
                data_dir=data_dir,
                limit=limit,
                seed=seed,
                concurrency=concurrency,
                context=context,
                server_url=server,
                progress=progress,
                checkpoint=checkpoint,
                pages=pages,
            )
    except (DatasetError, UnknownMethodError, ModelConfigError, ValueError) as exc:
        fail(str(exc))
    metrics = json.loads((out_dir / "metrics.json").read_text(encoding="utf-8"))
    for issue in metrics.get("run", {}).get("load_issues") or []:
        err.print(f"skipped malformed record: {issue}", markup=False, soft_wrap=True)
    for note in metrics.get("run", {}).get("notes") or []:  # e.g. HoVer run claim-only
        err.print(f"note: {note}", markup=False, soft_wrap=True)
    print_markdown((out_dir / "report.md").read_text(encoding="utf-8"))
    if context.get("review"):
        out.print(
            f"decide the review queue with: factdebate review {out_dir}",
            markup=False,
            soft_wrap=True,
        )
    if (out_dir / "report.html").is_file():
        out.print(
            f"report page: {(out_dir / 'report.html').resolve()}", markup=False, soft_wrap=True
        )
    if langsmith_experiment is not None:
        from factdebate.bench.langsmith import push_run

        try:
            pushed = push_run(out_dir, experiment=langsmith_experiment)
        except Exception as exc:  # any SDK or network error: one line, results stay on disk
            fail(f"LangSmith export failed: {type(exc).__name__}: {exc}".splitlines()[0])
        out.print(
            f"LangSmith experiment {pushed['experiment']}: {pushed['items']} items pushed",
            markup=False,
        )


@app.command(
    "bench-retrieval",
    epilog="Example: factdebate bench-retrieval --dataset scifact --out runs/retrieval",
)
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
    from factdebate.bench.retrieval import render_retrieval, run_retrieval_bench
    from factdebate.datasets import DatasetError

    try:
        result = run_retrieval_bench(
            dataset, data_dir, limit, out_dir, split=split, rebuild=rebuild
        )
    except (DatasetError, ValueError) as exc:
        fail(str(exc))
    print_markdown(render_retrieval(result))


def _read_references(path: Path) -> list[str]:
    """Reference answers: a JSON list of strings, or text blocks separated by '---' lines."""
    from factdebate.nodes.claims import read_user_file

    try:
        text = read_user_file(path, "references file").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"cannot read references {path}: {exc}") from exc
    if path.suffix == ".json":
        data = json.loads(text)
        if not isinstance(data, list) or not all(isinstance(x, str) for x in data):
            raise ValueError(f"{path}: expected a JSON list of strings")
        return [x for x in data if x.strip()]
    blocks = "\n".join(line if line.strip() != "---" else "\x00" for line in text.splitlines())
    return [b.strip() for b in blocks.split("\x00") if b.strip()]


@app.command(
    "score-answer",
    epilog='Example: factdebate score-answer --answer-file answer.txt --question "..." '
    "--html claims.html",
)
def score_answer_command(
    answer_file: Annotated[Path, typer.Option(help="File holding the long answer to check.")],
    question: Annotated[str, typer.Option(help="The question the answer responds to.")] = "",
    references: Annotated[
        Path | None,
        typer.Option(help="Reference answers: JSON list of strings, or blocks split by '---'."),
    ] = None,
    model: Annotated[str | None, typer.Option(help="Model for every role.")] = None,
    rule: Annotated[int | None, typer.Option(help="Debate rule 1, 2 or 3.")] = None,
    set_: Annotated[list[str] | None, typer.Option("--set", help=MAD_FACT_SET_HELP)] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object, nothing else.")
    ] = False,
    html: Annotated[
        Path | None,
        typer.Option(help="Also write the claims and their juries as one HTML page here."),
    ] = None,
) -> None:
    """MAD-Fact: split a long answer into claims, let a jury check each, and score it."""
    from factdebate.bench.long_form import ascore_answer
    from factdebate.nodes.claims import InputError, clean_claim, read_user_file
    from factdebate.nodes.mad_fact.context import MADFactContext
    from factdebate.tools.core.records import ModelConfigError

    try:
        raw = read_user_file(answer_file, "answer file")
        answer = clean_claim(raw, MADFactContext().max_answer_chars)
        refs = _read_references(references) if references else None
        settings = parse_settings(set_ or [], MADFactContext, "mad-fact")
        if model:
            settings["model"] = model
        if rule is not None:
            settings["debate_rule"] = rule
        MADFactContext(**settings)
        if html is not None:
            from factdebate.api import check_page_path

            check_page_path(html)
    except FileNotFoundError:
        fail(f"no such file: {answer_file}")
    except (InputError, ModelConfigError, ValueError) as exc:
        fail(f"{answer_file}: {exc}" if isinstance(exc, InputError) else str(exc))
    if not as_json:
        shown_model = escape(redact(str(settings.get("model", "local"))))
        out.print(f"[dim]checking the answer with MAD-Fact (model {shown_model})[/dim]")
    started = time.perf_counter()
    result = asyncio.run(ascore_answer(answer, question, refs, **settings))
    if html is not None:
        from factdebate.pages.debate import write_debate_page

        ctx = MADFactContext(**settings)
        shown = {f.name: getattr(ctx, f.name) for f in fields(ctx)}
        elapsed = time.perf_counter() - started
        _write_page(
            lambda: write_debate_page(html, result, answer, "mad-fact", shown, elapsed), as_json
        )
    if as_json:
        sys.stdout.write(json.dumps(result, ensure_ascii=False, default=str) + "\n")
        return
    for claim in result.get("claims", []):
        verdict = claim.get("verdict") or "NO VERDICT"
        out.print(f"[bold]{escape(str(verdict))}[/bold]  {escape(str(claim.get('claim')))}")
        for turn in result.get("transcript", []):
            if turn.get("claim_id") == claim.get("claim_id") and turn.get("answer"):
                reason = " ".join(str(turn["answer"]).split())[:200]
                out.print(
                    f"   {turn.get('agent')} (round {turn.get('round')}): {reason}", markup=False
                )
    scores = result.get("scores") or {}
    out.rule("Scores")
    out.print(
        ", ".join(
            f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
            for k, v in scores.items()
            if not isinstance(v, dict | list)
        )
    )
    out.print(
        f"stop reason: {result.get('stop_reason')}; recorded errors: "
        f"{len(result.get('errors') or [])}"
    )


@app.command(
    "gen-answers",
    epilog="Example: factdebate gen-answers --dataset longfact --model openai:gpt-4o-mini "
    "--limit 20 --out answers/gpt-4o-mini",
)
def gen_answers(
    out_dir: Annotated[Path, typer.Option("--out", help="Answer folder (resumable).")],
    model: Annotated[str, typer.Option(help="Model writing the answers, e.g. openai:gpt-4o.")],
    dataset: Annotated[str, typer.Option(help="Prompt set: longfact.")] = "longfact",
    data_dir: Annotated[Path | None, typer.Option(help="Datasets root folder.")] = None,
    limit: Annotated[int | None, typer.Option(help="Sample this many prompts.")] = None,
    seed: Annotated[int, typer.Option(help="Sampling seed.")] = 0,
    concurrency: Annotated[int, typer.Option(help="Prompts in flight at once.")] = 1,
    max_output_tokens: Annotated[int, typer.Option(help="Longest answer, in tokens.")] = 1024,
    timeout: Annotated[float, typer.Option(help="Seconds per model call.")] = 300.0,
) -> None:
    """Write a long answer per prompt (LongFact) for MAD-Fact to score; re-run to resume."""
    from factdebate.bench.long_form import agen_answers
    from factdebate.bench.runner import dataset_folder
    from factdebate.datasets import PROMPT_SETS, DatasetError, sample
    from factdebate.tools.core.records import ModelConfigError

    try:
        if dataset not in PROMPT_SETS:
            raise DatasetError(
                f"unknown prompt set {dataset!r}; choose one of: {', '.join(PROMPT_SETS)}"
            )
        folder = dataset_folder(dataset, data_dir)
        loaded = PROMPT_SETS[dataset](folder) if folder is not None else PROMPT_SETS[dataset]()
        for issue in loaded.issues:
            err.print(f"skipped malformed record: {issue}", markup=False, soft_wrap=True)
        prompts = sample(loaded.items, limit, seed)
        with _progress(f"{model} answering {dataset}", DEFAULT_EVERY_S, "prompts") as track:
            track(0, len(prompts), "")
            summary = asyncio.run(
                agen_answers(
                    prompts,
                    out_dir,
                    model=model,
                    dataset=dataset,
                    concurrency=concurrency,
                    max_output_tokens=max_output_tokens,
                    timeout=timeout,
                    progress=lambda done, total: track(done, total, ""),
                )
            )
    except (DatasetError, ModelConfigError, ValueError) as exc:
        fail(str(exc))
    out.print(
        f"new {summary['new']}, skipped {summary['skipped']}, failed {summary['failed']} "
        f"-> {out_dir / 'answers.jsonl'}",
        markup=False,
    )
    if summary["failed"]:
        raise typer.Exit(1)


@app.command(
    "score-answers",
    epilog="Example: factdebate score-answers answers/gpt-4o-mini answers/llama --model "
    "openai:gpt-4o-mini",
)
def score_answers(
    answer_dirs: Annotated[list[Path], typer.Argument(help="Folders written by gen-answers.")],
    model: Annotated[str | None, typer.Option(help="Model for every MAD-Fact role.")] = None,
    rule: Annotated[int | None, typer.Option(help="Debate rule 1, 2 or 3.")] = None,
    concurrency: Annotated[int, typer.Option(help="Answers in flight at once.")] = 1,
    set_: Annotated[list[str] | None, typer.Option("--set", help=MAD_FACT_SET_HELP)] = None,
) -> None:
    """Score folders of long answers with MAD-Fact and compare their models (resumable)."""
    from factdebate.bench.long_form import ascore_answers, render_factuality
    from factdebate.nodes.mad_fact.context import MADFactContext
    from factdebate.tools.core.records import ModelConfigError

    summaries = []
    try:
        settings = parse_settings(set_ or [], MADFactContext, "mad-fact")
        if model:
            settings["model"] = model
        if rule is not None:
            settings["debate_rule"] = rule
        for folder in answer_dirs:
            with _progress(f"scoring {folder}", DEFAULT_EVERY_S, "answers") as track:

                def progress(done: int, total: int, track: Tracker = track) -> None:
                    track(done, total, "")

                summaries.append(
                    asyncio.run(
                        ascore_answers(
                            folder, concurrency=concurrency, progress=progress, **settings
                        )
                    )
                )
    except (ModelConfigError, ValueError, OSError) as exc:
        fail(str(exc))
    print_markdown(render_factuality(summaries))


@app.command(
    epilog="Example: factdebate syndec --out data/syndec --dataset averitec --limit 20 "
    "--model openai:gpt-4o-mini"
)
def syndec(
    out_dir: Annotated[Path, typer.Option("--out", help="Output folder (resumable).")],
    dataset: Annotated[str, typer.Option(help="Labelled claim dataset.")] = "averitec",
    data_dir: Annotated[Path | None, typer.Option(help="Datasets root folder.")] = None,
    limit: Annotated[int | None, typer.Option(help="Sample this many claims.")] = None,
    seed: Annotated[int, typer.Option(help="Sampling seed.")] = 0,
    model: Annotated[str | None, typer.Option(help="Model for every role.")] = None,
    corrector_model: Annotated[str | None, typer.Option(help="Model of the Corrector.")] = None,
    evidence: Annotated[str, typer.Option(help="gold or retrieved.")] = "gold",
    concurrency: Annotated[int, typer.Option(help="Claims in flight at once.")] = 1,
    set_: Annotated[list[str] | None, typer.Option("--set", help=DEBATE_CV_SET_HELP)] = None,
    split: Annotated[
        str,
        typer.Option(
            help="AVeriTeC split: dev (shipped) or train (the paper's SynDeC; needs "
            "averitec/train.json under --data-dir)."
        ),
    ] = "dev",
    file: Annotated[
        Path | None,
        typer.Option("--file", help="Read the AVeriTeC claims from this JSON file instead."),
    ] = None,
) -> None:
    """DebateCV synthetic debates (SynDeC) with SFT and DPO exports; re-run to resume."""
    from factdebate.bench.runner import dataset_folder
    from factdebate.datasets import DatasetError, sample
    from factdebate.nodes.debate_cv.context import DebateCVContext
    from factdebate.training.syndec import load_claims, run_syndec

    try:
        if evidence not in ("gold", "retrieved"):
            raise ValueError("--evidence must be gold or retrieved")
        settings = parse_settings(set_ or [], DebateCVContext, "debate-cv")
        if model:
            settings["model"] = model
        context = DebateCVContext(**settings)
        items = sample(
            load_claims(dataset, dataset_folder(dataset, data_dir), split, file), limit, seed
        )
    except (DatasetError, ValueError) as exc:
        fail(str(exc))
    summary = asyncio.run(
        run_syndec(
            items,
            out_dir,
            context=context,
            corrector_model=corrector_model,
            use_gold_evidence=evidence == "gold",
            concurrency=concurrency,
        )
    )
    out.print(
        f"new {summary.new}, skipped {summary.skipped}, correct {summary.correct}, "
        f"corrected {summary.corrected}, uncorrected {summary.uncorrected}, unparsed "
        f"{summary.unparsed}; sft {summary.sft}, dpo {summary.dpo} -> {summary.out_dir}"
    )
    for ident, message in summary.failed:
        err.print(f"failed {ident}: {message}", markup=False)
    if summary.failed:
        raise typer.Exit(1)


@app.command(
    "train-moderator",
    epilog="Example: factdebate train-moderator --sft data/syndec/sft.jsonl --dpo "
    "data/syndec/dpo.jsonl --base local --max-steps 4 --out runs/moderator",
)
def train_moderator_command(
    out_dir: Annotated[
        Path, typer.Option("--out", help="Run folder (resumable); use as hf-local:RUN_DIR.")
    ],
    sft: Annotated[
        Path | None, typer.Option(help="D-SFT data: sft.jsonl from `factdebate syndec`.")
    ] = None,
    dpo: Annotated[
        Path | None, typer.Option(help="D-DPO pairs: dpo.jsonl from `factdebate syndec`.")
    ] = None,
    base: Annotated[
        str,
        typer.Option(
            help="Base model: 'local' (bundled SmolLM2-135M GGUF), a .gguf file, a Hugging "
            "Face model folder, or a hub name already in the local cache."
        ),
    ] = "local",
    stages: Annotated[
        str, typer.Option(help="Stages to run, in order: sft,dpo (full), sft (w/o D-DPO), dpo.")
    ] = "sft,dpo",
    lora_rank: Annotated[int, typer.Option(help="LoRA rank (paper: 128).")] = 128,
    lora_alpha: Annotated[int, typer.Option(help="LoRA alpha (paper: 256).")] = 256,
    lora_dropout: Annotated[float, typer.Option(help="LoRA dropout.")] = 0.05,
    lr: Annotated[float, typer.Option("--lr", help="AdamW learning rate (paper: 2e-5).")] = 2e-5,
    epochs: Annotated[float, typer.Option(help="Epochs per stage (paper: 2).")] = 2.0,
    batch_size: Annotated[int, typer.Option(help="Examples per device step.")] = 1,
    grad_accum: Annotated[int, typer.Option(help="Gradient accumulation steps.")] = 8,
    max_length: Annotated[int, typer.Option(help="Longest tokenised example (tokens).")] = 4096,
    beta: Annotated[float, typer.Option(help="D-DPO beta (strength of the reference).")] = 0.1,
    sft_limit: Annotated[
        int | None, typer.Option(help="Use the first N D-SFT rows (paper: 2148 claims).")
    ] = None,
    dpo_limit: Annotated[
        int | None, typer.Option(help="Use the first N D-DPO pairs (paper: 920 claims).")
    ] = None,
    max_steps: Annotated[
        int, typer.Option(help="Stop each stage after N optimizer steps (-1: run the epochs).")
    ] = -1,
    save_steps: Annotated[int, typer.Option(help="Checkpoint every N steps (resume point).")] = 50,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
    device: Annotated[
        str, typer.Option(help="auto (a CUDA GPU if present, bf16 where supported), cpu, cuda.")
    ] = "auto",
) -> None:
    """Post-train DebateCV's moderator: LoRA D-SFT, then D-DPO (re-run to resume)."""
    from factdebate.tools.core.records import ModelConfigError
    from factdebate.training.moderator import TrainConfig, TrainingDataError, train_moderator

    try:
        cfg = TrainConfig(
            base=base,
            stages=tuple(s.strip() for s in stages.split(",") if s.strip()),
            lora_rank=lora_rank,
            lora_alpha=lora_alpha,
            lora_dropout=lora_dropout,
            learning_rate=lr,
            epochs=epochs,
            batch_size=batch_size,
            grad_accum=grad_accum,
            max_length=max_length,
            beta=beta,
            sft_limit=sft_limit,
            dpo_limit=dpo_limit,
            max_steps=max_steps,
            save_steps=save_steps,
            seed=seed,
            device=device,
        )
        manifest = train_moderator(
            out_dir,
            sft,
            dpo,
            cfg,
            on_stage=lambda stage, rows: err.print(f"D-{stage.upper()}: {rows} rows", markup=False),
        )
    except (TrainingDataError, ModelConfigError, ValueError) as exc:
        fail(str(exc))
    for stage, points in manifest.get("losses", {}).items():
        if points:
            out.print(
                f"D-{stage.upper()}: loss {points[0][1]:.4f} -> {points[-1][1]:.4f} over "
                f"{len(points)} steps; curve {out_dir / stage / 'loss.png'}",
                markup=False,
            )
    out.print(f"use it as the moderator: --set judge_model=hf-local:{out_dir}", markup=False)


@app.command(
    "settings",
    epilog="Example: factdebate settings tool-mad (then verify ... --set max_llm_calls=50)",
)
def settings_command(
    method: Annotated[str, typer.Argument(help="Method whose settings to list.")],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object, nothing else.")
    ] = False,
) -> None:
    """Every setting of a method, by group: name, type, default, range and meaning."""
    try:
        cls = context_class(method)
    except ValueError as exc:
        fail(str(exc))
    infos = describe(cls)
    if as_json:
        payload = {
            "method": method,
            "context": cls.__name__,
            "groups": list(GROUPS),
            "settings": [info.as_dict() for info in infos],
        }
        sys.stdout.write(json.dumps(payload, ensure_ascii=False, default=str) + "\n")
        return
    print_markdown(render(method, infos))


@app.command(epilog="Example: factdebate methods")
def methods() -> None:
    """List the available methods."""
    from factdebate.graphs.registry import METHODS

    for name, spec in METHODS.items():
        out.print(f"[bold]{name}[/bold] ({spec.input_kind}): {spec.description}")
    out.print("Every setting of one, with defaults and ranges: factdebate settings METHOD")


from factdebate.cli import review as review_cli  # noqa: E402  (it builds on the helpers above)

review_cli.register(app)


def main() -> None:
    """Console-script entry point; an index that cannot be opened is a one-line error."""
    from factdebate.tools.core.secrets import install_secret_filters

    install_secret_filters()
    try:
        app()
    except Exception as exc:
        store = sys.modules.get(
            "factdebate.tools.retrieval.vectorstore"
        )  # not imported: no index was opened
        if store is None or not isinstance(exc, store.IndexUnavailableError):
            raise
        err.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        sys.exit(2)
