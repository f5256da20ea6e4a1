"""Wikipedia claim sets: FEVER (mini, with its corpus), FEVEROUS, FAVIQ and HoVer."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

from factdebate.datasets.reading import (
    collect,
    data_folder,
    jsonl_records,
    load_records,
    locate,
    logged,
    make_evidence,
    record_id,
    str_field,
    str_list_field,
)
from factdebate.datasets.records import (
    REFUTES,
    SUPPORTS,
    ClaimItem,
    DatasetError,
    LoadedDataset,
    LoadIssue,
    normalize_label,
)
from factdebate.tools.core.records import Evidence

HOVER_LABELS = {"SUPPORTED": SUPPORTS, "NOT_SUPPORTED": REFUTES}
"""HoVer's labels mapped onto verdicts (HoVer has no third class)."""

# --------------------------------------------------------------------------- FEVER mini

_FEVER_TOKENS = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-COLON-": ":", "_": " "}


def _fever_title(page: Any) -> str:
    title = page if isinstance(page, str) else ""
    for token, char in _FEVER_TOKENS.items():
        title = title.replace(token, char)
    return title


def _fever_corpus(path: Path, issues: list[LoadIssue]) -> list[Evidence]:
    def make(_: int, rec: Any) -> Evidence:
        return make_evidence(
            str_field(rec, "doc_id"), str_field(rec, "text"), _fever_title(rec.get("page")), "fever"
        )

    return collect(jsonl_records(path, issues), path, issues, make)


def load_fever_mini_corpus(path: str | Path | None = None) -> list[Evidence]:
    """Load the FEVER evidence sentences of ``fever_rag_mini`` as retrieval documents.

    Args:
        path: The ``fever/fever_rag_mini`` folder (default: shared datasets).

    Returns:
        One Evidence per sentence; ``title`` is the Wikipedia page ("" when ambiguous).

    """
    issues: list[LoadIssue] = []
    return logged(
        _fever_corpus(data_folder(path, "fever/fever_rag_mini") / "corpus.jsonl", issues), issues
    )


def load_fever_mini(path: str | Path | None = None) -> LoadedDataset[ClaimItem]:
    """Load the ``fever_rag_mini`` claims with their gold sentence as evidence.

    The shared folder's set holds 535 claims (3 labels); ``datasets get`` builds 355 (2).

    Args:
        path: The ``fever/fever_rag_mini`` folder (default: shared datasets).

    Returns:
        Claims with ``meta["gold_doc_ids"]`` (empty for NOT ENOUGH INFO) and ``evidence_pages``.

    """
    folder = data_folder(path, "fever/fever_rag_mini")
    issues: list[LoadIssue] = []
    corpus = {d["id"]: d for d in _fever_corpus(folder / "corpus.jsonl", issues)}

    def make(_: int, rec: Any) -> ClaimItem:
        gold = str_list_field(rec, "gold_doc_ids")
        if missing := [d for d in gold if d not in corpus]:
            raise ValueError(f"gold doc(s) {missing} not in corpus.jsonl")
        return ClaimItem(
            id=str(rec["id"]),
            claim=str_field(rec, "claim"),
            label=normalize_label(rec["label"]),
            evidence=[make_evidence(d, corpus[d]["text"], corpus[d]["title"]) for d in gold],
            meta={
                "gold_doc_ids": gold,
                "evidence_pages": rec.get("evidence_pages", []),
                "origin": rec.get("source"),
            },
        )

    claims = folder / "claims.jsonl"
    return LoadedDataset(
        "fever-mini", collect(jsonl_records(claims, issues), claims, issues, make), issues
    )


# --------------------------------------------------------------------------- FEVEROUS

_FEVEROUS_ELEMENT = re.compile(
    r"^(?P<page>.+?)_(?P<element>sentence_\d+|header_cell_\d+_\d+_\d+|cell_\d+_\d+_\d+|"
    r"item_\d+_\d+|section_\d+|table_caption_\d+|title)$"
)
_WIKI_LINK = re.compile(r"\[\[(?:[^\]|]*\|)?([^\]]*)\]\]")


def _feverous_text(page: dict[str, Any], element: str) -> str | None:
    """Text of one element of a FEVEROUS page JSON (sentence, cell, list item, section)."""
    value = page.get(element)
    if isinstance(value, dict):
        value = value.get("value")
    if isinstance(value, str):
        return _WIKI_LINK.sub(r"\1", value)
    kind = "table" if "cell" in element else "list" if element.startswith("item_") else ""
    if not kind:
        return None
    number = element.split("_")[-3 if kind == "table" else -2]
    container = page.get(f"{kind}_{number}")
    if not isinstance(container, dict):
        return None
    cells: list[Any] = container.get(kind) or []
    if kind == "table":
        cells = [cell for row in cells if isinstance(row, list) for cell in row]
    for cell in cells:
        if isinstance(cell, dict) and cell.get("id") == element:
            return _WIKI_LINK.sub(r"\1", str(cell.get("value", "")))
    return None


class _PageDB:
    """Read-only lookups of Wikipedia pages in a SQLite dump (FEVEROUS ``wiki``, HoVer)."""

    def __init__(self, file: Path, query: str) -> None:
        self.file, self._query = file, query
        self._db = sqlite3.connect(f"file:{file}?mode=ro", uri=True)
        self._cache: dict[str, str | None] = {}

    def get(self, key: str) -> str | None:
        if key not in self._cache:
            try:
                row = self._db.execute(self._query, (key,)).fetchone()
            except sqlite3.DatabaseError as exc:
                raise DatasetError(f"{self.file}: unreadable page database ({exc})") from exc
            self._cache[key] = str(row[0]) if row else None
        return self._cache[key]

    def close(self) -> None:
        self._db.close()


def load_feverous(
    path: str | Path | None = None, split: str = "dev", db: str | Path | None = None
) -> LoadedDataset[ClaimItem]:
    """Load FEVEROUS claims; evidence text comes from its Wikipedia database when present.

    Reads ``feverous_{split}_challenges.jsonl`` (or ``{split}.jsonl``). The gold evidence is
    the first evidence set's elements (``Page_sentence_3``, ``Page_cell_0_1_2``,
    ``Page_item_1_0``...), looked up in ``feverous_wikiv1.db`` (``db`` or next to the claims
    file). Without the database the claims run claim-only (empty evidence, noted).
    The release's empty first record is skipped.

    Args:
        path: The ``feverous`` folder or the claims file.
        split: ``dev`` or ``train``.
        db: The SQLite Wikipedia dump (default: ``feverous_wikiv1.db`` beside the claims).

    Returns:
        Claims with ``meta["evidence_sets"]`` (element ids per set) and ``challenge``.

    """
    file = locate(path, "feverous", (f"feverous_{split}_challenges.jsonl", f"{split}.jsonl"))
    db_file = Path(db) if db is not None else file.parent / "feverous_wikiv1.db"
    pages = _PageDB(db_file, "SELECT data FROM wiki WHERE id = ?") if db_file.is_file() else None
    issues: list[LoadIssue] = []
    notes = [] if pages else [f"no {db_file.name} beside the claims: claim-only (no evidence)"]
    parsed: dict[str, dict[str, Any] | None] = {}

    def page_json(title: str) -> dict[str, Any] | None:
        if title not in parsed:
            raw = pages.get(title) if pages else None
            parsed[title] = json.loads(raw) if raw else None
        return parsed[title]

    def make(line: int, rec: Any) -> ClaimItem | None:
        if not rec.get("claim") and not rec.get("label"):
            return None  # the release's header record
        sets = [
            [str(e) for e in s.get("content", [])] for s in rec["evidence"] if isinstance(s, dict)
        ]
        evidence: list[Evidence] = []
        for element_id in sets[0] if sets and pages else []:
            match = _FEVEROUS_ELEMENT.match(element_id)
            page = page_json(match["page"]) if match else None
            text = _feverous_text(page, match["element"]) if page and match else None
            if text is None:
                issues.append(LoadIssue(str(file), line, f"evidence {element_id!r} not found"))
                continue
            evidence.append(make_evidence(element_id, text, match["page"] if match else ""))
        return ClaimItem(
            id=str(rec["id"]),
            claim=str_field(rec, "claim"),
            label=normalize_label(rec["label"]),
            evidence=evidence,
            meta={"evidence_sets": sets, "challenge": rec.get("challenge")},
        )

    try:
        return load_records("feverous", file, make, issues, notes)
    finally:
        if pages:
            pages.close()


# --------------------------------------------------------------------------- FAVIQ


def load_faviq(
    path: str | Path | None = None, subset: str = "a", split: str = "dev"
) -> LoadedDataset[ClaimItem]:
    """Load FAVIQ claims (A or R set) with the positive silver passage as evidence.

    Reads ``faviq_{subset}_set/{split}.jsonl`` (or ``{split}.jsonl``) under the folder.
    Labels are SUPPORTS / REFUTES; a positive passage with id ``N/A`` gives no evidence.

    Args:
        path: The ``faviq`` folder, a set folder, or the file.
        subset: ``a`` (ambiguity-derived) or ``r`` (regular).
        split: ``dev``, ``train`` (or ``test`` for the R set).

    Returns:
        Claims with the negative passage's id in ``meta``.

    """
    if subset not in ("a", "r"):
        raise DatasetError(f"FAVIQ subset must be 'a' or 'r', got {subset!r}")
    file = locate(
        path,
        "faviq",
        (
            f"faviq_{subset}_set/{split}.jsonl",
            f"faviq_{subset}_set_v1.2/{split}.jsonl",
            f"{split}.jsonl",
        ),
    )

    def passage(rec: Any, key: str) -> Evidence | None:
        doc = rec.get(key)
        if not isinstance(doc, dict) or str(doc.get("id", "N/A")) == "N/A":
            return None
        text = doc.get("text")
        return make_evidence(str(doc["id"]), text, str(doc.get("title") or "")) if text else None

    def make(_: int, rec: Any) -> ClaimItem:
        positive, negative = passage(rec, "positive_evidence"), passage(rec, "negative_evidence")
        return ClaimItem(
            id=str(rec["id"]),
            claim=str_field(rec, "claim"),
            label=normalize_label(rec["label"]),
            evidence=[positive] if positive else [],
            meta={"negative_evidence_id": negative["id"] if negative else None},
        )

    return load_records(f"faviq-{subset}", file, make)


# --------------------------------------------------------------------------- HoVer


def load_hover(
    path: str | Path | None = None, split: str = "dev", wiki_db: str | Path | None = None
) -> LoadedDataset[ClaimItem]:
    """Load HoVer many-hop claims; the supporting pages' text is evidence when a dump is present.

    Reads ``hover_{split}_release_v1.1.json`` (or ``{split}.json``). Labels SUPPORTED /
    NOT_SUPPORTED map to SUPPORTS / REFUTES (``HOVER_LABELS``). With the
    Wikipedia dump ``wiki_wo_links.db`` (SQLite, table ``documents(id, text)``; ``wiki_db``
    or beside the file) each supporting page's text is evidence; without it the claims run
    claim-only (noted).

    Args:
        path: The ``hover`` folder or the file.
        split: ``dev`` or ``train`` (the test release has no labels).
        wiki_db: The SQLite dump (default: ``wiki_wo_links.db`` beside the claims).

    Returns:
        Claims with ``meta["supporting_facts"]`` (title, sentence index) and ``num_hops``.

    """
    file = locate(
        path,
        "hover",
        (f"hover_{split}_release_v1.1.json", f"hover_{split}_release_v1.0.json", f"{split}.json"),
    )
    db_file = Path(wiki_db) if wiki_db is not None else file.parent / "wiki_wo_links.db"
    pages = (
        _PageDB(db_file, "SELECT text FROM documents WHERE id = ?") if db_file.is_file() else None
    )
    issues: list[LoadIssue] = []
    notes = [] if pages else [f"no {db_file.name} beside the claims: claim-only (no evidence)"]

    def make(index: int, rec: Any) -> ClaimItem:
        if rec["label"] not in HOVER_LABELS:
            raise ValueError(f"unknown label {rec['label']!r}")
        facts = [(str(t), int(s)) for t, s in rec["supporting_facts"]]
        evidence = []
        for title in dict.fromkeys(t for t, _ in facts) if pages else ():
            text = pages.get(title) if pages else None
            if text:
                evidence.append(make_evidence(title, text, title))
            else:
                issues.append(LoadIssue(str(file), 0, f"record {index}: page {title!r} not found"))
        return ClaimItem(
            id=record_id(rec, index, "uid"),
            claim=str_field(rec, "claim"),
            label=HOVER_LABELS[rec["label"]],
            evidence=evidence,
            meta={"supporting_facts": facts, "num_hops": rec.get("num_hops")},
        )

    try:
        return load_records("hover", file, make, issues, notes)
    finally:
        if pages:
            pages.close()
