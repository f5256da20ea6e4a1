"""The evidence log's records: documents stored once by content hash, the calls returning them."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from factdebate.tools.core.errors import FactDebateError
from factdebate.tools.core.records import Evidence

FORMAT = 1
"""Version of the log and snapshot layout; a reader refuses a newer one."""
KIND = "factdebate-evidence"
SCOPES = ("exact", "claim")


class EvidenceError(FactDebateError, ValueError):
    """Evidence that cannot be read or served: not a snapshot, damaged, newer, another dataset."""


def doc_hash(doc_id: str, title: str, text: str, url: str) -> str:
    """The content hash a document is stored under (SHA-256 of its fields as a JSON list)."""
    canonical = json.dumps([doc_id, title, text, url], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def url_of(doc_id: str) -> str:
    """A document id that is a web address is its URL (web search ids are); else none."""
    return doc_id if doc_id.startswith(("http://", "https://")) else ""


@dataclass(frozen=True)
class Document:
    """One document as it was shown, stored once per log under its content hash."""

    hash: str
    id: str
    title: str
    text: str
    url: str
    source: str

    @classmethod
    def of(cls, doc: Evidence) -> Document:
        """The stored form of a returned document."""
        doc_id, title, text = str(doc["id"]), str(doc.get("title") or ""), str(doc["text"])
        url = url_of(doc_id)
        return cls(doc_hash(doc_id, title, text, url), doc_id, title, text, url, doc["source"])

    def evidence(self, score: float) -> Evidence:
        """The document as a tool returns it, with ``score``."""
        return Evidence(
            id=self.id, title=self.title, text=self.text, source=self.source, score=score
        )


@dataclass(frozen=True)
class CallRecord:
    """One retrieval or search call: what was asked, for whom, and the documents in order.

    ``docs`` are content hashes in rank order, ``scores`` their scores; ``origin`` says
    whether the live tool answered (``live``) or frozen evidence did (``snapshot``);
    ``dataset`` is the dataset of the run that made it ("" when a log predates it: the
    log's one dataset then).
    """

    item: str
    claim: str
    agent: str
    tool: str
    backend: str
    query: str
    k: int
    collection: str
    generation: str
    time: str
    docs: tuple[str, ...]
    scores: tuple[float, ...]
    options: str = ""
    origin: str = "live"
    dataset: str = ""

    def row(self) -> dict[str, Any]:
        """The call as a plain dict (lists for the document columns)."""
        out = asdict(self)
        out["docs"], out["scores"] = list(self.docs), list(self.scores)
        return out

    def hashed(self) -> dict[str, Any]:
        """The fields the content hash covers (an empty ``dataset`` left out, as before it)."""
        out = self.row()
        if not out["dataset"]:
            del out["dataset"]
        return out


@dataclass
class Snapshot:
    """Frozen evidence in memory: every document by hash, every call in order, and its facts.

    ``info`` holds ``format``, ``kind``, ``project_version``, ``datasets`` (the datasets its
    items come from), ``backends``, ``first``/``last`` (call times), ``scopes`` (those it can
    serve: a knowledge store holds no queries, so only ``claim``) and, for a replayed run,
    ``read`` (the snapshot it read).
    """

    documents: dict[str, Document] = field(default_factory=dict)
    calls: list[CallRecord] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)

    def digest(self) -> str:
        """The content hash of the evidence: its calls in order and its documents."""
        sha = hashlib.sha256()
        for key in sorted(self.documents):
            sha.update(key.encode("ascii") + b"\n")
        for call in self.calls:
            line = json.dumps(call.hashed(), sort_keys=True, ensure_ascii=False, default=str)
            sha.update(line.encode("utf-8") + b"\n")
        return sha.hexdigest()

    def check(self, where: str) -> None:
        """Refuse documents whose hash is not their content's, and calls naming unknown ones.

        Raises:
            EvidenceError: one line naming ``where`` and the first problem.
        """
        for key, doc in self.documents.items():
            if doc_hash(doc.id, doc.title, doc.text, doc.url) != key or doc.hash != key:
                raise EvidenceError(
                    f"{where}: document {doc.id[:80]!r} does not match its hash {key[:12]}: "
                    "the snapshot was altered or damaged"
                )
        for n, call in enumerate(self.calls, 1):
            missing = next((h for h in call.docs if h not in self.documents), None)
            if missing is not None:
                raise EvidenceError(f"{where}: call {n} names document {missing[:12]}, not stored")
            if len(call.scores) != len(call.docs):
                raise EvidenceError(
                    f"{where}: call {n} has {len(call.scores)} scores for "
                    f"{len(call.docs)} documents"
                )

    def summary(self) -> dict[str, Any]:
        """Items, calls, documents, backends and the time range, for ``evidence show``."""
        times = sorted(c.time for c in self.calls if c.time)
        return {
            "items": len({c.item or c.claim for c in self.calls}),
            "calls": len(self.calls),
            "documents": len(self.documents),
            "backends": sorted({c.backend for c in self.calls}),
            "tools": sorted({c.tool for c in self.calls}),
            "first": times[0] if times else "",
            "last": times[-1] if times else "",
            "datasets": list(self.info.get("datasets") or []),
            "scopes": list(self.info.get("scopes") or SCOPES),
            "digest": self.digest(),
        }


def dataset_of(call: CallRecord, info: dict[str, Any]) -> str:
    """The dataset a call was made for: its own, else its log's one dataset ("" if unknown)."""
    if call.dataset:
        return call.dataset
    held = [str(d) for d in info.get("datasets") or []]
    return held[0] if len(held) == 1 else ""


def merged(parts: list[Snapshot]) -> Snapshot:
    """One snapshot holding every part's documents and calls (in the parts' order).

    Each call keeps the dataset its part was made for, so pools stay apart by dataset.
    """
    out = Snapshot()
    datasets: list[str] = []
    for part in parts:
        out.documents.update(part.documents)
        for call in part.calls:
            dataset = dataset_of(call, part.info)
            out.calls.append(call if call.dataset == dataset else replace(call, dataset=dataset))
        datasets += [d for d in part.info.get("datasets") or [] if d not in datasets]
    scopes = [s for s in SCOPES if all(s in (p.info.get("scopes") or SCOPES) for p in parts)]
    out.info = {"datasets": datasets, "scopes": scopes}
    return out
