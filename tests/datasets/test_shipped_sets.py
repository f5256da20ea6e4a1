"""Loaders of the shipped datasets on the real shared files, and malformed or missing files."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from factdebate import datasets as ds
from factdebate.datasets import (
    CONFLICTING,
    NOT_ENOUGH_INFO,
    REFUTES,
    SUPPORTS,
    DatasetError,
)
from tests.conftest import REPO

DATA = Path(os.environ.get("FACTDEBATE_DATASETS", REPO.parent / "shared" / "datasets"))


def folder(name: str) -> Path:
    """Return a dataset folder, skipping the test when it is absent."""
    path = DATA / name
    if not path.is_dir():
        pytest.skip(f"benchmark data {name!r} not found at {path} (set FACTDEBATE_DATASETS)")
    return path


# --------------------------------------------------------------------------- real files


def test_scifact_dev() -> None:
    data = ds.load_scifact(folder("scifact"))
    assert (data.name, len(data.items), data.issues) == ("scifact", 300, [])
    assert Counter(i.label for i in data.items) == {
        SUPPORTS: 124,
        REFUTES: 64,
        NOT_ENOUGH_INFO: 112,
    }
    with_gold = [i for i in data.items if i.meta["gold_doc_ids"]]
    assert len(with_gold) == 188  # NEI claims cite abstracts but have no rationale
    assert all(i.label == NOT_ENOUGH_INFO for i in data.items if not i.meta["gold_doc_ids"])
    for item in data.items:
        assert (
            {e["id"] for e in item.evidence}
            == set(item.meta["cited_doc_ids"])
            >= set(item.meta["gold_doc_ids"])
        )
    first = data.items[1]  # id 3 from SOURCE.md: doc 14717500, rationale sentences 2, 5, 7
    assert (first.id, first.meta["rationales"]) == ("3", {"14717500": [2, 5, 7]})
    assert first.evidence[0]["source"] == "given" and first.evidence[0]["title"]


def test_scifact_train_corpus_and_splits() -> None:
    path = folder("scifact")
    assert len(ds.load_scifact(path, split="train").items) == 809
    with pytest.raises(DatasetError, match="unlabelled"):
        ds.load_scifact(path, split="test")
    corpus = ds.load_scifact_corpus(path)
    subset = ds.load_scifact_corpus(path, subset=True)
    assert (len(corpus), len(subset)) == (5183, 783)
    doc = next(d for d in corpus if d["id"] == "4983")
    assert doc["title"].startswith("Microstructural development") and doc["text"].startswith(
        "Alterations of"
    )
    gold = {d for i in ds.load_scifact(path).items for d in i.meta["cited_doc_ids"]}
    assert gold <= {d["id"] for d in subset}


def test_fever_mini() -> None:
    path = folder("fever/fever_rag_mini")
    data = ds.load_fever_mini(path)
    assert (len(data.items), data.issues) == (535, [])
    assert Counter(i.label for i in data.items) == {
        SUPPORTS: 147,
        REFUTES: 208,
        NOT_ENOUGH_INFO: 180,
    }
    corpus_ids = {d["id"] for d in ds.load_fever_mini_corpus(path)}
    assert len(corpus_ids) == 293
    for item in data.items:
        assert len(item.meta["gold_doc_ids"]) == (0 if item.label == NOT_ENOUGH_INFO else 1)
        assert [e["id"] for e in item.evidence] == item.meta["gold_doc_ids"]
        assert set(item.meta["gold_doc_ids"]) <= corpus_ids
    assert data.items[0].evidence[0]["title"] == "Simón Bolívar"


def test_averitec() -> None:
    data = ds.load_averitec(folder("averitec"))
    assert (len(data.items), data.issues) == (500, [])
    assert Counter(i.label for i in data.items) == {
        REFUTES: 305,
        SUPPORTS: 122,
        CONFLICTING: 38,
        NOT_ENOUGH_INFO: 35,
    }
    assert all(i.evidence for i in data.items)  # every claim has >= 1 QA pair
    first = data.items[0]
    assert first.id == "0" and first.meta["raw_label"] == "Refuted"
    assert first.evidence[0]["id"] == "0-qa0"
    assert first.evidence[0]["title"] == "Where was the claim first published"
    assert first.evidence[0]["text"] == (
        "Q: Where was the claim first published A: It was first published on Sccopertino"
    )


def test_ramdocs() -> None:
    data = ds.load_ramdocs(folder("ramdocs"))
    assert (len(data.items), data.issues) == (500, [])
    assert Counter(t for i in data.items for t in i.doc_types) == {
        "correct": 1918,
        "noise": 541,
        "misinfo": 307,
    }
    assert all(len(i.doc_types) == len(i.documents) and i.gold_answers for i in data.items)
    first = data.items[0]
    assert first.question == "What is the population of Broken Bow?"
    assert (first.gold_answers, first.wrong_answers) == (["3,559 people"], ["10,000 people"])
    assert first.documents[0]["id"] == "0-doc0"


def test_factool_qa() -> None:
    data = ds.load_factool_qa(folder("factool"))
    assert (len(data.items), data.issues) == (233, [])
    assert Counter(i.label for i in data.items) == {True: 177, False: 56}
    item = data.items[1]
    assert (item.claim, item.label) == ("The United States has 94 operating reactors", False)
    assert item.meta["question"].startswith("Which country or city") and item.evidence == []


def test_factcheck_bench() -> None:
    data = ds.load_factcheck_bench(folder("factcheck_bench"))
    assert (len(data.items), data.issues) == (631, [])  # 661 minus 30 not_enough_evidence
    assert data.notes == ["left out 30 claims labelled not_enough_evidence"]
    assert Counter(i.label for i in data.items) == {True: 472, False: 159}
    assert all(
        i.evidence and len(i.evidence) == len(i.meta["evidence_stances"]) for i in data.items
    )
    assert all(i.meta["question"] and i.meta["response"] for i in data.items)
    first = data.items[0]
    assert first.label is False and first.meta["question"].startswith("Who was the oldest justice")


def test_pubmedqa() -> None:
    path = folder("pubmedqa")
    data = ds.load_pubmedqa(path)
    assert (len(data.items), data.issues) == (1000, [])
    assert Counter(i.meta["answer"] for i in data.items) == {"yes": 552, "no": 338, "maybe": 110}
    assert all(i.label == ds.PUBMEDQA_LABELS[i.meta["answer"]] for i in data.items)
    test = ds.load_pubmedqa(path, split="test")
    assert Counter(i.meta["answer"] for i in test.items) == {"yes": 276, "no": 169, "maybe": 55}
    first = data.items[0]
    assert first.id == "21645374" and first.evidence[0]["id"] == "21645374-c0"
    assert first.evidence[0]["title"] == "BACKGROUND"


def test_load_corpus_default_location() -> None:
    folder("fever/fever_rag_mini")
    assert len(ds.load_corpus("fever-mini", None)) == 293


# --------------------------------------------------------------------------- malformed input


def test_malformed_lines_are_reported_and_rest_loads(tmp_path: Path) -> None:
    src = folder("scifact")
    good = (src / "claims_dev.jsonl").read_text(encoding="utf-8").splitlines()[:3]
    missing_claim = json.dumps({k: v for k, v in json.loads(good[1]).items() if k != "claim"})
    bad_label = json.dumps({**json.loads(good[2]), "label": "MAYBE"})
    lines = [good[0], good[1], '{"id": 99, "claim": ', missing_claim, bad_label, good[2]]
    (tmp_path / "claims_dev.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    cited = {d for line in good for d in json.loads(line)["cited_doc_ids"]}
    with (src / "corpus.jsonl").open(encoding="utf-8") as corpus:
        docs = [line for line in corpus if json.loads(line)["doc_id"] in cited]
    (tmp_path / "corpus.jsonl").write_text("".join(docs), encoding="utf-8")

    data = ds.load_scifact(tmp_path)
    assert [i.id for i in data.items] == ["1", "3", "5"]
    assert [(Path(i.path).name, i.line) for i in data.issues] == [
        ("claims_dev.jsonl", 3),
        ("claims_dev.jsonl", 4),
        ("claims_dev.jsonl", 5),
    ]
    assert "invalid JSON" in data.issues[0].message
    assert "'claim'" in data.issues[1].message
    assert "MAYBE" in data.issues[2].message
    assert str(data.issues[0]).startswith(f"{tmp_path / 'claims_dev.jsonl'}:3: ")


def test_malformed_json_record(tmp_path: Path) -> None:
    records = json.loads((folder("averitec") / "dev.json").read_text(encoding="utf-8"))[:3]
    del records[1]["questions"]
    (tmp_path / "dev.json").write_text(json.dumps(records), encoding="utf-8")
    data = ds.load_averitec(tmp_path)
    assert [i.id for i in data.items] == ["0", "2"]
    assert (
        len(data.issues) == 1
        and "record 1" in str(data.issues[0])
        and "questions" in str(data.issues[0])
    )


def test_missing_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="not found.*RAMDocs_test.jsonl"):
        ds.load_ramdocs(tmp_path)
    (tmp_path / "RAMDocs_test.jsonl").write_text("\n  \n", encoding="utf-8")
    with pytest.raises(DatasetError, match="empty.*RAMDocs_test.jsonl"):
        ds.load_ramdocs(tmp_path)
