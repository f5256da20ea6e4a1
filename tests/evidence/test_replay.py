"""A Tool-MAD bench logs what its tools returned; the same bench replays it, no web, no index."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from factdebate.bench import load_run, read_results, run_bench
from factdebate.evidence import open_snapshot
from factdebate.tools.models.providers import register_model
from tests.bench.test_runner import make_data
from tests.fakes import ScriptedChatModel, ragas_rules
from tests.tools.websearch.test_backends import KEY, TAVILY_ANSWER, FakeSearchAPI

SETTINGS = {"tool_a": "rag", "tool_b": "search", "search_backend": "tavily", "max_rounds": 1}


def model(query: Callable[[str], str]) -> str:
    """A scripted Tool-MAD model whose query for a claim is ``query(claim number)``."""

    def formulate(prompt: str) -> str:
        number = re.search(r"Claim number (\d+)", prompt)
        return f"[{query(number.group(1) if number else '?')}]"

    rules = [
        *ragas_rules(faithful=True, relevant_question="Is Paris in France?"),
        ("inside square brackets", formulate),
        ("Decide whether the claim holds", "The documents place it in Paris.\n**SUPPORTS**"),
    ]
    return register_model(f"scripted-evidence-{id(query)}", ScriptedChatModel(rules=rules))


@pytest.fixture
def tavily(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeSearchAPI]:
    with FakeSearchAPI(TAVILY_ANSWER, "Authorization") as fake:
        monkeypatch.setenv("TAVILY_API_KEY", KEY)
        monkeypatch.setenv("TAVILY_BASE_URL", fake.url)
        yield fake


def bench(data: Path, out: Path, name: str, **settings: Any) -> dict[str, Any]:
    return run_bench(
        "tool-mad",
        "fever-mini",
        out,
        data_dir=data,
        limit=None,
        seed=0,
        concurrency=2,
        context={"model": name, **SETTINGS, **settings},
        pages=False,
    )


def turns(out: Path) -> dict[str, list[tuple[str, str, list[tuple[str, str]]]]]:
    """Per item: each turn's agent, tool and the documents it read (id, text), in order."""
    return {
        str(row["id"]): [
            (t["agent"], t.get("tool", ""), [(d["id"], d["text"]) for d in t.get("evidence") or []])
            for t in row["result"]["transcript"]
        ]
        for row in read_results(out / "results.jsonl")
    }


def verdicts(out: Path) -> dict[str, Any]:
    return {str(r["id"]): r["prediction"] for r in read_results(out / "results.jsonl")}


@pytest.fixture
def recorded(
    tmp_path: Path, data_home: Path, tavily: FakeSearchAPI
) -> tuple[Path, Path, FakeSearchAPI]:
    """A live Tool-MAD run on three fever-mini claims: the index and the fake Tavily."""
    data = make_data(tmp_path / "data", "SRN")
    bench(data, tmp_path / "live", model(lambda n: f"Paris France {n}"))
    return data, tmp_path / "live", tavily


def test_a_live_run_logs_every_call_with_its_documents(
    recorded: tuple[Path, Path, FakeSearchAPI],
) -> None:
    _, live, tavily = recorded
    calls = pd.read_parquet(live / "evidence" / "calls.parquet")
    docs = pd.read_parquet(live / "evidence" / "documents.parquet")
    assert len(tavily.bodies) == (calls["backend"] == "tavily").sum() > 0
    assert set(calls["item"]) == {"0", "1", "2"}
    assert set(calls["backend"]) == {"hybrid", "tavily"} and set(calls["tool"]) == {"rag", "search"}
    assert set(calls["agent"]) == {"debater_a", "debater_b"}
    assert calls.loc[calls["tool"] == "rag", "generation"].str.len().min() > 0  # the index's
    assert calls.loc[calls["tool"] == "search", "generation"].eq("").all()
    encoders = {json.loads(o)["encoder"] for o in calls.loc[calls["tool"] == "rag", "options"]}
    assert len(encoders) == 1 and "" not in encoders  # claim scope ranks rag pools with it
    assert (calls["query"] == "Paris France 0").sum() >= 2 and (calls["k"] == 3).all()
    assert docs["hash"].is_unique and len(docs) == 3  # d1 and Tavily's two pages, each once
    assert set(docs["url"]) == {
        "",
        "https://en.wikipedia.org/wiki/Eiffel_Tower",
        "https://example.org/facts",
    }
    # every call's documents in order, as the debaters read them
    read = {
        (t[0], tuple(d[0] for d in t[2])) for item in turns(live).values() for t in item if t[2]
    }
    by_hash = dict(zip(docs["hash"], docs["id"], strict=True))
    logged = {
        (a, tuple(by_hash[h] for h in hs))
        for a, hs in zip(calls["agent"], calls["docs"], strict=True)
    }
    assert read <= logged
    rows = load_run(live)  # each item's calls beside its row
    assert [len(r["evidence"]) for r in rows] == [(calls["item"] == r["id"]).sum() for r in rows]
    first = rows[0]["evidence"][0]
    assert {"agent", "tool", "backend", "query", "k", "generation", "time"} <= set(first)
    assert first["documents"][0]["id"] in set(docs["id"])


def test_exact_replay_without_web_or_index_reads_the_same_documents(
    recorded: tuple[Path, Path, FakeSearchAPI], data_home: Path, tmp_path: Path
) -> None:
    data, live, tavily = recorded
    tavily.__exit__(None, None, None)  # the web is gone
    shutil.rmtree(data_home)  # and so is the index
    metrics = bench(
        data, tmp_path / "replay", model(lambda n: f"Paris France {n}"), evidence_from=str(live)
    )
    assert turns(tmp_path / "replay") == turns(live)
    assert verdicts(tmp_path / "replay") == verdicts(live)
    assert metrics["failed"] == 0
    run = json.loads((tmp_path / "replay" / "run.json").read_text())
    assert run["evidence"]["snapshot"] == open_snapshot(live).digest()
    assert run["evidence"]["scope"] == "exact"
    assert "evidence replayed from" in (tmp_path / "replay" / "report.md").read_text()
    replayed = pd.read_parquet(tmp_path / "replay" / "evidence" / "calls.parquet")
    assert set(replayed["origin"]) == {"snapshot"}
    assert not any(data_home.rglob("*"))  # nothing rebuilt the index (or cached a search)


def test_claim_scope_serves_other_queries_from_each_claims_pool(
    recorded: tuple[Path, Path, FakeSearchAPI], data_home: Path, tmp_path: Path
) -> None:
    data, live, tavily = recorded
    tavily.__exit__(None, None, None)
    shutil.rmtree(data_home)
    calls = pd.read_parquet(live / "evidence" / "calls.parquet")
    docs = pd.read_parquet(live / "evidence" / "documents.parquet")
    by_hash = dict(zip(docs["hash"], docs["id"], strict=True))
    pool = {
        item: {by_hash[h] for hs in group["docs"] for h in hs}
        for item, group in calls.groupby("item")
    }
    bench(
        data,
        tmp_path / "claim",
        model(lambda n: f"Eiffel tower height {n} metres"),
        evidence_from=str(live),
        evidence_scope="claim",
    )
    seen = turns(tmp_path / "claim")
    assert sum(len(t[2]) for item in seen.values() for t in item) > 0
    for item, item_turns in seen.items():
        for _, _, read in item_turns:
            assert {doc_id for doc_id, _ in read} <= pool[item]
    queries = set(pd.read_parquet(tmp_path / "claim" / "evidence" / "calls.parquet")["query"])
    assert queries == {f"Eiffel tower height {n} metres" for n in "012"}


def test_a_query_outside_an_exact_snapshot_stops_only_its_item(
    recorded: tuple[Path, Path, FakeSearchAPI], tmp_path: Path
) -> None:
    data, live, _ = recorded
    other = model(lambda n: "Paris France never asked" if n == "1" else f"Paris France {n}")
    metrics = bench(data, tmp_path / "miss", other, evidence_from=str(live))
    rows = {str(r["id"]): r for r in read_results(tmp_path / "miss" / "results.jsonl")}
    assert len(rows) == 3 and metrics["failed"] == 1
    assert rows["1"]["prediction"] is None
    message = rows["1"]["errors"][0]["message"]
    assert "'Paris France never asked'" in message and "\n" not in message
    assert rows["0"]["prediction"] == verdicts(live)["0"]
    assert rows["2"]["prediction"] == verdicts(live)["2"]
