"""Encoders and rerankers by name: tiny models built here, indexed and used end to end, offline."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from factdebate.tools.core.records import ModelConfigError
from factdebate.tools.retrieval import embeddings
from factdebate.tools.retrieval.embeddings import (
    DEFAULT_ENCODER,
    EncoderSpec,
    known_prefixes,
    load_encoder,
    requested_encoder,
)
from tests.bounded import MODEL_GUARD_S, run_bounded
from tests.conftest import doc
from tests.nodes.tool_mad.test_graph import CLAIM, debate_rules

DOCS = [
    doc("eiffel", "The Eiffel Tower is an iron lattice tower in Paris, France.", "Eiffel Tower"),
    doc("berlin", "Berlin is the capital of Germany.", "Berlin"),
    doc("colosseum", "The Colosseum is an ancient arena in Rome, Italy.", "Colosseum"),
    doc("moon", "The Moon orbits the Earth.", "Moon"),
]
WORDS = {w.strip(".,?").lower() for d in DOCS for w in f"{d['title']} {d['text']}".split()}
WORDS |= {"where", "which", "city", "located", "has"}


def _tiny_bert(folder: Path, num_labels: int | None) -> None:
    """A randomly initialised one-layer BERT and a word-level tokenizer, saved to ``folder``."""
    import torch
    from transformers import (
        BertConfig,
        BertForSequenceClassification,
        BertModel,
        BertTokenizerFast,
    )

    torch.manual_seed(0)
    folder.mkdir(parents=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *sorted(set(WORDS))]
    (folder / "vocab.txt").write_text("\n".join(vocab), encoding="utf-8")
    tokenizer = BertTokenizerFast(vocab_file=str(folder / "vocab.txt"))
    shape: dict[str, Any] = {
        "vocab_size": len(vocab),
        "hidden_size": 16,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "intermediate_size": 32,
        "max_position_embeddings": 128,
    }
    if num_labels is None:
        BertModel(BertConfig(**shape)).save_pretrained(folder)
    else:
        model = BertForSequenceClassification(BertConfig(num_labels=num_labels, **shape))
        model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A sentence-transformers bi-encoder named like an E5 model, and a cross-encoder."""
    pytest.importorskip("sentence_transformers", reason="sentence-transformers not installed")
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer

    root = tmp_path_factory.mktemp("models")
    _tiny_bert(root / "bert", None)
    word = Transformer(str(root / "bert"))
    encoder = SentenceTransformer(modules=[word, Pooling(word.get_embedding_dimension(), "mean")])
    encoder.save(str(root / "tiny-e5-small"))
    _tiny_bert(root / "tiny-reranker", 1)
    return {"encoder": str(root / "tiny-e5-small"), "reranker": str(root / "tiny-reranker")}


def test_known_prefixes_and_names(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert known_prefixes("intfloat/e5-small-v2") == ("query: ", "passage: ")
    assert known_prefixes("intfloat/multilingual-e5-base") == ("query: ", "passage: ")
    query, passage = known_prefixes("BAAI/bge-small-en-v1.5")
    assert query.startswith("Represent this sentence") and passage == ""
    assert known_prefixes("sentence-transformers/all-mpnet-base-v2") == ("", "")
    monkeypatch.delenv(embeddings.ENCODER_ENV, raising=False)
    assert requested_encoder("") == requested_encoder("minilm") == DEFAULT_ENCODER
    monkeypatch.setenv(embeddings.ENCODER_ENV, "intfloat/e5-small-v2")
    assert requested_encoder("") == "intfloat/e5-small-v2"
    assert requested_encoder("all-MiniLM-L6-v2") == DEFAULT_ENCODER
    (tmp_path / "models" / "mine").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert requested_encoder("models/mine") == str((tmp_path / "models" / "mine").resolve())


def test_device_setting_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    monkeypatch.setenv(embeddings.DEVICE_ENV, "tpu")
    with pytest.raises(ModelConfigError, match="FACTDEBATE_EMBED_DEVICE must be one of"):
        embeddings.encoder_device()
    monkeypatch.setenv(embeddings.DEVICE_ENV, "cpu")
    assert embeddings.encoder_device() == "cpu"
    monkeypatch.setenv(embeddings.DEVICE_ENV, "auto")
    assert embeddings.encoder_device() == ("cuda" if torch.cuda.is_available() else "cpu")


def test_an_encoder_that_cannot_load_is_one_clear_error() -> None:
    with pytest.raises(ModelConfigError, match="cannot load encoder 'no-such-org/no-such-model'"):
        load_encoder("no-such-org/no-such-model")


def test_named_encoder_applies_its_prefixes(tiny_models: dict[str, str]) -> None:
    from sentence_transformers import SentenceTransformer

    loaded = load_encoder(tiny_models["encoder"])
    assert loaded.spec == EncoderSpec(tiny_models["encoder"], "query: ", "passage: ", 16)
    raw = SentenceTransformer(tiny_models["encoder"], device="cpu")
    want = raw.encode(["query: eiffel tower"], normalize_embeddings=True)[0]
    assert np.allclose(loaded.embeddings.embed_query("eiffel tower"), want, atol=1e-5)
    plain = raw.encode(["eiffel tower"], normalize_embeddings=True)[0]
    assert not np.allclose(want, plain, atol=1e-3)  # the prefix changes the vector
    want_doc = raw.encode(["passage: berlin"], normalize_embeddings=True)[0]
    assert np.allclose(loaded.embeddings.embed_documents(["berlin"])[0], want_doc, atol=1e-5)


def test_index_records_the_encoder_and_refuses_another(
    tiny_models: dict[str, str], data_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from factdebate.tools.dispatch import run_tool
    from factdebate.tools.retrieval.index import build_index
    from factdebate.tools.retrieval.manifest import IndexMismatchError
    from factdebate.tools.retrieval.manifest_store import live_manifest

    monkeypatch.setenv(embeddings.ENCODER_ENV, tiny_models["encoder"])
    build_index(DOCS, "tiny")
    manifest = live_manifest("tiny")
    assert (manifest.embedding_model, manifest.embedding_dim) == (tiny_models["encoder"], 16)
    assert (manifest.query_prefix, manifest.passage_prefix) == ("query: ", "passage: ")
    monkeypatch.delenv(embeddings.ENCODER_ENV)  # queries follow the manifest, not the env
    hits = run_tool("rag", "Where is the Eiffel Tower?", k=4, collection="tiny")
    assert sorted(h["id"] for h in hits) == sorted(d["id"] for d in DOCS)
    same = run_tool("rag", "eiffel", k=2, collection="tiny", embed_model=tiny_models["encoder"])
    assert len(same) == 2
    with pytest.raises(IndexMismatchError, match="does not match the index") as refused:
        run_tool("rag", "eiffel", k=2, collection="tiny", embed_model="minilm")
    assert "\n" not in str(refused.value) and tiny_models["encoder"] in str(refused.value)


def test_reranker_orders_candidates_by_its_scores(tiny_models: dict[str, str]) -> None:
    from sentence_transformers import CrossEncoder

    from factdebate.tools.retrieval.rerank import rerank

    query = "Which city has the Eiffel Tower?"
    ranked = rerank(tiny_models["reranker"], query, list(DOCS), 3)
    scores = CrossEncoder(tiny_models["reranker"], device="cpu").predict(
        [(query, f"{d['title']}\n{d['text']}") for d in DOCS]
    )
    want = [DOCS[i]["id"] for i in np.argsort(-scores, kind="stable")[:3]]
    assert [d["id"] for d in ranked] == want
    assert [d["score"] for d in ranked] == pytest.approx(sorted(scores, reverse=True)[:3])
    assert rerank(tiny_models["reranker"], query, [], 3) == []


def test_verify_a_claim_with_named_encoder_and_reranker(
    tiny_models: dict[str, str],
    data_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    scripted: Any,
) -> None:
    """Index with the tiny encoder, then a Tool-MAD debate whose rag tool reranks."""
    from factdebate.api import averify
    from factdebate.nodes.context import Context
    from factdebate.nodes.retrieval import retrieve_or_record
    from factdebate.tools.retrieval.index import build_index
    from factdebate.tools.retrieval.manifest import IndexUnavailableError

    monkeypatch.setenv(embeddings.ENCODER_ENV, tiny_models["encoder"])
    build_index(DOCS, "tiny")
    monkeypatch.delenv(embeddings.ENCODER_ENV)
    from factdebate.tools import dispatch

    reranked: list[str] = []

    def spy(rerank_model: str, query: str, docs: list[Any], k: int) -> list[Any]:
        reranked.append(rerank_model)
        return real(rerank_model, query, docs, k)

    real = dispatch.rerank
    monkeypatch.setattr(dispatch, "rerank", spy)
    name, model = scripted(debate_rules())
    out = asyncio.run(
        averify(
            CLAIM,
            "tool-mad",
            model=name,
            collection="tiny",
            tool_a="rag",
            tool_b="rag",
            top_k=2,
            max_rounds=1,
            stability_score=False,
            embed_model=tiny_models["encoder"],
            rerank_model=tiny_models["reranker"],
        )
    )
    assert out["verdict"] == "SUPPORTS" and out["errors"] == []
    shown = [e for t in out["transcript"] for e in t["evidence"]]
    assert shown and {e["id"] for e in shown} <= {d["id"] for d in DOCS}
    assert any(d["text"] in p for d in DOCS for p in model.prompts)  # evidence reached the model
    assert reranked and set(reranked) == {tiny_models["reranker"]}
    ctx = Context(collection="tiny", rerank_model=str(data_home / "missing-reranker"))
    with pytest.raises(IndexUnavailableError, match="cannot load rerank_model"):
        asyncio.run(retrieve_or_record(ctx, "rag", "eiffel", agent="a", round_no=1))


def test_a_gpu_gets_half_precision(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where torch sees CUDA, encoders and rerankers load onto it and are cast to float16."""
    import sentence_transformers
    import torch

    from factdebate.tools.retrieval import rerank

    made: list[tuple[str, str]] = []

    class FakeModel:
        prompts: dict[str, str] = {}
        max_seq_length = 128

        def __init__(self, name: str, device: str) -> None:
            made.append((name, device))
            self.model = self
            self.halved = False

        def half(self) -> FakeModel:
            self.halved = True
            return self

        def get_embedding_dimension(self) -> int:
            return 8

    monkeypatch.delenv(embeddings.DEVICE_ENV, raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", FakeModel)
    monkeypatch.setattr(sentence_transformers, "CrossEncoder", FakeModel)
    encoder = embeddings._load_sentence_transformer("fake/e5-gpu")
    reranker = rerank.load_reranker.__wrapped__("fake/reranker-gpu")
    assert made == [("fake/e5-gpu", "cuda"), ("fake/reranker-gpu", "cuda")]
    assert encoder.halved and reranker.halved
    monkeypatch.setenv(embeddings.DEVICE_ENV, "cpu")
    assert not embeddings._load_sentence_transformer("fake/e5-cpu").halved
    assert made[-1] == ("fake/e5-cpu", "cpu")


def test_cli_indexes_with_the_named_encoder_and_refuses_another_before_debating(
    tiny_models: dict[str, str], data_home: Path, tmp_path: Path
) -> None:
    """``FACTDEBATE_EMBED_MODEL`` picks the encoder of ``factdebate index``; ``verify`` with
    another ``embed_model`` stops with one line before any model call."""
    import json
    import os
    import sys

    corpus = tmp_path / "docs.jsonl"
    corpus.write_text("\n".join(json.dumps(d) for d in DOCS), encoding="utf-8")
    env = {**os.environ, "FACTDEBATE_HOME": str(data_home)}
    cli = [sys.executable, "-c", "from factdebate.cli import main; main()"]
    built = run_bounded(
        [*cli, "index", str(corpus), "--collection", "tiny"],
        env={**env, embeddings.ENCODER_ENV: tiny_models["encoder"]},
        capture_output=True,
        text=True,
        what="the encoder child",
        guard_s=MODEL_GUARD_S,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    manifest = json.loads((data_home / "manifests" / "tiny.json").read_text("utf-8"))
    assert manifest["embedding_model"] == tiny_models["encoder"]
    refused = run_bounded(
        [
            *cli,
            "verify",
            CLAIM,
            "--model",
            "openai-compatible:never-called@http://127.0.0.1:9/v1",
            "--set",
            "collection=tiny",
            "--set",
            "embed_model=minilm",
        ],
        env=env,
        capture_output=True,
        text=True,
        what="the encoder child",
        guard_s=MODEL_GUARD_S,
    )
    assert refused.returncode == 2, refused.stdout[-2000:] + refused.stderr[-2000:]
    lines = [line for line in refused.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "does not match the index" in lines[0], refused.stderr
