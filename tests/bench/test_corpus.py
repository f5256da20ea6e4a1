"""Bench corpora: a dataset's corpus is indexed only for the methods that retrieve from it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.bench.test_runner import make_data


def test_dataset_corpus_is_indexed_only_for_methods_that_retrieve(
    tmp_path: Path, data_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from factdebate.bench.running.corpus import prepare_collection
    from factdebate.graphs.registry import load_method

    built: list[str] = []
    monkeypatch.setattr(
        "factdebate.tools.retrieval.index.build_index", lambda docs, name, uri: built.append(name)
    )
    data = make_data(tmp_path / "data", "SR")

    def prepared(method: str, **settings: Any) -> dict[str, Any]:
        _, context_cls = load_method(method)
        return prepare_collection(method, "fever-mini", data, settings, context_cls)

    # an ablation whose debaters have no tools takes its preset from its settings class
    assert prepared("tool-mad-vanilla-vanilla") == {}
    no_tools = {"tool_a": "none", "tool_b": "none"}
    assert prepared("tool-mad", **no_tools) == no_tools
    assert prepared("cot") == {} and built == []
    assert prepared("tool-mad", collection="mine") == {"collection": "mine"} and built == []
    assert prepared("tool-mad-rag-vanilla") == {"collection": "fever_mini"}
    assert built == ["fever_mini"]
