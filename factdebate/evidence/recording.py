"""Recording: every call a run makes goes to its log, appended as it happens, compacted at the end.

While a run goes on each call is one line of ``OUT/evidence/journal.jsonl`` (flushed, with each
new document once), so an interrupted run keeps what it read; closing the log folds the
journal into the Parquet tables.
"""

from __future__ import annotations

import datetime
import json
import math
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

from factdebate.evidence.format import CallRecord, Document, EvidenceError, Snapshot
from factdebate.evidence.reading import MAX_PART_BYTES, journal_entry
from factdebate.evidence.store import CARD, JOURNAL, read_log, write_log
from factdebate.tools.core.evidence_hook import EvidenceCall, LiveAnswer
from factdebate.tools.core.records import Evidence

SERVER_ORIGIN = "server"
"""The origin of a call a server made, read back from the item's transcript."""
WEB_BACKENDS = ("tavily", "serper", "openalex")


def now() -> str:
    """The time a call is logged at: ISO 8601, UTC, to the millisecond."""
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")


class EvidenceLog:
    """The calls of one run and their documents; thread-safe; kept in ``folder`` if given.

    With ``keep=False`` it keeps nothing (a long-lived server, whose runs' transcripts say
    what each turn read, must not grow with every call it answers).
    """

    def __init__(
        self, folder: Path | None = None, info: dict[str, Any] | None = None, keep: bool = True
    ) -> None:
        self.folder, self.keep = folder, keep
        self.snapshot = Snapshot(info=dict(info or {}))
        held = [str(d) for d in self.snapshot.info.get("datasets") or []]
        self.dataset = held[0] if len(held) == 1 else ""
        """The dataset each logged call is made for ("" when the log names none)."""
        self._lock = threading.Lock()
        self._journal: IO[str] | None = None
        if folder is not None:
            if (folder / CARD).exists():  # a resumed run: what it read before stays
                before = read_log(folder)
                self.snapshot.documents.update(before.documents)
                self.snapshot.calls.extend(before.calls)
            self._read_journal(folder / JOURNAL)

    def _read_journal(self, path: Path) -> None:
        """Take back the calls of an interrupted run (a torn last line is dropped)."""
        if not path.is_file():
            return
        if path.stat().st_size > MAX_PART_BYTES:
            raise EvidenceError(f"{path}: over {MAX_PART_BYTES} bytes")
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                entry = journal_entry(line)
            except ValueError:  # the line a crash cut short, or one damaged: not taken back
                continue
            if isinstance(entry, Document):
                self.snapshot.documents[entry.hash] = entry
            else:
                self.snapshot.calls.append(entry)

    def add(
        self,
        call: EvidenceCall,
        docs: list[Evidence],
        generation: str,
        origin: str,
        encoder: str = "",
    ) -> None:
        """Log one answered call and any document not stored yet (``encoder``: the index's)."""
        if not self.keep:
            return
        stored = [Document.of(d) for d in docs]
        options = call.options
        if encoder:
            options = json.dumps(
                {**json.loads(options or "{}"), "encoder": encoder}, sort_keys=True
            )
        record = CallRecord(
            item=call.item,
            claim=call.claim,
            agent=call.agent,
            tool=call.tool,
            backend=call.backend,
            query=call.query,
            k=call.k,
            collection=call.collection,
            generation=generation,
            time=now(),
            docs=tuple(d.hash for d in stored),
            scores=tuple(float(d["score"]) for d in docs),
            options=options,
            origin=origin,
            dataset=self.dataset,
        )
        with self._lock:
            lines = []
            for doc in stored:
                if doc.hash not in self.snapshot.documents:
                    self.snapshot.documents[doc.hash] = doc
                    lines.append({"doc": vars(doc)})
            self.snapshot.calls.append(record)
            lines.append({"call": record.row()})
            self._append(lines)

    def add_transcript(
        self, item: str, claim: str, result: Mapping[str, Any], settings: Mapping[str, Any]
    ) -> int:
        """Log each retrieval or search turn of an item a server ran as one call; the count.

        A bench on a server sees no call as it happens, so what each turn read (its tool,
        query and documents, in order) is logged with origin ``server``: ``k`` is the run's
        ``top_k``, the backend its ``rag_engine`` or ``search_backend`` (``auto`` resolved by
        the documents' source where they name one web backend). A malformed document is left
        out; a turn without documents logs nothing.
        """
        logged = 0
        for turn in result.get("transcript") or []:
            if not isinstance(turn, Mapping) or turn.get("tool") not in ("rag", "search"):
                continue
            docs = [d for d in turn.get("evidence") or [] if _document(d)]
            if not docs:
                continue
            tool = str(turn["tool"])
            call = EvidenceCall(
                tool=tool,
                backend=_backend(tool, docs, settings),
                query=str(turn.get("query") or ""),
                k=int(settings.get("top_k") or len(docs)),
                collection=str(settings.get("collection") or "default"),
                item=item,
                claim=claim,
                agent=str(turn.get("agent") or ""),
            )
            self.add(call, docs, "", SERVER_ORIGIN)
            logged += 1
        return logged

    def _append(self, entries: list[dict[str, Any]]) -> None:
        if self.folder is None:
            return
        if self._journal is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._journal = (self.folder / JOURNAL).open("a", encoding="utf-8")
        for entry in entries:
            self._journal.write(json.dumps(entry, ensure_ascii=False) + "\n")
        self._journal.flush()

    def close(self) -> Snapshot:
        """Fold the journal into the log folder's tables (when kept on disk); the snapshot."""
        with self._lock:
            if self._journal is not None:
                self._journal.close()
                self._journal = None
            # a run that read nothing keeps no log: its folder is made by the first call
            if self.folder is not None and self.folder.exists():
                write_log(self.folder, self.snapshot)
                (self.folder / JOURNAL).unlink(missing_ok=True)
        return self.snapshot


class Recorder:
    """The hook of a live run: run the real tool, log what it returned."""

    def __init__(self, log: EvidenceLog) -> None:
        self.log = log

    def serve(self, call: EvidenceCall, live: Callable[[], LiveAnswer]) -> list[Evidence]:
        """Run ``call`` live and log it."""
        answer = live()
        self.log.add(call, answer.docs, answer.generation, "live", answer.encoder)
        return answer.docs


def _document(doc: Any) -> bool:
    """Whether a transcript's document has what a logged one needs (id, text, a finite score)."""
    if not isinstance(doc, Mapping) or not isinstance(doc.get("id"), str):
        return False
    score = doc.get("score", 0.0)
    return (
        isinstance(doc.get("text"), str)
        and isinstance(doc.get("source", ""), str)
        and isinstance(doc.get("title") or "", str)
        and isinstance(score, int | float)
        and not isinstance(score, bool)
        and math.isfinite(score)
    )


def _backend(tool: str, docs: list[Any], settings: Mapping[str, Any]) -> str:
    """The backend a server's call used, as far as the run's settings and documents tell."""
    if tool == "rag":
        return str(settings.get("rag_engine") or "hybrid")
    chosen = str(settings.get("search_backend") or "auto")
    if chosen != "auto":
        return chosen
    web = {str(d.get("source", "")) for d in docs} & set(WEB_BACKENDS)
    if not web:  # no key on the server: auto fell back to BM25 over its collection
        return "offline"
    return web.pop() if len(web) == 1 else chosen
