"""Evidence logs and snapshot files: export, show, and each kind of bad input refused in a line."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from factdebate.cli import app
from factdebate.evidence import EvidenceError, open_snapshot
from factdebate.evidence.recording import EvidenceLog, Recorder
from factdebate.evidence.serving import Replayer
from factdebate.evidence.store import CALLS, CARD, DOCUMENTS, JOURNAL
from factdebate.tools.core.evidence_hook import EvidenceCall, EvidenceMissError, LiveAnswer
from factdebate.tools.core.records import Evidence
from tests.bench.test_runner import make_data

runner = CliRunner()


def page(url: str, text: str, score: float = 1.0) -> Evidence:
    return Evidence(id=url, title=url.rsplit("/", 1)[-1], text=text, source="tavily", score=score)


PAGES = [
    page("https://example.org/paris", "Paris is the capital of France.", 0.9),
    page("https://example.org/berlin", "Berlin is the capital of Germany.", 0.4),
    page("https://example.org/tower", "The Eiffel Tower is in Paris.", 0.3),
]


def log_run(folder: Path, dataset: str = "fever-mini") -> Path:
    """A run folder whose log holds two items' search calls (one page shared by both)."""
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps({"method": "tool-mad", "dataset": dataset}))
    log = EvidenceLog(folder / "evidence", {"datasets": [dataset]})
    recorder = Recorder(log)
    for item, query, docs in (
        ("0", "capital of France", PAGES[:2]),
        ("1", "Eiffel Tower city", [PAGES[2], PAGES[0]]),
    ):
        call = EvidenceCall("search", "tavily", query, 3, "c", item, f"claim {item}", "debater_b")
        recorder.serve(call, lambda docs=docs: LiveAnswer(list(docs), ""))
    log.close()
    return folder


def test_a_log_stores_each_document_once_and_a_snapshot_replays_it(tmp_path: Path) -> None:
    run = log_run(tmp_path / "run")
    snapshot = open_snapshot(run)
    assert len(snapshot.calls) == 2 and len(snapshot.documents) == 3  # PAGES[0] once
    assert not (run / "evidence" / JOURNAL).exists()  # folded into the tables
    replay = Replayer(snapshot, "exact", "stop", EvidenceLog())
    call = EvidenceCall("search", "tavily", "  Capital of   FRANCE ", 3, item="0")
    assert replay.serve(call, lambda: pytest.fail("no live call")) == PAGES[:2]
    with pytest.raises(EvidenceMissError, match="'capital of Spain'"):
        replay.serve(EvidenceCall("search", "tavily", "capital of Spain", 3, item="0"), None)
    with pytest.raises(EvidenceMissError):  # another backend or k is another call
        replay.serve(EvidenceCall("search", "serper", "capital of France", 3, item="0"), None)
    claim = Replayer(snapshot, "claim", "stop", EvidenceLog())
    found = claim.serve(EvidenceCall("search", "tavily", "Germany", 1, item="0"), None)
    assert [d["id"] for d in found] == ["https://example.org/berlin"]  # item 0's pool, by BM25
    found = claim.serve(EvidenceCall("search", "tavily", "Germany", 3, item="1"), None)
    assert {d["id"] for d in found} == {PAGES[2]["id"], PAGES[0]["id"]}  # never item 0's Berlin


def test_a_miss_with_live_fallback_runs_the_tool_and_logs_it(tmp_path: Path) -> None:
    log = EvidenceLog()
    replay = Replayer(open_snapshot(log_run(tmp_path / "run")), "exact", "live", log)
    fresh = [page("https://example.org/madrid", "Madrid is the capital of Spain.")]
    call = EvidenceCall("search", "tavily", "capital of Spain", 3, item="0")
    assert replay.serve(call, lambda: LiveAnswer(fresh, "")) == fresh
    assert [c.origin for c in log.snapshot.calls] == ["live"]


def test_an_interrupted_run_keeps_its_journal(tmp_path: Path) -> None:
    log = EvidenceLog(tmp_path / "evidence")
    Recorder(log).serve(
        EvidenceCall("rag", "dense", "q", 2, item="7"), lambda: LiveAnswer(PAGES[:1], "g1")
    )
    with (tmp_path / "evidence" / JOURNAL).open("a") as torn:
        torn.write('{"call": {"item": ')  # the line a crash cut short
    with pytest.raises(EvidenceError, match="interrupted"):  # not yet a snapshot
        open_snapshot(tmp_path)
    again = EvidenceLog(tmp_path / "evidence")  # the resumed run
    assert [(c.item, c.generation) for c in again.snapshot.calls] == [("7", "g1")]
    again.close()
    assert len(open_snapshot(tmp_path).calls) == 1


def test_export_and_show(tmp_path: Path) -> None:
    a, b = log_run(tmp_path / "a"), log_run(tmp_path / "b")
    out = tmp_path / "shared" / "fever.evidence"
    result = runner.invoke(app, ["evidence", "export", str(a), str(b), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "4 calls, 3 documents" in result.output
    with zipfile.ZipFile(out) as archive:
        assert set(archive.namelist()) == {CALLS, DOCUMENTS, CARD}
        card = json.loads(archive.read(CARD))
    assert card["datasets"] == ["fever-mini"] and card["backends"] == ["tavily"]
    assert [r["run"] for r in card["runs"]] == ["a", "b"] and card["format"] == 1
    shown = runner.invoke(app, ["evidence", "show", str(out)])
    assert shown.exit_code == 0, shown.output
    for line in ("| items | 2 |", "| calls | 4 |", "| documents | 3 |", "| backends | tavily |"):
        assert line in shown.output
    summary = json.loads(runner.invoke(app, ["evidence", "show", str(out), "--json"]).output)
    assert summary["first"] <= summary["last"] and summary["first"].startswith("20")
    assert summary["digest"] == open_snapshot(out).digest()


def _rewrite(path: Path, name: str, data: bytes) -> None:
    """Replace one member of a snapshot file."""
    with zipfile.ZipFile(path) as archive:
        parts = {n: archive.read(n) for n in archive.namelist()}
    parts[name] = data
    with zipfile.ZipFile(path, "w") as archive:
        for member, payload in parts.items():
            archive.writestr(member, payload)


def _altered_documents(path: Path) -> bytes:
    with zipfile.ZipFile(path) as archive:
        table = pq.read_table(io.BytesIO(archive.read(DOCUMENTS))).to_pylist()
    table[0]["text"] = "Paris is the capital of Spain."
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(table), sink)
    return sink.getvalue()


@pytest.mark.parametrize("damage", ["not-zip", "truncated", "newer", "altered", "foreign"])
def test_bad_snapshots_are_one_line_and_nothing_is_written(
    tmp_path: Path, data_home: Path, scripted, damage: str
) -> None:
    good = tmp_path / "good.evidence"
    runner.invoke(app, ["evidence", "export", str(log_run(tmp_path / "run")), "--out", str(good)])
    bad = tmp_path / "bad.evidence"
    bad.write_bytes(good.read_bytes())
    if damage == "not-zip":
        bad.write_text("claim,label\nParis is in France,SUPPORTS\n")
    elif damage == "truncated":
        bad.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    elif damage == "newer":
        with zipfile.ZipFile(good) as archive:
            card = json.loads(archive.read(CARD))
        _rewrite(bad, CARD, json.dumps({**card, "format": 99}).encode())
    elif damage == "altered":
        _rewrite(bad, DOCUMENTS, _altered_documents(good))
    expected = {
        "not-zip": "not an evidence snapshot file",
        "truncated": "truncated",
        "newer": "newer factdebate",
        "altered": "does not match its hash",
        "foreign": "holds evidence for fever-mini, not scifact",
    }[damage]
    with pytest.raises(EvidenceError, match=expected):
        if damage != "foreign":
            open_snapshot(bad)
        else:
            from factdebate.evidence import open_replay

            open_replay({"evidence_from": str(bad)}, "scifact")
    # through the command: one line, exit 2, and no run folder made
    name, _ = scripted([], default="ok\n**SUPPORTS**")
    data = make_data(tmp_path / "data", "SR")
    dataset = "fever-mini"
    if damage == "foreign":
        bad = log_run(tmp_path / "other", dataset="scifact")
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        ["bench", "--method", "tool-mad", "--dataset", dataset, "--data-dir", str(data),
         "--model", name, "--out", str(out), "--evidence-from", str(bad)],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.output
    assert not out.exists()


def test_a_served_run_reads_only_the_frozen_evidence_its_operator_lists(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from factdebate.nodes.context import Context
    from factdebate.nodes.policy import operator_problem

    refused = operator_problem({"evidence_from": "/srv/x"}, [Context])
    assert "FACTDEBATE_SERVED_EVIDENCE" in str(refused)
    assert operator_problem({"evidence_from": ""}, [Context]) is None  # the default: live tools
    monkeypatch.setenv("FACTDEBATE_SERVED_EVIDENCE", "/srv/a, /srv/x")
    assert operator_problem({"evidence_from": "/srv/x"}, [Context]) is None
    for near in ("/srv/x/../y", " /srv/x", "/srv/x/"):  # a path is the listed one, exactly
        assert operator_problem({"evidence_from": near}, [Context]) is not None, near


def test_a_process_without_a_session_serves_the_listed_evidence_or_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from factdebate.evidence import served_hook
    from factdebate.tools import dispatch
    from factdebate.tools.core import evidence_hook

    monkeypatch.setattr(evidence_hook, "_opener", [])  # as in a process with no server app
    log_run(tmp_path / "run")
    call = {"k": 2, "collection": "c", "evidence_from": str(tmp_path / "run")}
    with pytest.raises(EvidenceMissError, match="serves no frozen evidence"):
        dispatch._run("search", "q", backend="offline", milvus_uri="", **call)
    evidence_hook.serve_frozen_with(served_hook)
    with pytest.raises(EvidenceMissError, match="not-there"):
        dispatch._run("search", "q", backend="offline", milvus_uri="",
                      **{**call, "evidence_from": str(tmp_path / "not-there")})  # fmt: skip
    pooled = {**call, "evidence_scope": "claim", "claim": "claim 0"}
    docs = dispatch._run("search", "France", backend="offline", milvus_uri="", **pooled)
    assert {d["id"] for d in docs} == {p["id"] for p in PAGES[:2]}  # claim 0's pool only
    assert served_hook(str(tmp_path / "run"), "claim", "stop") is served_hook(
        str(tmp_path / "run"), "claim", "stop"
    )  # opened once


def test_a_repeated_run_reads_as_every_repeats_evidence(tmp_path: Path) -> None:
    for repeat in (1, 2):
        log_run(tmp_path / "run" / f"repeat-{repeat}")
    snapshot = open_snapshot(tmp_path / "run")
    assert len(snapshot.calls) == 4 and len(snapshot.documents) == 3


def turn(agent: str, tool: str, query: str, *docs: dict[str, object]) -> dict[str, object]:
    return {"agent": agent, "tool": tool, "query": query, "evidence": list(docs)}


def test_a_server_result_logs_one_call_per_retrieval_turn() -> None:
    doc = {"id": "https://a.example/x", "title": "A", "text": "Paris is in France.", "score": 0.9}
    transcript = [
        turn("rag_debater", "rag", "q1", {**doc, "source": "milvus"}),
        turn("search_debater", "search", "q2", {**doc, "source": "tavily"}),
        turn("search_debater", "search", "q3", {**doc, "source": "bm25"}),
        turn("judge", "none", "", {**doc, "source": "given"}),  # no call
        turn("rag_debater", "rag", "q4"),  # nothing read
        turn("rag_debater", "rag", "q5", {**doc, "text": None}),  # malformed
        turn("rag_debater", "rag", "q6", {**doc, "source": "milvus", "score": float("nan")}),
    ]
    log = EvidenceLog()
    settings = {"top_k": 5, "rag_engine": "dense", "search_backend": "auto"}
    claim = "Paris is in France."
    assert log.add_transcript("i1", claim, {"transcript": transcript}, settings) == 3
    got = [(c.tool, c.backend, c.query, c.k, c.origin, c.item) for c in log.snapshot.calls]
    assert got == [
        ("rag", "dense", "q1", 5, "server", "i1"),
        ("search", "tavily", "q2", 5, "server", "i1"),  # auto, read off the documents' source
        ("search", "offline", "q3", 5, "server", "i1"),  # auto with no web source: the stand-in
    ]
    assert len(log.snapshot.documents) == 1  # one page, stored once however many calls read it
    chosen = {**settings, "search_backend": "serper"}
    log.add_transcript("i2", "", {"transcript": transcript[1:2]}, chosen)
    assert log.snapshot.calls[-1].backend == "serper"  # the run's own choice stands
