"""Benchmark harness: run a method over a claim or question dataset concurrently and resumably.

Each finished item is appended to ``results.jsonl`` at once (flushed), so an interrupted run
resumes where it stopped; ``metrics.json``, ``report.md``, ``report.html`` (with plots) and (for
labels) ``confusion.png`` are written at the end. With ``server_url`` every item is sent as a
run to a LangGraph server instead. Claim datasets are scored as labels; question datasets
(RAMDocs) as answer lists.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from factdebate.api import check_concurrency, check_models, input_keys
from factdebate.bench.invokers import (
    ServerError,
    durable_invoker,
    local_invoker,
    server_invoker,
)
from factdebate.bench.page import pages_wanted, write_bench_page, write_item_page
from factdebate.bench.report import ANSWERS, FAILED, LABEL_TASK, compare_runs, write_summary
from factdebate.datasets import (
    DATASETS,
    QUESTION_SETS,
    REFUTES,
    SUBFOLDERS,
    SUPPORTS,
    AtomicClaimItem,
    ClaimItem,
    DatasetError,
    QAItem,
    datasets_root,
    label_set,
    load_fever_mini_corpus,
    load_pubmedqa_corpus,
    load_scifact_corpus,
    sample,
)
from factdebate.runs.checkpoints import check_checkpoint
from factdebate.tools.core.files import check_target, write_atomic
from factdebate.tools.core.records import Evidence
from factdebate.tools.core.secrets import redact_deep
from factdebate.tools.models.llm import redact
from factdebate.tools.scoring.answers import answer_scores

__all__ = [
    "BenchItem",
    "arun_bench",
    "compare_runs",
    "dataset_task",
    "load_items",
    "read_results",
    "run_bench",
]

Progress = Callable[[int, int, float, int, int], None]
"""Called as ``(done, total, running accuracy, llm calls, tokens)`` after each item (and once
at the start, with the items already done when resuming). For answer datasets the running
accuracy is the strict exact match."""

CORPORA: dict[str, Callable[..., list[Evidence]]] = {
    # dataset -> loader of its retrieval corpus (taking the dataset folder)
    "scifact": load_scifact_corpus,
    "fever-mini": load_fever_mini_corpus,
    "pubmedqa": load_pubmedqa_corpus,  # Tool-MAD's medical setting: PubMed abstracts
}
CORPUS_OF = {"medqa": "pubmedqa"}  # dataset -> dataset whose corpus it retrieves from
NO_RETRIEVAL = {"cot", "mad"}
ANSWER_DATASETS = QUESTION_SETS  # scored as answer lists, run by question methods
INPUT_KIND = {LABEL_TASK: "claim", ANSWERS: "question"}  # task -> MethodSpec.input_kind
TEXT_KEYS = ("claim", "question")  # always sent; other input keys only when the graph takes them
RESULTS = "results.jsonl"
RUN_FILE = "run.json"


@dataclass
class BenchItem:
    """One dataset item: the graph input, the gold and any extra fields for its result row.

    Attributes:
        id: Dataset-stable identifier.
        inputs: Graph input (``claim`` + ``evidence`` or ``question`` + ``documents``); keys
            other than the text are sent only to graphs whose input schema takes them.
        gold: A canonical label (claims) or the list of correct answers (questions).
        extra: Copied into the result row (``wrong``: the misinformation answers).

    """

    id: str
    inputs: dict[str, Any]
    gold: Any
    extra: dict[str, Any] = field(default_factory=dict)


def dataset_task(dataset: str) -> str:
    """How a dataset is scored: ``labels`` (claims) or ``answers`` (questions)."""
    return ANSWERS if dataset in ANSWER_DATASETS else LABEL_TASK


def check_method_fits(method: str, dataset: str) -> None:
    """Raise DatasetError when the method takes another kind of input than the dataset holds."""
    from factdebate.graphs.registry import METHODS, UnknownMethodError

    if method not in METHODS:
        raise UnknownMethodError(method)
    task = dataset_task(dataset)
    wanted, takes = INPUT_KIND[task], METHODS[method].input_kind
    if takes != wanted:
        fitting = sorted(m for m, spec in METHODS.items() if spec.input_kind == wanted)
        raise DatasetError(
            f"{method} takes {takes}s but {dataset} holds {wanted}s (scored as {task}); "
            f"use one of: {', '.join(fitting)}"
        )


def _claim(id_: str, claim: str, gold: str, evidence: list[Evidence]) -> BenchItem:
    # No shipped evidence -> None (retrieve); an explicit [] would mean "debate without any".
    return BenchItem(id_, {"claim": claim, "evidence": evidence or None}, gold)


def _question(raw: QAItem) -> BenchItem:
    inputs = {"question": raw.question, "documents": list(raw.documents)}
    return BenchItem(raw.id, inputs, list(raw.gold_answers), {"wrong": list(raw.wrong_answers)})


def load_items(
    dataset: str,
    data_dir: Path | None,
    limit: int | None,
    seed: int,
    issues: list[str] | None = None,
    notes: list[str] | None = None,
) -> tuple[list[BenchItem], tuple[str, ...]]:
    """Load a dataset's items (a seeded sample of ``limit``) and its label set (empty: answers).

    True/false datasets (factcheck-bench, factool-qa) map true -> SUPPORTS, false -> REFUTES.
    ``data_dir`` is the shared datasets root (the dataset's own sub-folder is appended).
    Malformed records are skipped; each is described as ``file:line: problem`` in ``issues``.
    The loader's remarks (e.g. HoVer run claim-only) go to ``notes``. The label set is the
    dataset's (``datasets.label_set``: AVeriTeC's four labels whatever the sample holds).
    """
    if dataset not in DATASETS:
        raise DatasetError(f"unknown dataset {dataset!r}; choose one of: {', '.join(DATASETS)}")
    folder = dataset_folder(dataset, data_dir)
    loaded = DATASETS[dataset](folder) if folder is not None else DATASETS[dataset]()
    if issues is not None:
        issues.extend(str(issue) for issue in loaded.issues)
    if notes is not None:
        notes.extend(f"{dataset}: {note}" for note in loaded.notes)
    items: list[BenchItem] = []
    for raw in sample(loaded.items, limit, seed):
        if isinstance(raw, ClaimItem):
            items.append(_claim(raw.id, raw.claim, raw.label, list(raw.evidence)))
        elif isinstance(raw, AtomicClaimItem):
            gold = SUPPORTS if raw.label else REFUTES
            items.append(_claim(raw.id, raw.claim, gold, list(raw.evidence)))
        elif isinstance(raw, QAItem) and dataset_task(dataset) == ANSWERS:
            items.append(_question(raw))
        else:
            raise DatasetError(
                f"{dataset} holds {type(raw).__name__} items: the benchmark cannot score them"
            )
    if not items:
        raise DatasetError(f"{dataset}: no items to run")
    if dataset_task(dataset) == ANSWERS:
        return items, ()
    labels = label_set(dataset)
    if outside := sorted({str(i.gold) for i in items} - set(labels)):
        raise DatasetError(f"{dataset}: gold label(s) {outside} outside its labels {list(labels)}")
    return items, labels


def dataset_folder(dataset: str, data_dir: Path | None) -> Path | None:
    """Locate the dataset's folder under a datasets root (None = the loader default).

    A file (one dataset's records) is handed to the loader as it is.
    """
    if data_dir is None:
        return None
    if Path(data_dir).is_file():
        return Path(data_dir)
    return Path(data_dir) / SUBFOLDERS.get(dataset, dataset)


def read_results(path: Path) -> list[dict[str, Any]]:
    """Read the rows of a results file, keeping the first row of each id.

    A truncated or corrupt line (an interrupted write) is dropped and the file is rewritten
    without it, so later appends stay line-aligned.
    """
    if not path.is_file():
        return []
    rows, dropped = [], False
    for line in path.read_text(encoding="utf-8").split("\n"):  # U+2028 stays inside a row
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            dropped = True
            continue
        if isinstance(row, dict) and "id" in row:
            rows.append(row)
        else:
            dropped = True
    seen: dict[str, dict[str, Any]] = {}
    for row in rows:
        seen.setdefault(str(row["id"]), row)
    if dropped or len(seen) != len(rows) or not path.read_text(encoding="utf-8").endswith("\n"):
        write_atomic(path, "".join(json.dumps(r, default=str) + "\n" for r in seen.values()))
    return list(seen.values())


def _uses_retrieval(method: str, settings: Any) -> bool:
    """Whether a run with these settings (the method's context object) retrieves anything."""
    if method in NO_RETRIEVAL or getattr(settings, "tool", None) == "none":
        return False
    tools = [getattr(settings, name) for name in ("tool_a", "tool_b") if hasattr(settings, name)]
    return not tools or any(tool != "none" for tool in tools)


def prepare_collection(
    method: str, dataset: str, data_dir: Path | None, context: dict[str, Any], context_cls: Any
) -> dict[str, Any]:
    """Point retrieval at the dataset's own corpus, indexing it once when it is missing.

    Only when the method retrieves, the settings accept ``collection`` and none was given.
    """
    names = {f.name for f in fields(context_cls)}
    if (
        "collection" not in names
        or "collection" in context
        or corpus_source(dataset) not in CORPORA
        or not _uses_retrieval(method, context_cls(**context))
    ):
        return context
    dataset = corpus_source(dataset)
    from factdebate.tools.retrieval.index import build_index, index_ready

    loader, name = CORPORA[dataset], collection_name(dataset)
    uri = str(context.get("milvus_uri", ""))
    if not index_ready(name, uri):
        folder = dataset_folder(dataset, data_dir)
        try:
            docs = loader(folder) if folder is not None else loader()
        except DatasetError as exc:
            raise DatasetError(
                f"{exc}: the {name!r} index this run retrieves from is not built and its corpus "
                f"cannot be read; build it with `factdebate index-corpus {dataset} --data-dir "
                "DATASETS_ROOT` (or give --set collection=NAME)"
            ) from exc
        build_index(docs, name, uri)
    return {**context, "collection": name}


def corpus_source(dataset: str) -> str:
    """The dataset whose retrieval corpus ``dataset`` uses (MedQA retrieves PubMed abstracts)."""
    return CORPUS_OF.get(dataset, dataset)


def collection_name(dataset: str) -> str:
    """Name the index holding a dataset's corpus (Milvus names allow letters, digits, '_')."""
    return dataset.replace("-", "_")


def _prediction(out: dict[str, Any], task: str) -> Any:
    if task == ANSWERS:
        answers = out.get("answers")
        if out.get("verdict") is None or not isinstance(answers, list):
            return None  # no answer given (unreadable, or every model call failed)
        return list(answers)
    return out.get("verdict")


def _text(item: BenchItem) -> dict[str, Any]:
    """The claim or question of an item, for its result row (auditable without the dataset)."""
    return {k: item.inputs[k] for k in TEXT_KEYS if k in item.inputs}


def _row(item: BenchItem, out: dict[str, Any], latency: float, task: str) -> dict[str, Any]:
    out = redact_deep(out)  # a reply echoing a key must not reach results.jsonl
    return {
        "id": item.id,
        **_text(item),
        "gold": item.gold,
        **item.extra,
        "prediction": _prediction(out, task),
        "stop_reason": out.get("stop_reason"),
        "rounds": out.get("rounds"),
        "cost": out.get("cost") or {},
        "latency_s": round(latency, 4),
        "errors": out.get("errors") or [],
        **({"review": out["review"]} if out.get("review") else {}),
    }


def _failed_row(item: BenchItem, exc: BaseException, latency: float) -> dict[str, Any]:
    message = redact(f"{type(exc).__name__}: {exc}")[:2000]
    return {
        "id": item.id,
        **_text(item),
        "gold": item.gold,
        **item.extra,
        "prediction": None,
        "stop_reason": FAILED,
        "rounds": 0,
        "cost": {},
        "latency_s": round(latency, 4),
        "errors": [{"kind": "exception", "stage": "run", "message": message}],
    }


def _correct(row: dict[str, Any], task: str) -> float:
    """1.0 for a right item: the gold label, or (answers) a strict exact match."""
    if task == ANSWERS:
        scores = answer_scores(row.get("prediction") or [], row["gold"], row.get("wrong") or [])
        return scores["exact_match"]
    return float(row.get("prediction") == row["gold"])


def _graph_input(item: BenchItem, accepted: set[str]) -> dict[str, Any]:
    return {k: v for k, v in item.inputs.items() if k in TEXT_KEYS or k in accepted}


def check_out_dir(out_dir: Path) -> None:
    """Refuse a run folder that is a file or a device, or that cannot be created (one line).

    Nothing is created here: a run refused later (a bad model, say) leaves no folder behind.

    Raises:
        ValueError: ``out_dir`` (or a folder above it) is not a folder, or is not writable.
    """
    path = Path(out_dir)
    if path.exists() and not path.is_dir():
        raise ValueError(f"--out {out_dir}: is not a folder (a file or a device); give a folder")
    existing = next((p for p in (path, *path.parents) if p.exists()), Path("."))
    if not existing.is_dir():
        raise ValueError(f"--out {out_dir}: cannot create it, {existing} is not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"--out {out_dir}: cannot create or write it ({existing} is read-only)")
    for name in (RESULTS, RUN_FILE):  # appended to or replaced: never through a device or link
        check_target(path / name, "--out")


def make_out_dir(out_dir: Path) -> None:
    """Create the run folder; an OS refusal is a one-line ValueError."""
    try:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"--out {out_dir}: cannot create it ({exc.strerror or exc})") from exc


def data_identity(dataset: str, data_dir: Path | None, items: list[BenchItem]) -> dict[str, str]:
    """What identifies a run's data for resuming: the dataset's folder and a hash of its items.

    Another copy of the dataset (another folder, or other labels, claims or evidence in the
    sampled items) is another run.
    """
    folder = dataset_folder(dataset, data_dir) or datasets_root() / SUBFOLDERS.get(dataset, dataset)
    digest = hashlib.sha256()
    for item in items:
        record = [item.id, item.gold, item.inputs, item.extra]
        digest.update(json.dumps(record, sort_keys=True, default=str).encode("utf-8") + b"\n")
    return {"folder": str(Path(folder).resolve()), "items_sha256": digest.hexdigest()}


def _check_same_run(out_dir: Path, run: dict[str, Any]) -> None:
    path = out_dir / RUN_FILE
    if path.is_file():
        before = json.loads(path.read_text(encoding="utf-8"))
        keys = ("method", "dataset", "limit", "seed", "context", "server_url", "data")
        # A run written before "data" was recorded is resumed as it was (nothing to compare).
        changed = [k for k in keys if (k in before or k != "data") and before.get(k) != run.get(k)]
        if changed:
            raise ValueError(
                f"{out_dir} holds a run with different {', '.join(changed)}; "
                "use another --out directory to start a new run"
            )
    write_atomic(path, json.dumps(run, indent=2, default=str) + "\n")


async def arun_bench(
    method: str,
    dataset: str,
    out_dir: Path,
    *,
    data_dir: Path | None = None,
    limit: int | None = None,
    seed: int = 0,
    concurrency: int = 4,
    context: dict[str, Any] | None = None,
    server_url: str | None = None,
    progress: Progress | None = None,
    pages: bool | None = None,
    checkpoint: str | None = None,
) -> dict[str, Any]:
    """Async ``run_bench`` (see there)."""
    from factdebate.graphs.registry import load_method

    check_concurrency(concurrency)
    check_method_fits(method, dataset)
    if checkpoint is not None:
        if server_url is not None:
            raise ValueError("--checkpoint is for local runs: a server keeps its own threads")
        check_checkpoint(checkpoint)
    out_dir = Path(out_dir)
    check_out_dir(out_dir)
    graph, context_cls = load_method(method)
    task = dataset_task(dataset)
    issues: list[str] = []
    notes: list[str] = []
    items, labels = load_items(dataset, data_dir, limit, seed, issues, notes)
    settings = dict(context or {})
    if server_url is not None:  # the server checks the settings (before any item runs)
        server_invoke = await server_invoker(server_url, method, settings)
    else:  # names and values, before anything runs
        checked = context_cls.from_settings(settings)
        # an unknown or malformed model fails here, before any item runs
        await asyncio.to_thread(check_models, checked)
        settings = await asyncio.to_thread(
            prepare_collection, method, dataset, data_dir, settings, context_cls
        )
    make_out_dir(out_dir)
    run: dict[str, Any] = redact_deep(  # a key inside a model URL is never written or shown
        {
            "method": method,
            "dataset": dataset,
            "limit": limit,
            "seed": seed,
            "context": settings,
            "server_url": server_url,
            "concurrency": concurrency,
            "data": data_identity(dataset, data_dir, items),
        }
    )
    _check_same_run(out_dir, run)

    wanted = {i.id for i in items}
    rows = [r for r in read_results(out_dir / RESULTS) if str(r["id"]) in wanted]
    done_ids = {str(r["id"]) for r in rows}
    todo = [i for i in items if i.id not in done_ids]
    accepted = input_keys(graph)
    if server_url is not None:
        invoke = server_invoke
    elif checkpoint is not None:  # each item its own thread: an interrupted debate resumes
        invoke = durable_invoker(graph, checkpoint, str(out_dir.resolve()))
    else:
        invoke = local_invoker(graph)
    if settings.get("review"):  # every item stops before its verdict: `factdebate review OUT`
        from factdebate.bench.review_queue import queue_checkpoint, review_invoker

        if server_url is not None:
            raise ValueError("--review runs items here: drop --server (or review on the server)")
        store = checkpoint or queue_checkpoint(out_dir)
        invoke = review_invoker(graph, store, str(out_dir.resolve()))
    halted: list[ServerError] = []  # the server went away: stop, resume with the same command
    ctx_obj = None if server_url else context_cls.from_settings(settings)
    pages = pages_wanted(pages, len(items))
    shown = (  # the settings a page shows: every field of the run's context
        settings if ctx_obj is None else {f.name: getattr(ctx_obj, f.name) for f in fields(ctx_obj)}
    )

    stats: dict[str, float] = {
        "correct": sum(_correct(r, task) for r in rows),
        "calls": sum(int((r.get("cost") or {}).get("total", {}).get("llm_calls", 0)) for r in rows),
        "tokens": sum(_tokens(r) for r in rows),
    }

    def report() -> None:
        if progress is not None:
            progress(
                len(rows),
                len(items),
                stats["correct"] / max(1, len(rows)),
                int(stats["calls"]),
                int(stats["tokens"]),
            )

    report()
    semaphore = asyncio.Semaphore(concurrency)
    started = time.perf_counter()
    with (out_dir / RESULTS).open("a", encoding="utf-8") as sink:

        async def one(item: BenchItem) -> None:
            payload = _graph_input(item, accepted)
            async with semaphore:
                if halted:
                    return
                t0 = time.perf_counter()
                try:
                    out = await invoke(
                        payload, ctx_obj if ctx_obj is not None else settings, item.id
                    )
                    row = _row(item, out, time.perf_counter() - t0, task)
                except ServerError as exc:  # no row: the item runs when the bench resumes
                    halted.append(exc)
                    return
                except Exception as exc:  # one failing item must not stop the run
                    row = _failed_row(item, exc, time.perf_counter() - t0)
                    out = row
            if pages:
                await asyncio.to_thread(write_item_page, out_dir, row, out, method, shown)
            sink.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
            sink.flush()
            rows.append(row)
            stats["correct"] += _correct(row, task)
            stats["calls"] += int(row["cost"].get("total", {}).get("llm_calls", 0))
            stats["tokens"] += _tokens(row)
            report()

        await asyncio.gather(*(one(item) for item in todo))
    if halted:
        raise ServerError(
            f"{halted[0]}; {len(rows)} of {len(items)} items done "
            "(run the same command again to resume)"
        )
    run["wall_s"] = round(time.perf_counter() - started, 3)
    run["load_issues"] = issues
    run["notes"] = notes
    run["resumed_items"] = len(done_ids)
    run["task"] = task
    order = {i.id: n for n, i in enumerate(items)}
    rows.sort(key=lambda r: order[str(r["id"])])
    metrics = await asyncio.to_thread(write_summary, out_dir, rows, labels, run, task)
    await asyncio.to_thread(write_bench_page, out_dir, metrics, rows)
    return metrics


def _tokens(row: dict[str, Any]) -> int:
    total = (row.get("cost") or {}).get("total", {})
    return int(total.get("input_tokens", 0)) + int(total.get("output_tokens", 0))


def run_bench(
    method: str,
    dataset: str,
    out_dir: Path,
    *,
    data_dir: Path | None,
    limit: int | None,
    seed: int,
    concurrency: int,
    context: dict[str, Any],
    server_url: str | None = None,
    progress: Progress | None = None,
    pages: bool | None = None,
    checkpoint: str | None = None,
) -> dict[str, Any]:
    """Run ``method`` over ``dataset`` and write results.jsonl, metrics.json, report.md.

    Args:
        method: Registered method name (``factdebate.graphs.registry.METHODS``).
        dataset: Dataset name (``factdebate.datasets.DATASETS``); claim datasets need a claim
            method and are scored as labels, ``ramdocs`` needs a question method (MADAM-RAG and
            its baselines) and is scored by strict exact match and answer precision/recall/F1.
        out_dir: Run directory; an existing one with the same settings is resumed.
        data_dir: Shared datasets root (default ``../shared/datasets`` or $FACTDEBATE_DATASETS).
        limit: Seeded random sample of this many items (None = all).
        seed: Sampling seed.
        concurrency: Items in flight at once.
        context: Settings for the method's context class (e.g. ``{"tool_b": "rag"}``).
        server_url: Send each item as a run to this LangGraph server (an assistant of
            ``method`` with these settings, which the server checks before any item runs).
        progress: Called as ``(done, total, running accuracy, llm calls, tokens)``.
        pages: Write one debate page per item under ``pages/``, linked from report.html;
            None = only for runs of at most ``bench_page.AUTO_PAGES`` items.
        checkpoint: ``sqlite:PATH`` or ``postgresql://...``: every finished step of every
            item is saved (one thread per item), so an item cut off mid-debate resumes there.

    Returns:
        The metrics dict also written to ``metrics.json``.

    Raises:
        DatasetError: unknown or unusable dataset, or a method taking another kind of input.
        ServerError: the server cannot be reached or refuses the run (a ValueError; the
            finished items stay in results.jsonl and the same call resumes).

    """
    return asyncio.run(
        arun_bench(
            method,
            dataset,
            out_dir,
            data_dir=data_dir,
            limit=limit,
            seed=seed,
            concurrency=concurrency,
            context=context,
            server_url=server_url,
            progress=progress,
            pages=pages,
            checkpoint=checkpoint,
        )
    )
