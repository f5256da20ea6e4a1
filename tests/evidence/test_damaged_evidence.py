"""Damaged evidence files: each one line through the command, bounded memory, nothing changed.

Every case damages one file of a good log (or builds a hostile one), hashes the folder,
runs ``factdebate evidence show`` on it and checks: exit 2, one line naming the file and
why, the folder's bytes unchanged. The decompression bombs are opened in a child process
whose peak resident memory (``VmHWM``) is measured.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from factdebate.cli import app
from factdebate.evidence import EvidenceError, export_snapshot, open_snapshot
from factdebate.evidence.format import CallRecord, Document, Snapshot, doc_hash
from factdebate.evidence.recording import EvidenceLog
from factdebate.evidence.serving import Replayer
from factdebate.evidence.session import EvidenceRun, check_log_folder, served_hook
from factdebate.evidence.store import CALLS, CARD, DOCUMENTS, JOURNAL, write_log
from factdebate.tools.core.evidence_hook import EvidenceCall, LiveAnswer
from factdebate.tools.websearch import cache
from tests.bounded import COMMAND_GUARD_S, communicate_bounded
from tests.conftest import REPO
from tests.evidence.test_snapshots import PAGES, log_run, page

runner = CliRunner()
MEMORY_BOUND = 200 * 1024**2
"""Peak resident memory of the child that opens every bomb, in bytes."""
DEEP = 100_000


def no_live() -> LiveAnswer:
    """The live tool of a replay that must not reach it."""
    raise AssertionError("no live call expected")


def folder_hash(folder: Path) -> str:
    """A hash of every file's path and bytes under ``folder``."""
    sha = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        sha.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return sha.hexdigest()


def shown_line(path: Path) -> str:
    """`evidence show PATH`: refused with exit 2 in one line, which is returned."""
    done = runner.invoke(app, ["evidence", "show", str(path)], env={"COLUMNS": "400"})
    lines = [line for line in done.output.splitlines() if line.strip()]
    assert done.exit_code == 2, done.output
    assert len(lines) == 1 and "Traceback" not in done.output, done.output
    return lines[0]


def rewrite_card(log: Path, change: Callable[[dict[str, Any]], Any]) -> None:
    card = json.loads((log / CARD).read_text())
    (log / CARD).write_text(json.dumps(change(card)))


def rewrite_table(path: Path, column: str, values: pa.Array) -> None:
    table = pq.read_table(path)
    table = table.set_column(table.schema.get_field_index(column), column, values)
    pq.write_table(table, path)


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


def _nested_card(log: Path) -> None:
    text = (log / CARD).read_text()
    (log / CARD).write_text(text.rstrip().rstrip("}") + f', "extra": {deep(DEEP)}}}')


def _deep_extra_card(log: Path) -> None:
    rewrite_card(log, lambda c: {**c, "extra": json.loads(deep(50))})


CASES: dict[str, tuple[Callable[[Path], object], str]] = {
    "card nested beyond the parser": (_nested_card, "evidence.json: not JSON (nested too deeply"),
    "card nested beyond the bound": (_deep_extra_card, "nested deeper than 32 levels"),
    "card scopes not a list": (
        lambda log: rewrite_card(log, lambda c: {**c, "scopes": "exact"}),
        "evidence.json scopes",
    ),
    "card datasets of numbers": (
        lambda log: rewrite_card(log, lambda c: {**c, "datasets": [1]}),
        "evidence.json datasets.0",
    ),
    "card read not an object": (
        lambda log: rewrite_card(log, lambda c: {**c, "read": 5}),
        "evidence.json read",
    ),
    "card digest of other tables": (
        lambda log: rewrite_card(log, lambda c: {**c, "digest": "0" * 64}),
        "is not the one its evidence.json names",
    ),
    "calls k as text": (
        lambda log: rewrite_table(log / CALLS, "k", pa.array(["three", "three"])),
        "calls.parquet column k is string, not a whole number",
    ),
    "calls docs as text": (
        lambda log: rewrite_table(log / CALLS, "docs", pa.array(["a", "b"])),
        "calls.parquet column docs is string, not a list of text",
    ),
    "calls options nested deeply": (
        lambda log: rewrite_table(log / CALLS, "options", pa.array(["{}", deep(DEEP)])),
        "calls.parquet row 2: options",
    ),
    "calls options nested beyond the bound": (
        lambda log: rewrite_table(
            log / CALLS, "options", pa.array(["{}", '{"a": ' + deep(40) + "}"])
        ),
        "nested deeper than 32 levels",
    ),
    "calls table not parquet": (
        lambda log: (log / CALLS).write_bytes(b"PAR1 not really"),
        "calls.parquet is not a readable Parquet table",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_damaged_log_is_one_line_and_left_as_it_was(tmp_path: Path, case: str) -> None:
    run = log_run(tmp_path / "run")
    damage, words = CASES[case]
    damage(run / "evidence")
    before = folder_hash(tmp_path)
    line = shown_line(run)
    assert words in line and str(run / "evidence") in line, line
    assert folder_hash(tmp_path) == before


def test_an_export_of_a_deeply_nested_run_file_is_one_line_or_exports(tmp_path: Path) -> None:
    run = log_run(tmp_path / "run")
    (run / "run.json").write_text(deep(DEEP))
    snapshot = export_snapshot([run], tmp_path / "out.evidence")  # the run file is optional
    assert len(snapshot.calls) == 2 and snapshot.info["runs"] == []


def _dictionary_bomb(path: Path) -> None:
    """A small documents table whose one long text, reused by every row, decodes to 500 MB."""
    rows, text = 5_000, "x" * 100_000
    indices = pa.array([0] * rows, pa.int32())
    columns = {
        name: pa.DictionaryArray.from_arrays(indices, pa.array([value]))
        for name, value in (
            ("hash", "a" * 64), ("id", "d"), ("title", ""), ("text", text), ("url", ""),
            ("source", "s"),
        )
    }  # fmt: skip
    pq.write_table(pa.table(columns), path, compression="zstd", store_schema=False)


def _declared_bomb(path: Path) -> None:
    """A documents table whose one page unpacks to 64 MB from a few kilobytes."""
    columns = {n: pa.array([""]) for n in ("hash", "id", "title", "url", "source")}
    columns["text"] = pa.array(["z" * (64 * 1024**2)])
    pq.write_table(pa.table(columns), path, compression="zstd", use_dictionary=False)


def _bomb_log(folder: Path, make: Callable[[Path], None]) -> Path:
    run = log_run(folder)
    make(run / "evidence" / DOCUMENTS)
    return run


def _zip_bomb(path: Path, good: Path) -> None:
    """A snapshot file whose documents member deflates 100 MB of zeros to about 100 KB."""
    with zipfile.ZipFile(good) as archive:
        parts = {n: archive.read(n) for n in archive.namelist()}
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(CARD, parts[CARD])
        archive.writestr(CALLS, parts[CALLS])
        with archive.open(DOCUMENTS, "w", force_zip64=True) as member:
            block = bytes(1024**2)
            for _ in range(100):
                member.write(block)


CHILD = """
import json, sys
from factdebate.evidence import EvidenceError, open_snapshot
lines = []
for path in sys.argv[1:]:
    try:
        open_snapshot(path)
        lines.append("opened")
    except EvidenceError as exc:
        lines.append(str(exc))
# VmHWM: this process's own peak (ru_maxrss keeps the forking parent's across exec)
status = open("/proc/self/status").read().split("VmHWM:")[1]
peak = int(status.split()[0]) * 1024
print(json.dumps({"lines": lines, "peak": peak}))
"""


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="needs Linux's /proc")
def test_decompression_bombs_are_refused_in_bounded_memory(tmp_path: Path) -> None:
    dictionary = _bomb_log(tmp_path / "dictionary", _dictionary_bomb)
    declared = _bomb_log(tmp_path / "declared", _declared_bomb)
    good = export_snapshot([log_run(tmp_path / "run")], tmp_path / "good.evidence")
    assert good.calls
    zipped = tmp_path / "bomb.evidence"
    _zip_bomb(zipped, tmp_path / "good.evidence")
    assert max(p.stat().st_size for p in (zipped, dictionary / "evidence" / DOCUMENTS)) < 2**20
    before = folder_hash(tmp_path)
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(dictionary), str(declared), str(zipped)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    out, errors = communicate_bounded(child, what="the bomb reader", guard_s=COMMAND_GUARD_S)
    assert child.returncode == 0, errors
    found = json.loads(out)
    dict_line, declared_line, zip_line = found["lines"]
    assert "documents.parquet decodes to over" in dict_line, dict_line
    assert "documents.parquet says it unpacks to" in declared_line, declared_line
    assert "unpacks" in zip_line and "decompression bomb" in zip_line, zip_line
    assert all("\n" not in line for line in found["lines"])
    assert found["peak"] < MEMORY_BOUND, f"peak {found['peak'] / 2**20:.0f} MiB"
    assert folder_hash(tmp_path) == before


def test_a_deeply_nested_knowledge_store_line_is_one_line(tmp_path: Path) -> None:
    store = tmp_path / "ks"
    store.mkdir()
    (store / "0.json").write_text('{"url": "https://a", "url2text": ["fine"]}\n')
    (store / "1.json").write_text('{"url": "https://a", "url2text": ["x"], "more": ' + deep(DEEP))
    line = shown_line(store)
    assert "1.json:1" in line and "nested too deeply" in line, line


def test_a_deeply_nested_journal_line_does_not_block_resume(tmp_path: Path) -> None:
    log = EvidenceLog(tmp_path / "evidence", {"datasets": ["fever-mini"]})
    log.add(EvidenceCall("search", "tavily", "q", 3, item="0"), PAGES[:1], "", "live")
    with (tmp_path / "evidence" / JOURNAL).open("a") as journal:
        journal.write('{"call": ' + deep(DEEP) + "}\n")
        journal.write('{"call": {"item": 5}}\n')  # a call of the wrong types
    again = EvidenceLog(tmp_path / "evidence")
    assert [c.item for c in again.snapshot.calls] == ["0"]


def _pool_run(folder: Path, dataset: str, text: str) -> Path:
    """A run of ``dataset`` whose item ``0`` read one page holding ``text``."""
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps({"method": "tool-mad", "dataset": dataset}))
    log = EvidenceLog(folder / "evidence", {"datasets": [dataset]})
    call = EvidenceCall("search", "tavily", "where", 3, item="0", claim=f"{dataset} claim")
    log.add(call, [page(f"https://{dataset}.example/0", text)], "", "live")
    log.close()
    return folder


def test_a_snapshot_of_two_datasets_keeps_their_pools_apart(tmp_path: Path) -> None:
    fever = _pool_run(tmp_path / "fever", "fever-mini", "The tower stands in Paris.")
    averitec = _pool_run(tmp_path / "averitec", "averitec", "The senator voted twice.")
    both = tmp_path / "both.evidence"
    export_snapshot([fever, averitec], both)
    snapshot = open_snapshot(both)
    assert {c.dataset for c in snapshot.calls} == {"fever-mini", "averitec"}
    for dataset, words in (("fever-mini", "tower"), ("averitec", "senator")):
        replay = Replayer(snapshot, "claim", "stop", EvidenceLog(), dataset)
        found = replay.serve(EvidenceCall("search", "tavily", "anything", 5, item="0"), no_live)
        assert [words in d["text"] for d in found] == [True], (dataset, found)


def test_a_damaged_cache_entry_is_ignored_counted_and_searched_live(
    data_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Paid:
        name = "tavily"
        calls = 0

        def cache_options(self) -> dict[str, Any]:
            return {}

        def search(self, query: str, k: int) -> list[Any]:
            Paid.calls += 1
            return [page("https://live.example", f"live answer {Paid.calls}")]

    key = cache.search_key("tavily", "q", 3, {})
    store = cache.SearchCache(cache.cache_path(), 3600, 2**20)
    store.put(key, "tavily", "q", 3, [page("https://a", "stored")])
    import sqlite3

    for damaged in (deep(DEEP), '[{"id": 1}]'):
        with sqlite3.connect(cache.cache_path()) as conn:
            conn.execute("UPDATE searches SET docs = ?", (damaged,))
        with cache.tallying() as tally:
            docs, status = cache.cached_search(Paid(), "q", 3, ttl_s=3600, max_mb=1)
        assert status == "miss" and docs[0]["text"].startswith("live answer")
        assert tally.summary()["damaged"] == 1
        assert "1 damaged cache entries ignored" in cache.describe(tally.summary())
    with sqlite3.connect(cache.cache_path()) as conn:
        conn.execute("UPDATE searches SET stored_at = 'yesterday'")
    with cache.tallying() as tally:
        assert cache.cached_search(Paid(), "q", 3, ttl_s=3600, max_mb=1)[1] == "miss"


def test_an_export_into_its_own_run_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    run = log_run(tmp_path / "run")
    before = folder_hash(run)
    for target in (run / "evidence" / CALLS, run / "evidence" / "x.evidence", run / "y"):
        done = runner.invoke(app, ["evidence", "export", str(run), "--out", str(target)])
        assert done.exit_code == 2 and "lies inside the source" in done.output, done.output
    assert folder_hash(run) == before


def test_a_log_folder_that_cannot_hold_a_log_is_refused_before_any_call(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    a_file = tmp_path / "file"
    a_file.write_text("x")
    for where, words in (
        (Path("/dev/null") / "evidence", "a device or a pipe"),
        (fifo / "evidence", "a device or a pipe"),
        (a_file / "evidence", "a file"),
    ):
        with pytest.raises(EvidenceError, match=words):
            check_log_folder(where)
    check_log_folder(tmp_path / "new" / "evidence")  # made by the first call


def _replay_run(snapshot: Snapshot, miss: str, items: list[str]) -> EvidenceRun:
    log = EvidenceLog()
    replay = Replayer(snapshot, "exact", miss, log)
    for item in items:
        call = EvidenceCall("search", "tavily", "capital of France", 3, item=item)
        if item == "new":
            call = EvidenceCall("search", "tavily", "unheard of", 3, item=item)
        replay.serve(call, lambda: LiveAnswer(PAGES[:1], ""))
    read = {"from": "x.evidence", "snapshot": snapshot.digest(), "scope": "exact", "miss": miss}
    return EvidenceRun(log, read)


def test_the_report_says_which_calls_went_live(tmp_path: Path) -> None:
    snapshot = open_snapshot(log_run(tmp_path / "run"))
    frozen = _replay_run(snapshot, "live", ["0", "0"]).note()
    assert "2 calls answered from it, no live retrieval or search" in frozen
    mixed = _replay_run(snapshot, "live", ["0", "new"]).note()
    assert "1 calls answered from it, 1 went live (items new)" in mixed
    assert "no call was answered" in EvidenceRun(EvidenceLog(), {**_read()}).note()


def _read() -> dict[str, str]:
    return {"from": "listed.evidence", "scope": "claim", "miss": "stop", "on": "server"}


def test_the_served_cache_sees_an_edit_inside_a_folder(tmp_path: Path) -> None:
    log = tmp_path / "served" / "evidence"
    write_log(log, _one_call("first text"))
    first = served_hook(str(tmp_path / "served"), "claim", "stop")
    write_log(log, _one_call("second text"))  # the folder itself is not touched
    os.utime(tmp_path / "served", ns=(0, 0))
    second = served_hook(str(tmp_path / "served"), "claim", "stop")
    assert first is not second
    found = second.serve(EvidenceCall("search", "tavily", "text", 3, item="0"), no_live)
    assert found[0]["text"] == "second text"


def _one_call(text: str) -> Snapshot:
    doc = Document(doc_hash("d", "", text, ""), "d", "", text, "", "tavily")
    call = CallRecord("0", "c", "a", "search", "tavily", "q", 3, "", "", "", (doc.hash,), (1.0,))
    return Snapshot({doc.hash: doc}, [call], {"datasets": ["fever-mini"]})


def test_a_run_whose_method_reads_no_retrieval_says_so(tmp_path: Path) -> None:
    run = tmp_path / "cot"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"method": "cot", "dataset": "fever-mini"}))
    (run / "results.jsonl").write_text("{}\n")
    done = runner.invoke(app, ["evidence", "export", str(run), "--out", str(tmp_path / "o")])
    assert done.exit_code == 2
    assert "its run (cot) made no retrieval or search call" in done.output
    assert "run the benchmark first" not in done.output


def test_a_comparison_page_inside_a_run_is_refused(tmp_path: Path) -> None:
    run = log_run(tmp_path / "run")
    (run / "report.html").write_text("the run's own report")
    done = runner.invoke(app, ["bench", "--compare", str(run), "--html", str(run / "report.html")])
    assert done.exit_code == 2 and "lies inside the run" in done.output, done.output
    assert (run / "report.html").read_text() == "the run's own report"


def test_a_home_that_cannot_be_made_stops_the_run_before_any_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from factdebate.evidence import evidence_session
    from factdebate.tools.core.home import HomeError

    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    monkeypatch.setenv("FACTDEBATE_HOME", str(blocker / "home"))
    with (
        pytest.raises(HomeError, match="cannot create the data home"),
        evidence_session({}, tmp_path / "run"),
    ):
        raise AssertionError("the run must not start")
    assert not (tmp_path / "run").exists()


def test_a_damaged_repeat_is_one_line_through_show_and_run_frame(tmp_path: Path) -> None:
    from factdebate.bench.judging.rows import run_frame

    bench = tmp_path / "bench"
    log_run(bench / "repeat-1")
    log_run(bench / "repeat-2")
    rewrite_card(bench / "repeat-2" / "evidence", lambda c: {**c, "scopes": "exact"})
    before = folder_hash(bench)
    line = shown_line(bench)
    assert "repeat-2" in line and "evidence.json scopes" in line, line
    damaged = log_run(tmp_path / "damaged")
    (damaged / "results.jsonl").write_text('{"id": "0", "gold": "SUPPORTS"}\n')
    rewrite_table(damaged / "evidence" / CALLS, "k", pa.array(["three", "three"]))
    with pytest.raises(EvidenceError, match="column k is string") as caught:
        run_frame(damaged)
    assert "\n" not in str(caught.value)
    assert folder_hash(bench) == before


def test_verify_refuses_an_evidence_log_at_a_device_before_any_call(data_home: Path) -> None:
    done = runner.invoke(
        app,
        ["verify", "Paris is in France.", "--model", "openai:gpt-4o-mini"]
        + ["--evidence-log", "/dev/null"],
        env={"COLUMNS": "400", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"},
    )
    assert done.exit_code == 2, done.output
    lines = [line for line in done.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "a device or a pipe, not a folder" in lines[0], done.output
