"""The bench runner: resumes after a kill, caps concurrency, records failures, serves answers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from factdebate.bench import read_results, run_bench
from factdebate.bench.judging.report import compare_runs
from factdebate.bench.running.results import repair_results
from factdebate.tools.models.providers import register_model
from tests.bounded import SERVICE_START_S
from tests.conftest import REPO, data_or_skip
from tests.fakes import ScriptedChatModel
from tests.services import stop_group

LABELS = {"S": "SUPPORTS", "R": "REFUTES", "N": "NOT ENOUGH INFO"}


def make_data(root: Path, golds: str, long_claim_at: int | None = None) -> Path:
    """A fever-mini-shaped dataset: one claim per letter of ``golds`` (S/R/N)."""
    folder = root / "fever" / "fever_rag_mini"
    folder.mkdir(parents=True)
    corpus = [{"doc_id": "d1", "text": "Paris is in France.", "page": "Paris"}]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in corpus))
    lines = []
    for i, g in enumerate(golds):
        claim = f"Claim number {i} about Paris."
        if i == long_claim_at:
            claim += " padding" * 40
        lines.append(
            {
                "id": i,
                "claim": claim,
                "label": LABELS[g],
                "gold_doc_ids": [] if g == "N" else ["d1"],
            }
        )
    (folder / "claims.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return root


def bench(tmp: Path, data: Path, model: str, folder: str = "run", **kw: Any) -> dict[str, Any]:
    """CoT on fever-mini ``data`` into ``tmp / folder``, whole sample, seed 0; ``kw`` overrides."""
    args: dict[str, Any] = {
        "data_dir": data,
        "limit": None,
        "seed": 0,
        "concurrency": 2,
        "context": {"model": model},
    }
    args.update(kw)
    return run_bench("cot", "fever-mini", tmp / folder, **args)


def test_run_writes_reports_and_compare(tmp_path: Path, scripted) -> None:
    data = make_data(tmp_path / "data", "SSRN")
    name, _ = scripted([], default="Yes.\n**SUPPORTS**")
    seen: list[tuple[int, int, float, int, int]] = []
    m = bench(tmp_path, data, name, progress=lambda *a: seen.append(a))
    run = tmp_path / "run"
    assert m["n"] == 4 and m["accuracy"] == pytest.approx(0.5)
    assert seen[0][:2] == (0, 4) and seen[-1] == (4, 4, 0.5, 4, seen[-1][4])
    assert seen[-1][4] > 0
    assert len(read_results(run / "results.jsonl")) == 4
    assert json.loads((run / "metrics.json").read_text())["accuracy"] == pytest.approx(0.5)
    assert (run / "confusion.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    report = (run / "report.md").read_text()
    assert "| 50.0 |" in report and "confusion.png" in report and "| debater | 4 |" in report
    row = json.loads((run / "results.jsonl").read_text().splitlines()[0])
    assert set(row) == {
        "id",
        "claim",  # the item's text: results.jsonl is auditable without the dataset
        "gold",
        "prediction",
        "stop_reason",
        "rounds",
        "cost",
        "latency_s",
        "errors",
        "result",  # the whole result contract (tests/bench/test_rows.py)
        "attempt",  # the item's try, as its requests in the call journal name it
    }
    table = compare_runs([run, run])
    # accuracy with its 95% bootstrap interval over the 4 items
    assert table.count("| run | cot | fever-mini | 4 | 50.0 [0.0, 100.0] |") == 2


def test_failing_item_is_recorded_and_run_continues(tmp_path: Path, scripted) -> None:
    data = make_data(tmp_path / "data", "SSSS", long_claim_at=1)
    name, _ = scripted([], default="Yes.\n**SUPPORTS**")
    m = bench(tmp_path, data, name, context={"model": name, "max_claim_chars": 80})
    rows = {r["id"]: r for r in read_results(tmp_path / "run" / "results.jsonl")}
    assert len(rows) == 4 and m["failed"] == 1
    assert rows["1"]["stop_reason"] == "error" and rows["1"]["prediction"] is None
    assert "InputError" in rows["1"]["errors"][0]["message"]
    assert all(rows[i]["prediction"] == "SUPPORTS" for i in ("0", "2", "3"))


def test_concurrency_cap_is_respected(tmp_path: Path) -> None:
    data = make_data(tmp_path / "data", "S" * 12)
    lock, state = threading.Lock(), {"now": 0, "peak": 0}

    def slow(prompt: str) -> str:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.05)
        with lock:
            state["now"] -= 1
        return "ok\n**SUPPORTS**"

    name = register_model("bench-cap", ScriptedChatModel(rules=[("Claim", slow)]))
    bench(tmp_path, data, name, concurrency=3)
    assert state["peak"] == 3


def test_truncated_last_line_is_dropped_and_only_resume_rewrites(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    good = '{"id": "a", "gold": "SUPPORTS"}\n'
    path.write_text(good + good + '{"id": "b", "go')
    rows = read_results(path)
    assert [r["id"] for r in rows] == ["a"]
    assert path.read_text() == good + good + '{"id": "b", "go'  # reading never writes
    assert [r["id"] for r in repair_results(path)] == ["a"]  # bench resume, its one writer
    assert path.read_text() == good


def test_resume_refuses_different_settings(tmp_path: Path, scripted) -> None:
    data = make_data(tmp_path / "data", "SR")
    name, _ = scripted([], default="Yes.\n**SUPPORTS**")
    bench(tmp_path, data, name)
    with pytest.raises(ValueError, match="different"):
        bench(tmp_path, data, name, seed=5, limit=1)


CHILD = """
import sys, time
sys.path.insert(0, {repo!r})
from pathlib import Path
from factdebate.bench import run_bench
from tests.fakes import ScriptedChatModel
from factdebate.tools.models.providers import register_model

def slow(prompt):
    time.sleep(0.25)
    return "ok\\n**SUPPORTS**"

register_model("bench-resume", ScriptedChatModel(rules=[("Claim", slow)]))
run_bench("cot", "fever-mini", Path({out!r}), data_dir=Path({data!r}), limit=None, seed=0,
          concurrency=2, context={{"model": "bench-resume"}})
"""


def test_resume_after_killed_process(tmp_path: Path) -> None:
    data = make_data(tmp_path / "data", "SRN" * 8)
    out = tmp_path / "run"
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(CHILD.format(repo=str(REPO), out=str(out), data=str(data))))
    child = subprocess.Popen(
        [sys.executable, str(script)],
        cwd=REPO,
        env={**os.environ},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    results = out / "results.jsonl"
    deadline = time.time() + 60
    try:
        while time.time() < deadline:
            if results.exists() and len(results.read_text().splitlines()) >= 4:
                break
            if child.poll() is not None:
                pytest.fail(f"child ended early: {child.stderr.read().decode()[-2000:]}")
            time.sleep(0.05)
        else:
            pytest.fail("child wrote no results in time")
        child.send_signal(signal.SIGKILL)
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)
    before = read_results(results)
    assert 4 <= len(before) < 24, "the kill must interrupt the run"

    model = ScriptedChatModel(rules=[], default="ok\n**SUPPORTS**")
    register_model("bench-resume", model)
    m = bench(tmp_path, data, "bench-resume")  # into out, where the killed child wrote
    ids = [json.loads(line)["id"] for line in results.read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 24
    assert set(ids) == {str(i) for i in range(24)}
    assert len(model.prompts) == 24 - len(before)
    assert m["n"] == 24 and m["run"]["resumed_items"] == len(before)


SERVER_GRAPH = """
import sys
sys.path.insert(0, {repo!r})
from tests.fakes import ScriptedChatModel
from factdebate.tools.models.providers import register_model

register_model("server-fake", ScriptedChatModel(rules=[], default="ok\\n**REFUTES**"))
from factdebate.graphs.cot import graph  # noqa: E402
"""


def test_server_mode_against_langgraph_dev(tmp_path: Path) -> None:
    import socket
    import urllib.request

    cli = Path(sys.executable).parent / "langgraph"
    if not cli.exists():
        pytest.skip("langgraph-cli is not installed")
    app = tmp_path / "app"
    app.mkdir()
    (app / "bench_graph.py").write_text(SERVER_GRAPH.format(repo=str(REPO)))
    (app / "langgraph.json").write_text(
        json.dumps({"graphs": {"cot": "./bench_graph.py:graph"}, "dependencies": ["."]})
    )
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {
        **os.environ,
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
        "PATH": f"{cli.parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    server = subprocess.Popen(
        [str(cli), "dev", "--host", "127.0.0.1", "--port", str(port), "--no-browser"],
        cwd=app,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + SERVICE_START_S
        while time.time() < deadline:
            if server.poll() is not None:
                pytest.fail(f"server exited: {server.stderr.read().decode()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{url}/ok", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail(f"langgraph dev did not start within {SERVICE_START_S:.0f} s")
        data = make_data(tmp_path / "data", "RRS")
        m = bench(tmp_path, data, "server-fake", server_url=url)
    finally:
        stop_group(server, 15)
    rows = read_results(tmp_path / "run" / "results.jsonl")
    assert len(rows) == 3 and m["failed"] == 0
    assert m["accuracy"] == pytest.approx(2 / 3)
    assert all(r["cost"]["total"]["llm_calls"] == 1 for r in rows)
    assert json.loads((tmp_path / "run" / "run.json").read_text())["server_url"] == url


# --------------------------------------------------------------------------- answers (RAMDocs)


def ramdocs_items(limit: int = 3) -> list[Any]:
    from factdebate.bench import load_items
    from factdebate.datasets import datasets_root

    items, labels = data_or_skip(
        lambda: load_items("ramdocs", None, limit, 0), f"RAMDocs under {datasets_root()}"
    )
    assert labels == ()
    return items


def ramdocs_model(scripted, items: list[Any]) -> tuple[str, ScriptedChatModel, list[list[str]]]:
    """Aggregator answers: all gold (item 0), one gold + one wrong (1), a made-up one (2)."""
    first = items[0].gold
    second = [items[1].gold[0], *items[1].extra["wrong"][:1]]
    predicted = [first, second, ["Atlantis Fictional Answer"]]
    by_question = {i.inputs["question"]: p for i, p in zip(items, predicted, strict=True)}

    def aggregator(prompt: str) -> str:
        answers = next(p for q, p in by_question.items() if q in prompt)
        return json.dumps({"answers": answers, "explanation": "scripted"})

    name, model = scripted(
        [("AnswerList", aggregator)],
        default=json.dumps({"answer": "unknown", "explanation": "my document says so"}),
    )
    return name, model, predicted


def test_ramdocs_run_scores_answers_and_resumes(tmp_path: Path, scripted) -> None:
    from factdebate.tools.scoring.answers import answer_scores

    items = ramdocs_items()
    name, model, predicted = ramdocs_model(scripted, items)
    seen: list[tuple[int, int, float, int, int]] = []
    out = tmp_path / "run"

    def go() -> dict[str, Any]:
        return run_bench(
            "madam-rag",
            "ramdocs",
            out,
            data_dir=None,
            limit=3,
            seed=0,
            concurrency=2,
            context={"model": name, "max_rounds": 1},
            progress=lambda *a: seen.append(a),
        )

    m = go()
    hand = [
        answer_scores(p, i.gold, i.extra["wrong"]) for p, i in zip(predicted, items, strict=True)
    ]
    assert [h["exact_match"] for h in hand] == [1.0, 0.0, 0.0]  # all gold / misled / wrong
    for key in ("exact_match", "precision", "recall", "f1"):
        assert m[key] == pytest.approx(sum(h[key] for h in hand) / 3), key
    assert m["task"] == "answers" and m["n"] == 3 and m["failed"] == 0
    assert m["stop_reasons"] == {"round_limit": 3} and m["cost"]["per_role"]["aggregator"]
    assert seen[-1][:3] == (3, 3, pytest.approx(1 / 3))  # progress shows running strict EM
    rows = {r["id"]: r for r in read_results(out / "results.jsonl")}
    for item, answers in zip(items, predicted, strict=True):
        row = rows[item.id]
        assert row["prediction"] == answers and row["gold"] == item.gold
        assert row["wrong"] == item.extra["wrong"]
    first_doc = items[0].inputs["documents"][0]["text"][:60]
    assert any(first_doc in p for p in model.prompts), "the item's documents reach the agents"
    assert not (out / "confusion.png").exists()
    report = (out / "report.md").read_text()
    assert "| strict EM | answer precision | answer recall | answer F1 |" in report
    assert f"| {100 * m['exact_match']:.1f} | {100 * m['precision']:.1f} |" in report
    assert "Confusion" not in report
    assert "| strict EM | answer F1 |" in compare_runs([out])

    # resume: drop two finished rows; only those two items run again, metrics unchanged
    lines = (out / "results.jsonl").read_text().splitlines()
    (out / "results.jsonl").write_text(lines[0] + "\n")
    model.prompts.clear()
    again = go()
    assert model.calls_with("AnswerList") == 2
    assert again["run"]["resumed_items"] == 1
    for key in ("exact_match", "precision", "recall", "f1"):
        assert again[key] == pytest.approx(m[key])
    assert len(read_results(out / "results.jsonl")) == 3


def test_method_and_dataset_kinds_must_match(tmp_path: Path, scripted) -> None:
    from factdebate.datasets import DatasetError

    name, model = scripted([], default="x")
    data = make_data(tmp_path / "data", "SR")
    with pytest.raises(DatasetError, match="madam-rag takes questions but fever-mini holds claims"):
        run_bench(
            "madam-rag",
            "fever-mini",
            tmp_path / "a",
            data_dir=data,
            limit=None,
            seed=0,
            concurrency=1,
            context={"model": name},
        )
    with pytest.raises(DatasetError, match="cot takes claims but ramdocs holds questions"):
        run_bench(
            "cot",
            "ramdocs",
            tmp_path / "b",
            data_dir=None,
            limit=1,
            seed=0,
            concurrency=1,
            context={"model": name},
        )
    with pytest.raises(DatasetError, match="mad-fact takes answers"):
        run_bench(
            "mad-fact",
            "fever-mini",
            tmp_path / "c",
            data_dir=data,
            limit=None,
            seed=0,
            concurrency=1,
            context={"model": name},
        )
    assert model.prompts == [] and not (tmp_path / "a").exists()


def test_a_second_bench_on_a_folder_being_written_is_refused(tmp_path: Path, scripted) -> None:
    from factdebate.runs.folder import RowsBusyError, append_rows

    data = make_data(tmp_path / "data", "SR")
    name, model = scripted([], default="Yes.\n**SUPPORTS**")
    (tmp_path / "run").mkdir()
    busy = pytest.raises(RowsBusyError, match="being written by another process")
    with append_rows(tmp_path / "run" / "results.jsonl"), busy:  # another bench appending
        bench(tmp_path, data, name)
    assert model.prompts == []  # refused before any item ran
    assert bench(tmp_path, data, name)["n"] == 2  # once the other is done, it runs
