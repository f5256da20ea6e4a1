"""Loaders for benchmark files the user downloads in their official release formats."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factdebate.datasets.base import (
    REFUTES,
    SUPPORTS,
    AtomicClaimItem,
    ClaimItem,
    DatasetError,
    LoadedDataset,
    LoadIssue,
    QAItem,
    _collect,
    _evidence,
    _folder,
    _jsonl,
    _nfc,
    _read_json,
    _str,
    _str_list,
    normalize_label,
)
from factdebate.tools.core.records import Evidence

RECORD_SUFFIXES = (".jsonl", ".json", ".parquet")


@dataclass
class PromptItem:
    """A prompt to answer at length (LongFact); it has no gold label.

    Attributes:
        id: ``{file stem}-{line}``, stable across runs.
        prompt: The prompt text.
        meta: ``topic`` (from the file name) and ``file``.

    """

    id: str
    prompt: str
    meta: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------- reading


def _locate(path: str | Path | None, name: str, candidates: Iterable[str]) -> Path:
    """A file given directly, else the first candidate (relative path) found in the folder."""
    if path is not None and Path(path).is_file():
        return Path(path)
    folder = _folder(path, name)
    names = list(candidates)
    for candidate in names:
        if (folder / candidate).is_file():
            return folder / candidate
    raise DatasetError(f"{name}: none of {', '.join(names)} found in {folder}")


def _find(path: str | Path | None, name: str, word: str) -> Path:
    """A file given directly, else the first data file in the folder with ``word`` in its path."""
    if path is not None and Path(path).is_file():
        return Path(path)
    folder = _folder(path, name)
    found = sorted(
        p
        for p in (folder.rglob("*") if folder.is_dir() else ())
        if p.is_file()
        and p.suffix in RECORD_SUFFIXES
        and word in str(p.relative_to(folder)).lower()
    )
    if not found:
        raise DatasetError(
            f"{name}: no .jsonl/.json/.parquet file with {word!r} in its path under {folder}"
        )
    return found[0]


def _records(file: Path, issues: list[LoadIssue]) -> tuple[Iterator[tuple[int, Any]], Any]:
    """Rows of a JSONL, JSON-list or Parquet file and how a row is named in an issue.

    JSONL rows are numbered by line (issues read ``FILE:LINE``); JSON and Parquet rows by
    0-based index (issues read ``FILE: record N``).
    """
    if file.suffix == ".jsonl":
        return _jsonl(file, issues), lambda _: ""
    if file.suffix == ".parquet":
        import pyarrow.parquet as pq

        try:
            rows: list[Any] = pq.read_table(file).to_pylist()
        except Exception as exc:  # pyarrow raises several types for a broken file
            raise DatasetError(f"{file}: unreadable Parquet file ({exc})") from exc
    else:
        data = _read_json(file)
        if not isinstance(data, list):
            raise DatasetError(f"{file}: expected a JSON list of records")
        rows = data
    return iter(enumerate(rows)), lambda i: f"record {i}: "


def _load(
    name: str,
    file: Path,
    make: Callable[[int, Any], Any],
    issues: list[LoadIssue] | None = None,
    notes: list[str] | None = None,
) -> LoadedDataset[Any]:
    """Build every record with ``make`` (which may return one item, a list, or None to skip)."""
    issues = [] if issues is None else issues
    rows, where = _records(file, issues)
    made = _collect(rows, file, issues, make, where)
    items: list[Any] = []
    for one in made:
        if isinstance(one, list):
            items.extend(one)
        elif one is not None:
            items.append(one)
    if not items and not issues:
        raise DatasetError(f"{file}: no records")
    return LoadedDataset(name, items, issues, list(notes or []))


def _ident(rec: Any, index: int, *keys: str) -> str:
    for key in keys:
        value = rec.get(key)
        if isinstance(value, str | int) and str(value).strip():
            return str(value)
    return str(index)


def _truth(raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.strip().lower() in ("true", "false"):
        return raw.strip().lower() == "true"
    raise ValueError(f"label must be true or false, got {raw!r}")


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
    file = _locate(path, "feverous", (f"feverous_{split}_challenges.jsonl", f"{split}.jsonl"))
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
            evidence.append(_evidence(element_id, text, match["page"] if match else ""))
        return ClaimItem(
            id=str(rec["id"]),
            claim=_str(rec, "claim"),
            label=normalize_label(rec["label"]),
            evidence=evidence,
            meta={"evidence_sets": sets, "challenge": rec.get("challenge")},
        )

    try:
        return _load("feverous", file, make, issues, notes)
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
    file = _locate(
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
        return _evidence(str(doc["id"]), text, str(doc.get("title") or "")) if text else None

    def make(_: int, rec: Any) -> ClaimItem:
        positive, negative = passage(rec, "positive_evidence"), passage(rec, "negative_evidence")
        return ClaimItem(
            id=str(rec["id"]),
            claim=_str(rec, "claim"),
            label=normalize_label(rec["label"]),
            evidence=[positive] if positive else [],
            meta={"negative_evidence_id": negative["id"] if negative else None},
        )

    return _load(f"faviq-{subset}", file, make)


# --------------------------------------------------------------------------- MedQA

MEDQA_OPTIONS = ("A", "B", "C", "D")


def load_medqa(path: str | Path | None = None, split: str = "test") -> LoadedDataset[ClaimItem]:
    """Load MedQA (USMLE, 4 options) as one claim per option: the question plus that answer.

    Reads ``phrases_no_exclude_{split}.jsonl`` as released (``questions/US/4_options/``) or
    ``{split}.jsonl``; each record has ``question``, ``options`` A-D and ``answer_idx``. The
    option that is the answer is SUPPORTS, the other three REFUTES; a debate judges each
    proposed answer against the evidence (the RAG index of PubMed abstracts in Tool-MAD's
    medical setting). Ids are ``{question index}-{letter}``.

    Args:
        path: The ``medqa`` folder (searched at the release's sub-paths) or the file.
        split: ``test``, ``dev`` or ``train``.

    Returns:
        Four claims per question; ``meta`` holds ``question_id``, ``option``, ``answer_idx``.

    """
    name = f"phrases_no_exclude_{split}.jsonl"
    file = _locate(
        path,
        "medqa",
        (
            name,
            f"questions/US/4_options/{name}",
            f"data_clean/questions/US/4_options/{name}",
            f"US/4_options/{name}",
            f"{split}.jsonl",
        ),
    )

    def make(line: int, rec: Any) -> list[ClaimItem]:
        question, options, answer = _str(rec, "question"), rec["options"], rec["answer_idx"]
        if not isinstance(options, dict) or sorted(options) != list(MEDQA_OPTIONS):
            raise ValueError("options must map exactly A, B, C and D to answers")
        if answer not in options:
            raise ValueError(f"answer_idx must be one of A-D, got {answer!r}")
        qid = str(line - 1)
        return [
            ClaimItem(
                id=f"{qid}-{letter}",
                claim=f"{question} Proposed answer: {_str(options, letter)}",
                label=SUPPORTS if letter == answer else REFUTES,
                meta={
                    "question_id": qid,
                    "option": letter,
                    "answer_idx": answer,
                    "meta_info": rec.get("meta_info"),
                },
            )
            for letter in MEDQA_OPTIONS
        ]

    return _load("medqa", file, make)


# --------------------------------------------------------------------------- FaithEval

FAITHEVAL_TASKS = ("unanswerable", "inconsistent", "counterfactual")
UNKNOWN = "unknown"


def _faitheval_gold(rec: Any, task: str) -> list[str]:
    if task == "unanswerable":
        return [UNKNOWN]
    if task == "counterfactual" and isinstance(rec.get("choices"), dict) and rec.get("answerKey"):
        labels, texts = rec["choices"].get("label") or [], rec["choices"].get("text") or []
        chosen = [t for lab, t in zip(labels, texts, strict=False) if lab == rec["answerKey"]]
        if chosen:
            return [str(chosen[0])]
    answers = rec.get("answers", rec.get("answer"))
    answers = [answers] if isinstance(answers, str) else answers
    if not isinstance(answers, list) or not [a for a in answers if isinstance(a, str) and a]:
        raise ValueError("needs 'answers' (a list of strings) or 'answer'")
    return [_nfc(a) for a in answers if isinstance(a, str) and a]


def load_faitheval(
    path: str | Path | None = None, task: str = "counterfactual"
) -> LoadedDataset[QAItem]:
    """Load one FaithEval task as questions over a context split into documents.

    Reads the first ``.jsonl``/``.json``/``.parquet`` file whose path under the folder names the
    task (e.g. ``FaithEval-inconsistent-v1.0/data/test-00000-of-00001.parquet`` as released).
    The context's paragraphs (blank-line separated) become the documents, one agent each in
    MADAM-RAG. Gold answers: ``unknown`` for unanswerable; the choice named by ``answerKey``
    (else ``answer``) for counterfactual; every listed answer for inconsistent (each is
    supported by part of the context). Scored like RAMDocs (strict EM, precision, recall).

    Args:
        path: The ``faitheval`` folder or the task's file.
        task: ``unanswerable``, ``inconsistent`` or ``counterfactual``.

    Returns:
        Questions with ``meta["task"]``.

    """
    if task not in FAITHEVAL_TASKS:
        raise DatasetError(f"FaithEval task must be one of {', '.join(FAITHEVAL_TASKS)}")
    file = _find(path, "faitheval", task)

    def make(index: int, rec: Any) -> QAItem:
        qid = _ident(rec, index, "qid", "id")
        parts = [p.strip() for p in _str(rec, "context").split("\n\n") if p.strip()]
        docs = [_evidence(f"{qid}-doc{j}", p) for j, p in enumerate(parts)]
        return QAItem(
            id=qid,
            question=_str(rec, "question"),
            documents=docs,
            doc_types=["context"] * len(docs),
            gold_answers=_faitheval_gold(rec, task),
            wrong_answers=[],
            meta={"task": task},
        )

    return _load(f"faitheval-{task}", file, make)


# --------------------------------------------------------------------------- AmbigDocs


def load_ambigdocs(path: str | Path | None = None, split: str = "test") -> LoadedDataset[QAItem]:
    """Load AmbigDocs: an ambiguous question, documents about same-named entities, their answers.

    Reads ``{split}.json`` or ``{split}.jsonl``; each record has ``question`` and ``documents``
    (``title``, ``text``, ``answer``). The gold answers are the documents' distinct answers
    (one per entity); there are no misinformation answers. Scored like RAMDocs.

    Args:
        path: The ``ambigdocs`` folder or the file.
        split: ``test``, ``dev`` or ``train``.

    Returns:
        Questions with ``meta["ambiguous_entity"]`` and per-document ``doc_answers``.

    """
    file = _locate(path, "ambigdocs", (f"{split}.json", f"{split}.jsonl"))

    def make(index: int, rec: Any) -> QAItem:
        qid = _ident(rec, index, "qid", "id")
        docs, answers = [], []
        for j, doc in enumerate(rec["documents"]):
            ident = _ident(doc, j, "pid")
            docs.append(_evidence(f"{qid}-{ident}", _str(doc, "text"), str(doc.get("title") or "")))
            answers.append(_nfc(str(doc.get("answer") or "")))
        gold = list(dict.fromkeys(a for a in answers if a.strip()))
        if not gold:
            raise ValueError("no document carries an answer")
        return QAItem(
            id=qid,
            question=_str(rec, "question"),
            documents=docs,
            doc_types=["correct"] * len(docs),
            gold_answers=gold,
            wrong_answers=[],
            meta={"ambiguous_entity": rec.get("ambiguous_entity"), "doc_answers": answers},
        )

    return _load("ambigdocs", file, make)


# --------------------------------------------------------------------------- BingCheck

BINGCHECK_FILES = {
    "balanced": "data_claim_label.jsonl",
    "binary": "data_full.jsonl",
    "full": "bingcheck.jsonl",
}
_BINGCHECK_FOUR_WAY = {"supported": True, "not supported": False, "refuted": False}


def load_bingcheck(
    path: str | Path | None = None, subset: str = "balanced"
) -> LoadedDataset[AtomicClaimItem]:
    """Load BingCheck claims labelled true/false (no evidence text ships with them).

    Args:
        path: The ``bingcheck`` folder or a file of it.
        subset: ``balanced`` (142 claims, 100 true / 42 false, as MAD-Fact and FactBench use),
            ``binary`` (3,623) or ``full`` (the 4-way file: supported -> true, refuted and not
            supported -> false; partially supported claims are left out and noted).

    Returns:
        Claims with ids ``{line - 1}`` and the raw label in ``meta``.

    """
    if subset not in BINGCHECK_FILES:
        raise DatasetError(f"BingCheck subset must be one of {', '.join(BINGCHECK_FILES)}")
    file = _locate(path, "bingcheck", (BINGCHECK_FILES[subset],))
    partial = 0

    def make(line: int, rec: Any) -> AtomicClaimItem | None:
        nonlocal partial
        raw = rec["label"]
        key = raw.strip().lower() if isinstance(raw, str) else raw
        if key == "partially supported":
            partial += 1
            return None
        label = _BINGCHECK_FOUR_WAY[key] if key in _BINGCHECK_FOUR_WAY else _truth(raw)
        return AtomicClaimItem(str(line - 1), _str(rec, "claim"), label, [], {"raw_label": raw})

    loaded = _load("bingcheck", file, make)
    if partial:
        loaded.notes.append(f"left out {partial} claims labelled partially supported")
    return loaded


# --------------------------------------------------------------------------- FELM


def _felm_contents(contents: Any, links: list[str], ident: str) -> list[Evidence]:
    """Evidence from FELM's ``ref_contents``: the text of each reference (titled by its link).

    The field is a list parallel to ``ref`` (or one string); empty entries are skipped.
    """
    if isinstance(contents, str):
        contents = [contents]
    if not isinstance(contents, list):
        return []
    return [
        _evidence(f"{ident}-content{j}", text, links[j] if j < len(links) else "")
        for j, text in enumerate(contents)
        if isinstance(text, str) and text.strip()
    ]


def load_felm(path: str | Path | None = None, domain: str = "wk") -> LoadedDataset[AtomicClaimItem]:
    """Load FELM response segments with their true/false labels (world knowledge by default).

    Reads ``all.jsonl`` (keeping records whose ``domain`` matches) or ``{domain}.jsonl``. Each
    segment of ``segmented_response`` is one claim labelled by ``labels``; ``ref`` entries that
    hold text (not a bare link) and the reference texts of ``ref_contents`` become evidence,
    links go to ``meta["ref_links"]``.

    Args:
        path: The ``felm`` folder or the file.
        domain: ``wk``, ``science``, ``math``, ``reasoning`` or ``writing_rec``.

    Returns:
        Claims with ids ``{index}-{segment}`` and the prompt (``question``) and ``response``.

    """
    file = _locate(path, "felm", ("all.jsonl", f"{domain}.jsonl", f"{domain}/test.jsonl"))

    def make(line: int, rec: Any) -> list[AtomicClaimItem]:
        if rec.get("domain") not in (None, domain):
            return []
        segments, labels = _str_list(rec, "segmented_response"), rec["labels"]
        if not isinstance(labels, list) or len(labels) != len(segments):
            raise ValueError("labels must be a list as long as segmented_response")
        refs = [r for r in rec.get("ref") or [] if isinstance(r, str) and r.strip()]
        links = [r for r in refs if re.match(r"^\s*https?://\S+\s*$", r)]
        ident = _ident(rec, line - 1, "index")
        evidence = [_evidence(f"{ident}-ref{j}", r) for j, r in enumerate(refs) if r not in links]
        evidence += _felm_contents(rec.get("ref_contents"), links, ident)
        context = {
            "question": rec.get("prompt"),
            "response": rec.get("response"),
            "ref_links": links,
        }
        return [
            AtomicClaimItem(f"{ident}-{k}", _nfc(seg), _truth(lab), list(evidence), dict(context))
            for k, (seg, lab) in enumerate(zip(segments, labels, strict=True))
            if seg.strip()
        ]

    return _load(f"felm-{domain}", file, make)


# --------------------------------------------------------------------------- HoVer

HOVER_LABELS = {"SUPPORTED": SUPPORTS, "NOT_SUPPORTED": REFUTES}


def load_hover(
    path: str | Path | None = None, split: str = "dev", wiki_db: str | Path | None = None
) -> LoadedDataset[ClaimItem]:
    """Load HoVer many-hop claims; the supporting pages' text is evidence when a dump is present.

    Reads ``hover_{split}_release_v1.1.json`` (or ``{split}.json``). Labels SUPPORTED /
    NOT_SUPPORTED map to SUPPORTS / REFUTES (HoVer has no third class). With the
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
    file = _locate(
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
                evidence.append(_evidence(title, text, title))
            else:
                issues.append(LoadIssue(str(file), 0, f"record {index}: page {title!r} not found"))
        return ClaimItem(
            id=_ident(rec, index, "uid"),
            claim=_str(rec, "claim"),
            label=HOVER_LABELS[rec["label"]],
            evidence=evidence,
            meta={"supporting_facts": facts, "num_hops": rec.get("num_hops")},
        )

    try:
        return _load("hover", file, make, issues, notes)
    finally:
        if pages:
            pages.close()


# --------------------------------------------------------------------------- LongFact


def load_longfact(path: str | Path | None = None) -> LoadedDataset[PromptItem]:
    """Load LongFact prompts from every ``.jsonl`` under the folder (concepts and objects).

    Args:
        path: The ``longfact`` folder or one of its files.

    Returns:
        Prompts in file-name order; ``meta["topic"]`` is the file stem after the first ``_``.

    """
    given = Path(path) if path is not None else None
    if given is not None and given.is_file():
        files = [given]
    else:
        folder = _folder(path, "longfact")
        files = sorted(folder.rglob("*.jsonl")) if folder.is_dir() else []
        if not files:
            raise DatasetError(f"longfact: no .jsonl files under {folder}")
    issues: list[LoadIssue] = []
    items: list[PromptItem] = []
    for file in files:

        def make(line: int, rec: Any, stem: str = file.stem) -> PromptItem:
            topic = stem.split("_", 1)[-1]
            return PromptItem(f"{stem}-{line}", _str(rec, "prompt"), {"topic": topic, "file": stem})

        items.extend(_collect(_jsonl(file, issues), file, issues, make))
    return LoadedDataset("longfact", items, issues)


__all__ = [
    "BINGCHECK_FILES",
    "FAITHEVAL_TASKS",
    "HOVER_LABELS",
    "MEDQA_OPTIONS",
    "UNKNOWN",
    "PromptItem",
    "load_ambigdocs",
    "load_bingcheck",
    "load_faitheval",
    "load_faviq",
    "load_felm",
    "load_feverous",
    "load_hover",
    "load_longfact",
    "load_medqa",
]
