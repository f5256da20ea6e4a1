"""The dataset catalog: one complete entry per dataset, its folders, lookups and corpora."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from factdebate import datasets as ds
from factdebate.datasets import (
    ANSWER_TASK,
    LABEL_TASK,
    LABELS,
    PROMPT_TASK,
    THREE_WAY,
    DatasetError,
    DatasetSpec,
)


def test_registry_names() -> None:
    # the downloaded releases are listed in tests/datasets/test_official_releases.py
    assert set(ds.DATASETS) >= {
        "scifact",
        "fever-mini",
        "averitec",
        "ramdocs",
        "factcheck-bench",
        "factool-qa",
        "pubmedqa",
    }


FAITHEVAL = ["faitheval-unanswerable", "faitheval-inconsistent", "faitheval-counterfactual"]


def test_catalog_entries_are_complete() -> None:
    assert list(ds.DATASETS) == [
        "scifact",
        "fever-mini",
        "averitec",
        "ramdocs",
        "factcheck-bench",
        "factool-qa",
        "pubmedqa",
        "feverous",
        "faviq-a",
        "faviq-r",
        "medqa",
        *FAITHEVAL,
        "ambigdocs",
        "bingcheck",
        "felm-wk",
        "hover",
    ]
    assert list(ds.PROMPT_SETS) == ["longfact"]
    assert ds.CATALOG == {**ds.DATASETS, **ds.PROMPT_SETS}
    for name, spec in ds.CATALOG.items():
        assert spec.name == name and callable(spec.load) and spec.description.strip()
        assert spec.task in (LABEL_TASK, ANSWER_TASK, PROMPT_TASK)
        assert ds.dataset(name) is spec and ds.dataset_task(name) == spec.task
        assert bool(spec.labels) == (spec.task == LABEL_TASK)
        assert ds.label_set(name) == spec.labels
        assert spec.folder
    assert {s.task for s in ds.DATASETS.values()} == {LABEL_TASK, ANSWER_TASK}
    assert {s.task for s in ds.PROMPT_SETS.values()} == {PROMPT_TASK}
    answers = {n for n, s in ds.DATASETS.items() if s.task == ANSWER_TASK}
    assert answers == {"ramdocs", "ambigdocs", *FAITHEVAL}


def test_catalog_labels_folders_and_downloads() -> None:
    assert ds.label_set("averitec") == LABELS
    assert ds.label_set("factool-qa") == ds.label_set("hover") == THREE_WAY
    assert ds.label_set("ramdocs") == ()
    moved = {n: s.folder for n, s in ds.CATALOG.items() if s.folder != n}
    assert moved == {
        "fever-mini": "fever/fever_rag_mini",
        "factcheck-bench": "factcheck_bench",
        "factool-qa": "factool",
        "faviq-a": "faviq",
        "faviq-r": "faviq",
        **dict.fromkeys(FAITHEVAL, "faitheval"),
        "felm-wk": "felm",
    }
    downloaded = {n for n, s in ds.CATALOG.items() if not s.shipped}
    assert downloaded == {
        "feverous",
        "faviq-a",
        "faviq-r",
        "medqa",
        "ambigdocs",
        "felm-wk",
        "hover",
        *FAITHEVAL,
    }


def test_dataset_spec_defaults_and_checks() -> None:
    spec = DatasetSpec(name="x", load=ds.load_scifact, task=LABEL_TASK, description="X")
    assert (spec.folder, spec.labels, spec.corpus, spec.corpus_of, spec.shipped) == (
        "x",
        THREE_WAY,
        None,
        None,
        True,
    )
    assert (
        DatasetSpec(name="q", load=ds.load_ramdocs, task=ANSWER_TASK, description="Q").labels == ()
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.folder = "y"  # type: ignore[misc]
    with pytest.raises(ValueError, match="task must be one of"):
        DatasetSpec(name="x", load=ds.load_scifact, task="other", description="X")
    with pytest.raises(ValueError, match="only a labels dataset has labels"):
        DatasetSpec(
            name="x", load=ds.load_ramdocs, task=ANSWER_TASK, description="X", labels=LABELS
        )
    with pytest.raises(ValueError, match="not both"):
        DatasetSpec(
            name="x",
            load=ds.load_scifact,
            task=LABEL_TASK,
            description="X",
            corpus=ds.load_scifact_corpus,
            corpus_of="pubmedqa",
        )


def test_unknown_dataset_names_the_choices() -> None:
    for lookup in (ds.dataset, ds.dataset_task, ds.label_set, ds.corpus_source):
        with pytest.raises(DatasetError, match="unknown dataset 'nope'; choose one of: ") as exc:
            lookup("nope")
        assert str(exc.value).endswith(": " + ", ".join(ds.CATALOG))
    with pytest.raises(DatasetError, match="unknown dataset 'nope'"):
        ds.load_corpus("nope", None)


def test_dataset_folder(tmp_path: Path) -> None:
    assert ds.dataset_folder("scifact", None) is None
    assert ds.dataset_folder("scifact", tmp_path) == tmp_path / "scifact"
    assert ds.dataset_folder("fever-mini", tmp_path) == tmp_path / "fever" / "fever_rag_mini"
    assert ds.dataset_folder("faviq-r", tmp_path) == tmp_path / "faviq"
    assert ds.dataset_folder("elsewhere", tmp_path) == tmp_path / "elsewhere"
    file = tmp_path / "records.jsonl"
    file.write_text("{}\n", encoding="utf-8")
    assert ds.dataset_folder("medqa", file) == file


def test_loaders_default_to_the_catalog_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTDEBATE_DATASETS", str(tmp_path))
    for name, spec in ds.CATALOG.items():
        loaders = [spec.load] + ([spec.corpus] if spec.corpus else [])
        for load in loaders:
            with pytest.raises(DatasetError, match=re.escape(str(tmp_path / spec.folder))) as bare:
                load()
            with pytest.raises(DatasetError) as given:
                load(ds.dataset_folder(name, tmp_path))
            assert str(given.value) == str(bare.value), name


def test_corpus_source() -> None:
    sources = {n: ds.corpus_source(n) for n in ds.CATALOG if ds.corpus_source(n) is not None}
    assert sources == {
        "scifact": "scifact",
        "fever-mini": "fever-mini",
        "pubmedqa": "pubmedqa",
        "medqa": "pubmedqa",
    }
    assert ds.corpus_source("hover") is None and ds.corpus_source("longfact") is None
    for spec in ds.CATALOG.values():
        assert spec.corpus_of is None or ds.CATALOG[spec.corpus_of].corpus is not None


def test_load_corpus(tmp_path: Path) -> None:
    record = {
        "QUESTION": "Does aspirin thin the blood?",
        "CONTEXTS": ["Background text.", "Results text."],
        "LABELS": ["BACKGROUND", "RESULTS"],
        "final_decision": "yes",
        "LONG_ANSWER": "Yes.",
    }
    (tmp_path / "pubmedqa").mkdir()
    (tmp_path / "pubmedqa" / "ori_pqal.json").write_text(
        json.dumps({"7": record}), encoding="utf-8"
    )
    docs = ds.load_corpus("medqa", tmp_path)
    assert docs == ds.load_corpus("pubmedqa", tmp_path)
    assert [(d["id"], d["text"], d["source"]) for d in docs] == [
        ("pubmed-7", "Background text. Results text.", "pubmed")
    ]
    with pytest.raises(
        DatasetError,
        match="hover has no retrieval corpus; choose one of: scifact, fever-mini, pubmedqa, medqa$",
    ):
        ds.load_corpus("hover", tmp_path)
    with pytest.raises(DatasetError, match="dataset file not found"):
        ds.load_corpus("scifact", tmp_path)
