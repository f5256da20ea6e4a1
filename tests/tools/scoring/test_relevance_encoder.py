"""Answer relevance's encoder by name: recorded beside each score, loaded apart from retrieval's."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from factdebate.graphs.tool_mad import graph
from factdebate.nodes.tool_mad.context import ToolMADContext
from factdebate.tools.core.records import ModelConfigError
from factdebate.tools.retrieval.embeddings import DEFAULT_ENCODER, default_embeddings
from factdebate.tools.scoring import relevance_encoder as encoders
from tests.fakes import ragas_rules

CLAIM = "The Eiffel Tower is located in Paris."


class Angle(Embeddings):
    """The claim on one axis, every other text at a fixed cosine from it."""

    def __init__(self, cosine: float) -> None:
        self.other = [cosine, float(np.sqrt(1 - cosine**2))]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0] if t == CLAIM else self.other for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


@pytest.fixture
def provider_angle(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``fake:angle`` stands for provider embeddings that place every question at 0.5."""

    def load(name: str) -> Embeddings:
        assert name == "fake:angle"
        return Angle(0.5)

    monkeypatch.setattr(encoders, "_provider_embeddings", load)
    yield


async def one_round(scripted: Any) -> dict[str, Any]:
    """One Tool-MAD round on scripted answers whose relevance uses the ``fake:angle`` encoder."""
    rules = [
        *ragas_rules(relevant_question="Where is the Eiffel Tower?"),
        ("inside square brackets", "[Eiffel Tower]"),
        ("Decide whether the claim holds", "Document 1 says Paris.\n**SUPPORTS**"),
    ]
    name, _ = scripted(rules)
    context = ToolMADContext(model=name, relevance_encoder="fake:angle", max_rounds=1)
    out: dict[str, Any] = await graph.ainvoke({"claim": CLAIM}, context=context)
    return out


def test_names_are_told_apart_and_recorded_canonically() -> None:
    assert encoders.relevance_label("minilm") == DEFAULT_ENCODER
    assert encoders.relevance_label("") == DEFAULT_ENCODER
    assert encoders.is_provider_encoder("openai:text-embedding-3-small")
    assert encoders.relevance_label(" openai:text-embedding-3-small ") == (
        "openai:text-embedding-3-small"
    )
    assert not encoders.is_provider_encoder("intfloat/e5-small-v2")
    assert not encoders.is_provider_encoder("C:/models/e5")  # a path, not a provider
    with pytest.raises(ModelConfigError):
        encoders.relevance_label("x" * 600)


def test_minilm_is_the_shared_model() -> None:
    assert encoders.relevance_embeddings(DEFAULT_ENCODER) is default_embeddings()


def test_an_unknown_provider_is_one_clear_error() -> None:
    with pytest.raises(ModelConfigError, match="cannot load relevance encoder 'nosuch:model'"):
        encoders.relevance_embeddings("nosuch:model")


async def test_the_run_scores_relevance_with_the_named_encoder_and_records_it(
    scripted: Any, fake_tools: Any, provider_angle: None
) -> None:
    out = await one_round(scripted)
    turns = out["transcript"]
    assert all(t["answer_relevance"] == pytest.approx(0.5) for t in turns)
    assert {t["relevance_encoder"] for t in turns} == {"fake:angle"}
    # No profile is calibrated for it: auto falls back to the paper's 0.8, and 0.5 fails.
    assert out["stop_reason"] == "round_limit"


@pytest.mark.parametrize("drift", [3e-8, -3e-8])
async def test_a_score_is_the_same_whatever_the_encoders_last_digits(
    scripted: Any, fake_tools: Any, monkeypatch: pytest.MonkeyPatch, drift: float
) -> None:
    """Vectors a little off between processes (as MiniLM's are) record the same score."""
    monkeypatch.setattr(encoders, "_provider_embeddings", lambda name: Angle(0.5 + drift))
    out = await one_round(scripted)
    assert [t["answer_relevance"] for t in out["transcript"]] == [0.5, 0.5]
