"""Official releases: each loader on tiny fixtures in the release's format, then on a bench."""

from __future__ import annotations

import json
import os
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from factdebate import datasets as ds
from factdebate.bench import load_items, read_results, run_bench
from factdebate.datasets import NOT_ENOUGH_INFO, REFUTES, SUPPORTS, DatasetError
from tests.conftest import REPO

SHARED = Path(os.environ.get("FACTDEBATE_DATASETS", REPO.parent / "shared" / "datasets"))


def jsonl(path: Path, records: list[Any], bad_line: str | None = None) -> Path:
    """Write records one per line; ``bad_line`` is appended as a raw (malformed) line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(r) for r in records] + ([bad_line] if bad_line is not None else [])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- fixtures


def feverous(root: Path, with_db: bool) -> Path:
    folder = root / "feverous"
    header = {"id": "", "label": "", "claim": "", "evidence": []}
    claims = [
        {
            "id": 7,
            "label": "SUPPORTS",
            "claim": "Ada Lovelace wrote the first program in 1843.",
            "evidence": [
                {"content": ["Ada Lovelace_sentence_0", "Ada Lovelace_cell_0_1_1"], "context": {}},
                {"content": ["Ada Lovelace_item_0_0"], "context": {}},
            ],
            "challenge": "Combining Tables and Text",
        },
        {
            "id": 8,
            "label": "REFUTES",
            "claim": "Ada Lovelace was born in Paris.",
            "evidence": [{"content": ["Ada Lovelace_header_cell_0_0_0", "Nowhere_sentence_1"]}],
        },
        {
            "id": 9,
            "label": "NOT ENOUGH INFO",
            "claim": "Ada Lovelace liked tea.",
            "evidence": [{"content": []}],
        },
        {"id": 10, "label": "MOSTLY TRUE", "claim": "A bad label.", "evidence": []},
        {"id": 11, "label": "SUPPORTS", "claim": "More.", "evidence": []},
        {"id": 12, "label": "REFUTES", "claim": "Even more.", "evidence": []},
    ]
    jsonl(folder / "feverous_dev_challenges.jsonl", [header, *claims])
    if with_db:
        page = {
            "title": "Ada Lovelace",
            "order": ["sentence_0", "table_0", "list_0"],
            "sentence_0": "Ada wrote the first [[Computer program|program]] in 1843.",
            "table_0": {
                "table": [
                    [{"id": "header_cell_0_0_0", "value": "Born", "is_header": True}],
                    [{"id": "cell_0_1_0", "value": "x"}, {"id": "cell_0_1_1", "value": "London"}],
                ]
            },
            "list_0": {"list": [{"id": "item_0_0", "value": "Analytical Engine notes"}]},
        }
        db = sqlite3.connect(folder / "feverous_wikiv1.db")
        db.execute("CREATE TABLE wiki (id TEXT PRIMARY KEY, data TEXT)")
        db.execute("INSERT INTO wiki VALUES (?, ?)", ("Ada Lovelace", json.dumps(page)))
        db.commit()
        db.close()
    return root


def faviq(root: Path) -> Path:
    for subset in ("a", "r"):
        records = [
            {
                "id": f"{subset}{i}",
                "claim": f"Claim {i} of set {subset}.",
                "label": "SUPPORTS" if i % 2 else "REFUTES",
                "positive_evidence": (
                    {"id": "N/A", "title": "", "text": ""}
                    if i == 0
                    else {"id": f"p{i}", "title": f"Page {i}", "text": f"Passage {i}."}
                ),
                "negative_evidence": {"id": f"n{i}", "title": "Other", "text": "Other text."},
            }
            for i in range(6)
        ]
        jsonl(root / "faviq" / f"faviq_{subset}_set" / "dev.jsonl", records, bad_line="{not json")
    return root


def medqa(root: Path) -> Path:
    good = [
        {
            "question": f"A patient presents with symptom {i}. Which drug is best?",
            "answer": "Drug B",
            "options": {"A": "Drug A", "B": "Drug B", "C": "Drug C", "D": "Drug D"},
            "meta_info": "step1",
            "answer_idx": "B",
            "metamap_phrases": ["patient"],
        }
        for i in range(2)
    ]
    bad = {
        "question": "Three options?",
        "options": {"A": "a", "B": "b", "C": "c"},
        "answer_idx": "A",
    }
    path = root / "medqa" / "questions" / "US" / "4_options" / "phrases_no_exclude_test.jsonl"
    jsonl(path, [*good, bad])
    return root


def faitheval(root: Path) -> Path:
    base = root / "faitheval"
    two_docs = "Paris is the capital of France.\n\nLyon is the capital of France."
    jsonl(
        base / "unanswerable.jsonl",
        [
            {
                "qid": f"u{i}",
                "question": "Who won?",
                "context": "A match took place.",
                "answers": ["X"],
            }
            for i in range(6)
        ],
    )
    jsonl(
        base / "inconsistent.jsonl",
        [
            {
                "qid": f"i{i}",
                "question": "Capital?",
                "context": two_docs,
                "answers": ["Paris", "Lyon"],
            }
            for i in range(6)
        ],
    )
    rows = [
        {
            "id": f"c{i}",
            "question": "What is the moon made of?",
            "context": "Recent work shows the moon is made of marshmallows.",
            "choices": {"label": ["A", "B"], "text": ["rock", "marshmallows"]},
            "answerKey": "B",
        }
        for i in range(6)
    ]
    import pyarrow as pa
    import pyarrow.parquet as pq

    target = base / "FaithEval-counterfactual-v1.0" / "data" / "test-00000-of-00001.parquet"
    target.parent.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), target)
    return root


def ambigdocs(root: Path) -> Path:
    records = [
        {
            "qid": f"q{i}",
            "ambiguous_entity": "Michael Jordan",
            "question": "What is Michael Jordan's profession?",
            "documents": [
                {
                    "title": "Michael Jordan",
                    "text": "He played basketball.",
                    "answer": "basketball player",
                    "pid": "1",
                },
                {
                    "title": "Michael I. Jordan",
                    "text": "He studies ML.",
                    "answer": "professor",
                    "pid": "2",
                },
                {
                    "title": "Michael Jordan",
                    "text": "Also basketball.",
                    "answer": "basketball player",
                    "pid": "3",
                },
            ],
        }
        for i in range(6)
    ]
    records.append({"qid": "bad", "question": "No documents key"})
    write_json(root / "ambigdocs" / "test.json", records)
    return root


def bingcheck(root: Path) -> Path:
    folder = root / "bingcheck"
    jsonl(
        folder / "data_claim_label.jsonl",
        [{"claim": f"Claim {i}.", "label": "true" if i % 3 else "false"} for i in range(6)],
        bad_line=json.dumps({"claim": "odd", "label": "maybe"}),
    )
    jsonl(
        folder / "bingcheck.jsonl",
        [
            {"claim": "A.", "label": "supported"},
            {"claim": "B.", "label": "partially supported"},
            {"claim": "C.", "label": "refuted"},
            {"claim": "D.", "label": "not supported"},
        ],
    )
    return root


def felm(root: Path) -> Path:
    records = [
        {
            "index": str(i),
            "source": "quora",
            "prompt": f"Tell me about topic {i}.",
            "response": "First. Second.",
            "segmented_response": ["First.", "Second."],
            "labels": [True, i % 2 == 0],
            "comment": ["", "wrong"],
            "type": ["", "knowledge_error"],
            "ref": ["https://example.org/a", "The reference says the second part is false."],
            "domain": "wk",
        }
        for i in range(3)
    ]
    records.append({**records[0], "index": "90", "domain": "math"})
    records.append({**records[0], "index": "91", "labels": [True]})
    jsonl(root / "felm" / "all.jsonl", records)
    return root


def hover(root: Path, with_db: bool) -> Path:
    folder = root / "hover"
    records = [
        {
            "uid": f"h{i}",
            "claim": f"Multi-hop claim {i} about Skagen Painters.",
            "supporting_facts": [["Skagen Painters", 0], ["Peder Severin Krøyer", 1]],
            "label": "SUPPORTED" if i % 2 else "NOT_SUPPORTED",
            "num_hops": 2,
            "hpqa_id": "x",
        }
        for i in range(6)
    ]
    records.append({"uid": "bad", "claim": "x", "supporting_facts": [], "label": "MAYBE"})
    write_json(folder / "hover_dev_release_v1.1.json", records)
    if with_db:
        db = sqlite3.connect(folder / "wiki_wo_links.db")
        db.execute("CREATE TABLE documents (id TEXT PRIMARY KEY, text TEXT)")
        db.execute(
            "INSERT INTO documents VALUES (?, ?)", ("Skagen Painters", "A group of artists.")
        )
        db.commit()
        db.close()
    return root


# --------------------------------------------------------------------------- loaders


def test_feverous_with_database(tmp_path: Path) -> None:
    data = ds.load_feverous(feverous(tmp_path, with_db=True) / "feverous")
    items = {i.id: i for i in data.items}
    assert sorted(items) == ["11", "12", "7", "8", "9"]  # header record skipped, bad label out
    assert [i.label for i in data.items][:3] == [SUPPORTS, REFUTES, NOT_ENOUGH_INFO]
    first = items["7"]
    assert [(e["id"], e["text"]) for e in first.evidence] == [
        ("Ada Lovelace_sentence_0", "Ada wrote the first program in 1843."),
        ("Ada Lovelace_cell_0_1_1", "London"),
    ]
    assert first.meta["evidence_sets"][1] == ["Ada Lovelace_item_0_0"]
    assert [e["text"] for e in items["8"].evidence] == ["Born"]
    file = tmp_path / "feverous" / "feverous_dev_challenges.jsonl"
    assert [str(i) for i in data.issues] == [
        f"{file}:3: evidence 'Nowhere_sentence_1' not found",
        f"{file}:5: unknown label 'MOSTLY TRUE'",
    ]
    assert data.notes == []


def test_feverous_without_database_is_claim_only(tmp_path: Path) -> None:
    data = ds.load_feverous(feverous(tmp_path, with_db=False) / "feverous")
    assert len(data.items) == 5 and all(i.evidence == [] for i in data.items)
    assert "claim-only" in data.notes[0]


def test_faviq_sets_and_bad_line(tmp_path: Path) -> None:
    root = faviq(tmp_path)
    a, r = ds.DATASETS["faviq-a"].load(root / "faviq"), ds.DATASETS["faviq-r"].load(root / "faviq")
    assert (a.name, r.name) == ("faviq-a", "faviq-r")
    assert [i.id for i in a.items] == [f"a{i}" for i in range(6)]
    assert a.items[0].evidence == [] and a.items[1].evidence[0]["text"] == "Passage 1."
    assert Counter(i.label for i in r.items) == {SUPPORTS: 3, REFUTES: 3}
    assert str(a.issues[0]).endswith(
        "faviq_a_set/dev.jsonl:7: invalid JSON: "
        "Expecting property name enclosed in double quotes at column 2"
    )
    with pytest.raises(DatasetError, match="subset must be 'a' or 'r'"):
        ds.load_faviq(root / "faviq", subset="x")


def test_medqa_claim_per_option(tmp_path: Path) -> None:
    data = ds.load_medqa(medqa(tmp_path) / "medqa")
    assert len(data.items) == 8
    first = data.items[:4]
    assert [i.id for i in first] == ["0-A", "0-B", "0-C", "0-D"]
    assert [i.label for i in first] == [REFUTES, SUPPORTS, REFUTES, REFUTES]
    assert first[1].claim.endswith("Proposed answer: Drug B") and "symptom 0" in first[1].claim
    assert first[1].meta["question_id"] == "0" and first[1].meta["answer_idx"] == "B"
    assert len(data.issues) == 1 and ":3: options must map exactly A, B, C and D" in str(
        data.issues[0]
    )


def test_faitheval_three_tasks(tmp_path: Path) -> None:
    root = faitheval(tmp_path) / "faitheval"
    unans = ds.load_faitheval(root, "unanswerable")
    incons = ds.load_faitheval(root, "inconsistent")
    counter = ds.load_faitheval(root, "counterfactual")  # read from the released Parquet layout
    assert unans.items[0].gold_answers == ["unknown"] and unans.items[0].id == "u0"
    assert incons.items[0].gold_answers == ["Paris", "Lyon"]
    assert [d["text"] for d in incons.items[0].documents] == [
        "Paris is the capital of France.",
        "Lyon is the capital of France.",
    ]
    assert counter.items[0].gold_answers == ["marshmallows"] and counter.items[5].id == "c5"
    assert counter.name == "faitheval-counterfactual"
    with pytest.raises(DatasetError, match="task must be one of"):
        ds.load_faitheval(root, "other")


def test_ambigdocs_answers_per_entity(tmp_path: Path) -> None:
    data = ds.load_ambigdocs(ambigdocs(tmp_path) / "ambigdocs")
    item = data.items[0]
    assert item.gold_answers == ["basketball player", "professor"] and item.wrong_answers == []
    assert [d["id"] for d in item.documents] == ["q0-1", "q0-2", "q0-3"]
    assert item.meta["ambiguous_entity"] == "Michael Jordan"
    assert [str(i) for i in data.issues] == [
        f"{tmp_path / 'ambigdocs' / 'test.json'}: record 6: missing field 'documents'"
    ]


def test_bingcheck_subsets(tmp_path: Path) -> None:
    root = bingcheck(tmp_path) / "bingcheck"
    balanced = ds.load_bingcheck(root)
    assert [i.label for i in balanced.items] == [False, True, True, False, True, True]
    assert "label must be true or false, got 'maybe'" in str(balanced.issues[0])
    assert ":7:" in str(balanced.issues[0])
    full = ds.load_bingcheck(root, "full")
    assert [(i.claim, i.label) for i in full.items] == [("A.", True), ("C.", False), ("D.", False)]
    assert full.notes == ["left out 1 claims labelled partially supported"]


def test_bingcheck_shared_copy() -> None:
    folder = SHARED / "bingcheck"
    if not folder.is_dir():
        pytest.skip(f"shared BingCheck copy not found at {folder}")
    data = ds.load_bingcheck(folder)
    assert Counter(i.label for i in data.items) == {True: 100, False: 42} and data.issues == []


def test_felm_world_knowledge_segments(tmp_path: Path) -> None:
    data = ds.load_felm(felm(tmp_path) / "felm")
    assert data.name == "felm-wk"
    assert [i.id for i in data.items] == ["0-0", "0-1", "1-0", "1-1", "2-0", "2-1"]
    assert [i.label for i in data.items] == [True, True, True, False, True, True]
    assert data.items[1].evidence[0]["text"] == "The reference says the second part is false."
    assert data.items[1].meta["ref_links"] == ["https://example.org/a"]
    assert data.items[1].meta["question"] == "Tell me about topic 0."
    assert len(data.issues) == 1 and ":5: labels must be a list as long as" in str(data.issues[0])


def test_hover_with_and_without_dump(tmp_path: Path) -> None:
    claim_only = ds.load_hover(hover(tmp_path / "a", with_db=False) / "hover")
    assert len(claim_only.items) == 6 and all(not i.evidence for i in claim_only.items)
    assert "claim-only" in claim_only.notes[0]
    assert [i.label for i in claim_only.items][:2] == [REFUTES, SUPPORTS]
    assert "record 6: unknown label 'MAYBE'" in str(claim_only.issues[0])
    with_dump = ds.load_hover(hover(tmp_path / "b", with_db=True) / "hover")
    assert [e["text"] for e in with_dump.items[0].evidence] == ["A group of artists."]
    assert with_dump.items[0].meta["supporting_facts"][1] == ("Peder Severin Krøyer", 1)
    assert any("page 'Peder Severin Krøyer' not found" in str(i) for i in with_dump.issues)


def test_longfact_prompts(tmp_path: Path) -> None:
    folder = tmp_path / "longfact" / "longfact-objects"
    jsonl(folder / "longfact-objects_moon.jsonl", [{"prompt": "Tell me about the Moon."}], "[1]")
    data = ds.load_longfact(tmp_path / "longfact")
    assert [(i.id, i.meta["topic"]) for i in data.items] == [("longfact-objects_moon-1", "moon")]
    assert ":2: expected a JSON object" in str(data.issues[0])


def test_missing_release_file_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"feverous: none of feverous_dev_challenges\.jsonl"):
        ds.load_feverous(tmp_path)
    with pytest.raises(DatasetError, match="no .jsonl/.json/.parquet file with 'inconsistent'"):
        ds.load_faitheval(tmp_path, "inconsistent")


# --------------------------------------------------------------------------- bench


BUILD = {
    "feverous": lambda root: feverous(root, with_db=True),
    "faviq-a": faviq,
    "faviq-r": faviq,
    "medqa": medqa,
    "faitheval-unanswerable": faitheval,
    "faitheval-inconsistent": faitheval,
    "faitheval-counterfactual": faitheval,
    "ambigdocs": ambigdocs,
    "bingcheck": bingcheck,
    "felm-wk": felm,
    "hover": lambda root: hover(root, with_db=True),
}


def test_every_downloaded_dataset_is_registered() -> None:
    assert set(BUILD) == set(ds.DATASETS) - {
        "scifact",
        "fever-mini",
        "averitec",
        "ramdocs",
        "factcheck-bench",
        "factool-qa",
        "pubmedqa",
    }
    assert {n for n, spec in ds.DATASETS.items() if not spec.shipped} == set(BUILD) - {"bingcheck"}


@pytest.mark.parametrize("dataset", sorted(BUILD))
def test_bench_limit_5_runs_on_scripted_models(tmp_path: Path, scripted, dataset: str) -> None:
    root = BUILD[dataset](tmp_path / "data")
    question_set = ds.DATASETS[dataset].task == ds.ANSWER_TASK
    answer = json.dumps({"answers": ["Paris", "Lyon"], "explanation": "scripted"})
    name, model = scripted(
        [("AnswerList", answer)],
        default=json.dumps({"answer": "unknown", "explanation": "doc"})
        if question_set
        else "Because.\n**SUPPORTS**",
    )
    issues: list[str] = []
    items, _ = load_items(dataset, root, 5, 0, issues)
    metrics = run_bench(
        "madam-rag" if question_set else "cot",
        dataset,
        tmp_path / "run",
        data_dir=root,
        limit=5,
        seed=0,
        concurrency=2,
        context={"model": name, "max_rounds": 1},
    )
    rows = read_results(tmp_path / "run" / "results.jsonl")
    assert metrics["n"] == 5 == len(rows) and metrics["failed"] == 0
    assert {r["id"] for r in rows} == {i.id for i in items}
    assert metrics["run"]["load_issues"] == issues
    if question_set:  # both answers are right only where the context names both cities
        assert all(r["prediction"] == ["Paris", "Lyon"] for r in rows)
        assert metrics["exact_match"] == float(dataset == "faitheval-inconsistent")
    else:
        assert all(r["prediction"] == SUPPORTS for r in rows)
        assert metrics["accuracy"] == pytest.approx(sum(i.gold == SUPPORTS for i in items) / 5)
    first = items[0].inputs.get("claim") or items[0].inputs["question"]
    assert any(first in p for p in model.prompts), "the dataset's text reaches the model"


def test_bench_takes_a_file_as_data_dir(tmp_path: Path) -> None:
    file = (
        medqa(tmp_path)
        / "medqa"
        / "questions"
        / "US"
        / "4_options"
        / "phrases_no_exclude_test.jsonl"
    )
    items, labels = load_items("medqa", file, None, 0)
    assert len(items) == 8 and labels == ds.THREE_WAY


# --------------------------------------------------------------------------- PubMed corpus


def pubmedqa(root: Path) -> Path:
    record = {
        "QUESTION": "Does metformin reduce cardiovascular events?",
        "CONTEXTS": ["Background text.", "Results text."],
        "LABELS": ["BACKGROUND", "RESULTS"],
        "MESHES": [],
        "YEAR": "2010",
        "final_decision": "yes",
        "LONG_ANSWER": "Yes, it does.",
    }
    write_json(
        root / "pubmedqa" / "ori_pqal.json", {"111": record, "222": {**record, "QUESTION": "Q2?"}}
    )
    return root


def test_pubmed_corpus_leaves_out_the_conclusion(tmp_path: Path) -> None:
    docs = ds.load_pubmedqa_corpus(pubmedqa(tmp_path) / "pubmedqa")
    assert [(d["id"], d["title"], d["source"]) for d in docs] == [
        ("pubmed-111", "Does metformin reduce cardiovascular events?", "pubmed"),
        ("pubmed-222", "Q2?", "pubmed"),
    ]
    assert docs[0]["text"] == "Background text. Results text."  # no "Yes, it does."


def test_medqa_retrieves_from_the_pubmed_index(
    tmp_path: Path, data_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from factdebate.bench.running.corpus import prepare_collection
    from factdebate.graphs.registry import load_method

    built: list[tuple[str, list[str]]] = []
    monkeypatch.setattr(
        "factdebate.tools.retrieval.index.build_index",
        lambda docs, name, uri: built.append((name, [d["id"] for d in docs])),
    )
    root = pubmedqa(medqa(tmp_path / "data"))
    _, context_cls = load_method("tool-mad")
    context = prepare_collection(
        "tool-mad", "medqa", root, {"search_backend": "openalex"}, context_cls
    )
    assert context == {"search_backend": "openalex", "collection": "pubmedqa"}
    assert built == [("pubmedqa", ["pubmed-111", "pubmed-222"])]


def test_cli_index_corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from factdebate.cli import app

    built: list[tuple[str, int, str]] = []

    def fake_build(docs: Any, name: str, uri: str, progress: Any = None, lexical: str = "") -> int:
        built.append((name, len(docs), lexical))
        return len(docs)

    monkeypatch.setattr("factdebate.tools.retrieval.index.build_index", fake_build)
    root = pubmedqa(tmp_path)
    result = CliRunner().invoke(app, ["index-corpus", "pubmedqa", "--data-dir", str(root)])
    assert result.exit_code == 0, result.output
    assert built == [("pubmedqa", 2, "")] and "into collection 'pubmedqa'" in result.output
    args = ["index-corpus", "pubmedqa", "--data-dir", str(root), "--lexical", "bm25s"]
    assert CliRunner().invoke(app, args).exit_code == 0
    assert built[-1] == ("pubmedqa", 2, "bm25s")  # the engine reaches the build
    result = CliRunner().invoke(app, ["index-corpus", "hover", "--data-dir", str(root)])
    assert result.exit_code == 2 and "hover has no retrieval corpus" in result.output
    result = CliRunner().invoke(
        app, ["index-corpus", "pubmedqa", "--data-dir", str(tmp_path / "no")]
    )
    assert result.exit_code == 2 and "dataset file not found" in result.output
