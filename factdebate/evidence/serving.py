"""Frozen evidence served: a call answered from a snapshot, by the exact call or the item's pool."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from factdebate.evidence.format import (
    SCOPES,
    CallRecord,
    Document,
    EvidenceError,
    Snapshot,
    dataset_of,
)
from factdebate.evidence.recording import EvidenceLog
from factdebate.tools.core.evidence_hook import (
    EvidenceCall,
    EvidenceMissError,
    LiveAnswer,
    normalise_query,
)
from factdebate.tools.core.json_text import parse_json
from factdebate.tools.core.records import Evidence

MISSES = ("stop", "live")


def _key(tool: str, backend: str, query: str, k: int) -> tuple[str, str, str, int]:
    return tool, backend, normalise_query(query), k


def rank_bm25(query: str, docs: list[Document]) -> list[tuple[Document, float]]:
    """``docs`` ranked for ``query`` by BM25 over the project's one analyzer (ties keep order)."""
    import bm25s

    from factdebate.tools.retrieval.lexical import tokenize

    if not docs:
        return []
    tokens = tokenize([f"{d.title} {d.text}" for d in docs])
    if not any(tokens):
        return [(d, 0.0) for d in docs]
    model = bm25s.BM25()
    model.index(tokens, show_progress=False)
    wanted = [t for t in tokenize([query])[0] if any(t in doc for doc in tokens)]
    scores = [float(s) for s in model.get_scores(wanted)] if wanted else [0.0] * len(docs)
    order = sorted(range(len(docs)), key=lambda i: (-scores[i], i))
    return [(docs[i], scores[i]) for i in order]


def rank_dense(query: str, docs: list[Document], encoder: str = "") -> list[tuple[Document, float]]:
    """``docs`` ranked for ``query`` by cosine similarity under the dense encoder ``encoder``."""
    from factdebate.tools.retrieval.embeddings import load_encoder

    if not docs:
        return []
    embeddings = load_encoder(encoder).embeddings
    q = embeddings.embed_query(query)
    vectors = embeddings.embed_documents([d.text for d in docs])

    def cosine(v: list[float]) -> float:
        num = sum(a * b for a, b in zip(q, v, strict=True))
        den = (sum(a * a for a in q) ** 0.5) * (sum(b * b for b in v) ** 0.5)
        return num / den if den else 0.0

    scores = [cosine(v) for v in vectors]
    order = sorted(range(len(docs)), key=lambda i: (-scores[i], i))
    return [(docs[i], scores[i]) for i in order]


class Replayer:
    """The hook of a replayed run: every call answered from ``snapshot`` in ``scope``.

    ``exact``: the recorded documents of a call with the same tool, backend, normalised query
    and k (one made for the same item of the same dataset first). ``claim``: the item's pool
    (the documents of every call made for it, matched by dataset and item id, else by its
    text), ranked for the new query: ids repeat across datasets, so a snapshot of two
    datasets never serves one's passages to the other's items. ``dataset`` is the run's
    ("": the snapshot's one dataset; with several, items are matched by their text only).
    A call it cannot answer stops the item (``EvidenceMissError``), or with ``miss="live"``
    runs the real tool. Every answer is logged in ``log``.
    """

    def __init__(
        self, snapshot: Snapshot, scope: str, miss: str, log: EvidenceLog, dataset: str = ""
    ) -> None:
        if scope not in SCOPES:
            raise EvidenceError(f"evidence_scope must be exact or claim, got {scope!r}")
        if miss not in MISSES:
            raise EvidenceError(f"evidence_miss must be stop or live, got {miss!r}")
        can = snapshot.info.get("scopes") or SCOPES
        if scope not in can:
            raise EvidenceError(
                f"this evidence serves only {' or '.join(can)} scope (it holds no queries): "
                f"set evidence_scope={can[0]}"
            )
        self.snapshot, self.scope, self.miss, self.log = snapshot, scope, miss, log
        held = [str(d) for d in snapshot.info.get("datasets") or []]
        self.dataset = dataset or (held[0] if len(held) == 1 else "")
        self._exact: dict[tuple[str, str, str, int], list[CallRecord]] = {}
        self._by_item: dict[tuple[str, str], list[str]] = {}
        self._by_claim: dict[str, list[str]] = {}
        encoders = (_option(c.options, "encoder") for c in snapshot.calls if c.tool == "rag")
        self._encoder = next((e for e in encoders if e), "")  # the recorded index's encoder
        for call in snapshot.calls:
            self._exact.setdefault(_key(call.tool, call.backend, call.query, call.k), []).append(
                call
            )
            if call.item:
                self._pool(self._by_item, (dataset_of(call, snapshot.info), call.item), call)
            if _claim(call.claim):
                self._pool(self._by_claim, _claim(call.claim), call)

    @staticmethod
    def _pool(pools: dict[Any, list[str]], key: Any, call: CallRecord) -> None:
        pool = pools.setdefault(key, [])
        for doc in call.docs:
            if doc not in pool:
                pool.append(doc)

    def serve(self, call: EvidenceCall, live: Callable[[], LiveAnswer]) -> list[Evidence]:
        """The frozen answer to ``call`` (or the live one on a miss with ``miss="live"``)."""
        found = self._answer(call)
        if found is None:
            if self.miss == "stop":
                raise EvidenceMissError(self._miss_line(call))
            answer = live()
            self.log.add(call, answer.docs, answer.generation, "live", answer.encoder)
            return answer.docs
        docs, generation = found
        self.log.add(call, docs, generation, "snapshot")
        return docs

    def _answer(self, call: EvidenceCall) -> tuple[list[Evidence], str] | None:
        if self.scope == "exact":
            held = self._exact.get(_key(call.tool, call.backend, call.query, call.k))
            if not held:
                return None
            same = [
                c
                for c in held
                if call.item
                and c.item == call.item
                and dataset_of(c, self.snapshot.info) == self.dataset
            ]
            chosen = (same or held)[0]
            docs = [
                self.snapshot.documents[h].evidence(s)
                for h, s in zip(chosen.docs, chosen.scores, strict=True)
            ]
            return docs, chosen.generation
        hashes = self._by_item.get((self.dataset, call.item)) if call.item else None
        if hashes is None:
            hashes = self._by_claim.get(_claim(call.claim))
        if hashes is None:
            return None
        pool = [self.snapshot.documents[h] for h in hashes]
        if call.tool == "rag":
            encoder = _option(call.options, "embed_model") or self._encoder
            ranked = rank_dense(call.query, pool, encoder)
        else:
            ranked = rank_bm25(call.query, pool)
        return [doc.evidence(score) for doc, score in ranked[: call.k]], ""

    def _miss_line(self, call: EvidenceCall) -> str:
        shown = " ".join(call.query.split())[:160]
        if self.scope == "exact":
            return (
                f"frozen evidence holds no {call.tool} call ({call.backend}, k={call.k}) for the "
                f"query {shown!r}: replay it with evidence_scope=claim or evidence_miss=live"
            )
        return (
            f"frozen evidence holds no documents for item {call.item or call.claim[:60]!r} "
            f"(query {shown!r}): is it a snapshot of this dataset?"
        )


def _claim(text: str) -> str:
    return normalise_query(text)


def _option(options: str, name: str) -> str:
    try:
        found: Any = parse_json(options) if options else {}
    except ValueError:
        return ""
    return str(found.get(name) or "") if isinstance(found, dict) else ""
