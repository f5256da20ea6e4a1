"""`bench --estimate` follows the items' lengths: longer claims or documents, more input tokens."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from factdebate.bench.judging.estimate import MEASURED, estimate_run
from factdebate.bench.judging.item_lengths import item_lengths, run_items, with_lengths
from factdebate.cli import app
from factdebate.datasets import ClaimItem, QAItem
from factdebate.tools.core.records import Evidence

runner = CliRunner()


def fever_shaped(root: Path, claim: str, document: str, n: int = 6) -> Path:
    """A fever-mini-shaped datasets root: ``n`` claims, each with one gold document."""
    folder = root / "fever" / "fever_rag_mini"
    folder.mkdir(parents=True)
    corpus = [{"doc_id": "d1", "text": document, "page": "Paris"}]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in corpus))
    claims = [
        {"id": i, "claim": f"{claim} ({i})", "label": "SUPPORTS", "gold_doc_ids": ["d1"]}
        for i in range(n)
    ]
    (folder / "claims.jsonl").write_text("".join(json.dumps(c) + "\n" for c in claims))
    return root


@pytest.fixture
def short_and_long(tmp_path: Path) -> tuple[Path, Path]:
    short = fever_shaped(tmp_path / "short", "Paris is in France.", "Paris is in France.")
    long = fever_shaped(
        tmp_path / "long",
        "Paris, the capital of France, " + "which lies on the Seine, " * 20 + "is in France.",
        "Paris is the capital of France. " * 200,
    )
    return short, long


def estimated(method: str, data: Path, limit: int | None = None) -> dict[str, Any]:
    return estimate_run(method, "fever-mini", limit, {}, {}, data_dir=data)


@pytest.mark.parametrize("method", ["cot", "rag-cot", "mad", "tool-mad"])
def test_longer_items_give_more_input_tokens(
    method: str, short_and_long: tuple[Path, Path], data_home: Path
) -> None:
    short, long = (estimated(method, d) for d in short_and_long)
    assert short["items"] == long["items"] == 6
    assert long["per_item"]["input_tokens"] > short["per_item"]["input_tokens"]
    assert long["per_item"]["llm_calls"] == short["per_item"]["llm_calls"]  # calls stay
    assert long["per_item"]["output_tokens"] == short["per_item"]["output_tokens"]
    assert "Input tokens follow the 6 item(s) of fever-mini this run takes" in long["lengths"]


def test_documents_count_only_for_a_method_that_reads_them(
    short_and_long: tuple[Path, Path], data_home: Path
) -> None:
    short, long = short_and_long
    cot = (
        estimated("cot", long)["per_item"]["input_tokens"]
        - estimated("cot", short)["per_item"]["input_tokens"]
    )
    rag = (
        estimated("rag-cot", long)["per_item"]["input_tokens"]
        - estimated("rag-cot", short)["per_item"]["input_tokens"]
    )
    assert rag > cot + 1000  # one call quoting 200 sentences more of its document
    assert "of documents" in estimated("rag-cot", long)["lengths"]
    assert "of documents" not in estimated("cot", long)["lengths"]


def test_a_per_call_delta_moves_every_role_by_its_calls_and_never_below_zero() -> None:
    per_role = {
        "debater": {"llm_calls": 2.0, "input_tokens": 100.0, "output_tokens": 10.0},
        "judge": {"llm_calls": 1.0, "input_tokens": 5.0, "output_tokens": 1.0},
        "total": {"llm_calls": 3.0, "input_tokens": 105.0, "output_tokens": 11.0},
    }
    lengths = item_lengths([ClaimItem("1", "x" * 80, "SUPPORTS")])  # 20 tokens
    moved, delta = with_lengths(per_role, {"text": 30.0, "documents": None}, lengths, False)
    assert delta == -10.0
    assert moved["debater"]["input_tokens"] == 80.0 and moved["judge"]["input_tokens"] == 0.0
    assert moved["total"] == {"llm_calls": 3.0, "input_tokens": 80.0, "output_tokens": 11.0}
    same, none = with_lengths(per_role, None, lengths, False)  # no reference: as measured
    assert none is None and same == per_role


def test_questions_and_their_documents_are_counted() -> None:
    doc = Evidence(id="a", title="T" * 8, text="t" * 40, source="given", score=0.0)
    item = QAItem("1", "q" * 12, [doc, doc], ["correct", "noise"], ["x"], [])
    lengths = item_lengths([item])
    assert (lengths.items, lengths.text, lengths.documents) == (1, 3.0, 24.0)  # 2 x (2 + 10)
    assert item_lengths([ClaimItem("1", "c", "SUPPORTS")]).documents is None


def test_an_unreadable_dataset_with_a_limit_is_estimated_as_measured(tmp_path: Path) -> None:
    count, lengths, why = run_items("fever-mini", tmp_path / "nowhere", 5)
    assert (count, lengths) == (5, None) and why
    est = estimated("cot", tmp_path / "nowhere", limit=5)
    assert est["lengths"].startswith("Input tokens as measured: the items' lengths were not read")


def test_the_sample_counted_is_the_one_the_run_takes(short_and_long: tuple[Path, Path]) -> None:
    short, _ = short_and_long
    count, lengths, _ = run_items("fever-mini", short, 4, seed=3)
    assert count == 4 and lengths is not None and lengths.items == 4


def test_every_measured_method_records_its_items_lengths() -> None:
    methods = json.loads(MEASURED.read_text())["methods"]
    for name, entry in methods.items():
        assert entry["item_tokens"]["text"] > 0, name
    assert methods["debate-cv"]["item_tokens"]["documents"] > 0  # AVeriTeC's gold evidence
    assert methods["tool-mad"]["item_tokens"]["documents"] is None  # it retrieves


def test_the_estimate_says_what_its_input_tokens_follow(
    short_and_long: tuple[Path, Path], data_home: Path
) -> None:
    _, long = short_and_long
    result = runner.invoke(
        app,
        ["bench", "--estimate", "--method", "rag-cot", "--dataset", "fever-mini",
         "--data-dir", str(long)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "Means from its graph's structure" in result.output
    assert "Input tokens follow the 6 item(s) of fever-mini this run takes" in result.output
    assert "tokens a call" in result.output


def test_documents_the_means_items_lacked_stay_as_measured(
    short_and_long: tuple[Path, Path], data_home: Path
) -> None:
    short, long = (estimated("self-consistency", d) for d in short_and_long)
    assert "documents as measured (the means' items shipped none)" in long["lengths"]
    gap = long["per_item"]["input_tokens"] - short["per_item"]["input_tokens"]
    assert 0 < gap < 1000  # the claims' extra length only, the documents' left out
