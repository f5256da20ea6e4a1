"""AVeriTeC's knowledge store as frozen evidence: DebateCV and Tool-MAD read only a claim's pages.

The fixture follows the layout of the 2024 shared task's knowledge store as its own scraper
writes it (huggingface.co/chenxwh/AVeriTeC, ``src/retrieval/scraper_for_knowledge_store.py``;
its README's "knowledge store" section): per split a folder of ``<claim_id>.json`` files, each
holding JSON lines ``{"claim_id", "type", "query", "url", "url2text"}`` where ``url2text`` is
the scraped page as a list of sentences (empty when scraping failed), and the shared task's
BM25 baseline (``src/reranking/bm25_sentences.py``) reads ``url`` and ``url2text`` per line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from factdebate.bench import run_bench
from factdebate.evidence import EvidenceError, open_snapshot
from factdebate.evidence import averitec as store
from factdebate.evidence.averitec import load_knowledge_store, passages
from factdebate.evidence.format import Snapshot
from tests.fakes import ragas_rules
from tests.nodes.debate_cv.test_graph import decision, rules

CLAIMS = [
    ("The Eiffel Tower was finished in 1889.", "Supported"),
    ("Mount Everest is in Peru.", "Refuted"),
]
PAGES = {
    "0": [
        (
            "https://example.org/tower",
            ["The Eiffel Tower opened in March 1889.", "It is in Paris."],
        ),
        ("https://example.org/failed", []),  # a page the scraper could not read
        ("https://example.org/expo", ["The 1889 World's Fair was held in Paris."]),
    ],
    "1": [
        ("https://example.org/everest", ["Mount Everest lies on the Nepal-China border."]),
        ("https://example.org/andes", ["Peru's highest peak is Huascaran."]),
    ],
}


def page_line(claim_id: str, url: str, sentences: list[str]) -> str:
    line = {
        "claim_id": claim_id,
        "type": "claim",
        "query": "the claim, as the search query",
        "url": url,
        "url2text": sentences,
    }
    return json.dumps(line) + "\n"


def write_store(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for claim_id, pages in PAGES.items():
        text = "".join(page_line(claim_id, url, sentences) for url, sentences in pages)
        (folder / f"{claim_id}.json").write_text(text)
    return folder


def write_dev(root: Path) -> Path:
    """An AVeriTeC ``dev.json`` of the two claims (its gold QA pairs must not be read)."""
    records = [
        {
            "claim": claim,
            "label": label,
            "questions": [
                {"question": "GOLD QUESTION", "answers": [{"answer": "GOLD ANSWER"}]},
            ],
        }
        for claim, label in CLAIMS
    ]
    (root / "averitec").mkdir(parents=True)
    (root / "averitec" / "dev.json").write_text(json.dumps(records))
    return root


def page(url: str) -> str:
    """The page a passage's URL points into (``<page>#p<n>``)."""
    return url.rpartition("#p")[0]


def urls_of(claim_id: str) -> set[str]:
    return {url for url, sentences in PAGES[claim_id] if sentences}


def test_a_store_loads_one_pool_per_claim_that_serves_only_claim_scope(tmp_path: Path) -> None:
    folder = write_store(tmp_path / "ks")
    snapshot = open_snapshot(folder)  # found by the registered loader
    assert snapshot.info["scopes"] == ["claim"] and snapshot.info["datasets"] == ["averitec"]
    by_item = {call.item: call for call in snapshot.calls}
    assert sorted(by_item) == ["0", "1"]
    for claim_id, call in by_item.items():
        docs = [snapshot.documents[h] for h in call.docs]
        assert {page(d.url) for d in docs} == urls_of(claim_id)  # the empty page gives nothing
        assert all(d.id == d.url and "#p" in d.id and d.source == "knowledge-store" for d in docs)
    snapshot.check("test")  # every document is stored under its content hash
    assert [c.item for c in open_snapshot(folder, items=["1", "9"]).calls] == ["1"]
    only = load_knowledge_store(folder, claim_ids=["1"], claims={"1": CLAIMS[1][0]})
    assert [(c.item, c.claim) for c in only.calls] == [("1", CLAIMS[1][0])]


def test_sentences_become_bounded_passages_and_pages_are_capped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert passages(["a" * 500, "b" * 200, "c" * 300, "  ", "d  e"]) == [
        "a" * 500 + " " + "b" * 200,
        "c" * 300 + " d e",
    ]
    assert passages(["x" * 5000]) == ["x" * store.MAX_SENTENCE_CHARS]
    folder = tmp_path / "ks"
    folder.mkdir()
    lines = [page_line("7", f"https://example.org/{n}", [f"Page {n} text."]) for n in range(6)]
    lines.insert(2, page_line("7", "https://example.org/huge", ["y" * 400]))
    (folder / "7.jsonl").write_text("".join(lines))
    monkeypatch.setattr(store, "MAX_PAGES", 5)
    monkeypatch.setattr(store, "MAX_LINE_BYTES", 300)
    snapshot = load_knowledge_store(folder)
    urls = [page(snapshot.documents[h].url) for h in snapshot.calls[0].docs]
    assert urls == [f"https://example.org/{n}" for n in range(4)]
    assert snapshot.info["knowledge_store"]["pages_too_long"] == 1
    assert snapshot.info["knowledge_store"]["claims_cut"] == 1


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("{not json\n", "3.json:1: not a JSON line"),
        ('["a list"]\n', "3.json:1: a page must be a JSON object"),
        ('{"url": "https://a", "url2text": "one string"}\n', "url2text must be a list"),
        ('{"url": "https://a", "url2text": ["ok", 3]}\n', "url2text must be a list"),
        ('{"url2text": ["no url"]}\n', "3.json:1: the page has no url"),
        ('\n{"claim_id": "4", "url": "https://a", "url2text": ["x"]}\n', "3.json:2: claim_id '4'"),
        (b'{"url": "https://a", "url2text": ["\xff"]}\n', "not UTF-8"),
    ],
)
def test_a_malformed_claim_file_is_one_line_naming_file_and_line(
    tmp_path: Path, content: str | bytes, words: str
) -> None:
    folder = tmp_path / "ks"
    folder.mkdir()
    data = content.encode() if isinstance(content, str) else content
    (folder / "3.json").write_bytes(data)
    with pytest.raises(EvidenceError) as caught:
        load_knowledge_store(folder)
    message = str(caught.value)
    assert words in message and "\n" not in message


def test_no_store_and_a_pipe_are_refused_in_one_line(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("nothing")
    with pytest.raises(EvidenceError, match="holds no <claim_id>.json"):
        load_knowledge_store(empty)
    with pytest.raises(EvidenceError, match="not a knowledge-store folder"):
        load_knowledge_store(tmp_path / "missing")
    piped = tmp_path / "piped"
    piped.mkdir()
    os.mkfifo(piped / "0.json")  # never opened: a reader would wait for a writer forever
    assert not store.looks_like_store(piped)
    with pytest.raises(EvidenceError, match="holds no <claim_id>.json"):
        load_knowledge_store(piped)


def test_a_store_in_exact_scope_is_refused_before_any_item(tmp_path: Path, scripted: Any) -> None:
    data = write_dev(tmp_path / "data")
    name, _ = scripted([], default="unused")
    with pytest.raises(EvidenceError, match="claim scope"):
        run_bench(
            "debate-cv",
            "averitec",
            tmp_path / "run",
            data_dir=data,
            limit=None,
            seed=0,
            concurrency=1,
            context={"model": name, "evidence_from": str(write_store(tmp_path / "ks"))},
        )
    assert not (tmp_path / "run" / "results.jsonl").exists()


def check_pool_only(out: Path, pools: Snapshot, tools: set[str]) -> None:
    """Every call of the run was answered from the store, from its own claim's pages only."""
    log = open_snapshot(out)
    assert log.calls and {c.origin for c in log.calls} == {"snapshot"}
    assert {c.tool for c in log.calls} == tools
    pool = {c.item: set(c.docs) for c in pools.calls}
    for call in log.calls:
        assert call.docs and set(call.docs) <= pool[call.item], call
        assert {page(log.documents[h].url) for h in call.docs} <= urls_of(call.item)


@pytest.mark.usefixtures("data_home")
def test_debate_cv_reads_each_claims_pages_and_not_the_gold_answers(
    tmp_path: Path, scripted: Any
) -> None:
    data = write_dev(tmp_path / "data")
    ks = write_store(tmp_path / "ks")
    name, model = scripted(rules(decision(False, "SUPPORTS")))
    metrics = run_bench(
        "debate-cv",
        "averitec",
        tmp_path / "run",
        data_dir=data,
        limit=None,
        seed=0,
        concurrency=1,
        context={
            "model": name,
            "evidence_from": str(ks),
            "evidence_scope": "claim",
            "evidence_tool": "search",
        },
        pages=False,
    )
    assert metrics["n"] == 2 and metrics["failed"] == 0
    check_pool_only(tmp_path / "run", open_snapshot(ks), {"search"})
    debater = [p for p in model.prompts if "Your side" in p]
    assert debater and not any("GOLD ANSWER" in p for p in model.prompts)
    assert any("opened in March 1889" in p for p in debater)
    assert any("Huascaran" in p for p in debater)
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["evidence"]["scope"] == "claim"


@pytest.mark.usefixtures("data_home")
def test_tool_mad_reads_each_claims_pages_for_both_tools(tmp_path: Path, scripted: Any) -> None:
    data = write_dev(tmp_path / "data")
    ks = write_store(tmp_path / "ks")
    name, model = scripted(
        [
            *ragas_rules(faithful=True, relevant_question=CLAIMS[0][0]),
            ("inside square brackets", "[tallest mountain in Peru]"),
            ("Decide whether the claim holds", "The pages settle it.\n**REFUTES**"),
        ]
    )
    metrics = run_bench(
        "tool-mad",
        "averitec",
        tmp_path / "run",
        data_dir=data,
        limit=None,
        seed=0,
        concurrency=1,
        context={
            "model": name,
            "max_rounds": 1,
            "evidence_from": str(ks),
            "evidence_scope": "claim",
        },
        pages=False,
    )
    assert metrics["n"] == 2 and metrics["failed"] == 0
    check_pool_only(tmp_path / "run", open_snapshot(ks), {"rag", "search"})
    assert not any("GOLD ANSWER" in p for p in model.prompts)
