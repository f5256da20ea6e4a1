"""Shared records, label mapping, reading helpers and loaders of the benchmarks shipped offline."""

from __future__ import annotations

import json
import logging
import os
import random
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from factdebate.tools.core.records import Evidence

log = logging.getLogger(__name__)

T = TypeVar("T")

SUPPORTS = "SUPPORTS"
REFUTES = "REFUTES"
NOT_ENOUGH_INFO = "NOT ENOUGH INFO"
CONFLICTING = "CONFLICTING"
LABELS: tuple[str, ...] = (SUPPORTS, REFUTES, NOT_ENOUGH_INFO, CONFLICTING)
THREE_WAY: tuple[str, ...] = (SUPPORTS, REFUTES, NOT_ENOUGH_INFO)
MAX_DATASET_BYTES = 4 * 1024**3  # largest dataset file read


def _label_key(raw: str) -> str:
    return " ".join(raw.strip().casefold().replace("_", " ").replace("-", "").split())


_LABEL_MAP: dict[str, str] = {
    _label_key(raw): canon
    for canon, raws in {
        SUPPORTS: ("SUPPORT", "SUPPORTS", "Supported"),
        REFUTES: ("CONTRADICT", "REFUTES", "Refuted"),
        NOT_ENOUGH_INFO: ("NOT_ENOUGH_INFO", "NOT ENOUGH INFO", "Not Enough Evidence"),
        # AVeriTeC's dev.json spells it "Cherrypicking"; the README "Cherry-picking".
        CONFLICTING: ("CONFLICTING", "Conflicting Evidence/Cherry-picking"),
    }.items()
    for raw in raws
}

# PubMedQA answers mapped onto verdicts for the question read as a claim.
PUBMEDQA_LABELS: dict[str, str] = {"yes": SUPPORTS, "no": REFUTES, "maybe": NOT_ENOUGH_INFO}


class DatasetError(ValueError):
    """A dataset file is missing, empty or unusable, or a label is unknown."""


def normalize_label(raw: str) -> str:
    """Map a dataset's verdict label onto the project's canonical label.

    Args:
        raw: Label as written in the dataset (case, ``_`` and ``-`` are ignored).

    Returns:
        One of ``SUPPORTS``, ``REFUTES``, ``NOT ENOUGH INFO`` or ``CONFLICTING``.

    Raises:
        DatasetError: If the label is not known.

    """
    canon = _LABEL_MAP.get(_label_key(raw)) if isinstance(raw, str) else None
    if canon is None:
        raise DatasetError(f"unknown label {raw!r}")
    return canon


@dataclass(frozen=True)
class LoadIssue:
    """A malformed record that was skipped (or partly used) while loading.

    Attributes:
        path: File the record came from.
        line: 1-based line number for JSONL files; 0 for whole-JSON files
            (the message then names the record).
        message: What is wrong.

    """

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return (
            f"{self.path}:{self.line}: {self.message}"
            if self.line
            else f"{self.path}: {self.message}"
        )


@dataclass
class LoadedDataset(Generic[T]):
    """Items of one dataset plus the problems met while reading it.

    Attributes:
        name: Dataset name (a key of ``DATASETS``).
        items: Successfully parsed items, in file order.
        issues: Skipped or malformed records.
        notes: Informational remarks (e.g. records deliberately left out).

    """

    name: str
    items: list[T]
    issues: list[LoadIssue] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class ClaimItem:
    """A claim with a verdict label.

    Attributes:
        id: Dataset-stable identifier.
        claim: Claim text (the question for PubMedQA).
        label: Canonical label (see ``LABELS``).
        evidence: Gold evidence when the dataset ships its text, else empty.
        meta: Dataset-specific extras (``gold_doc_ids``, raw label, ...).

    """

    id: str
    claim: str
    label: str
    evidence: list[Evidence] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class QAItem:
    """A question answered from documents that include misinformation and noise (RAMDocs).

    Attributes:
        id: Dataset-stable identifier (line index).
        question: The (ambiguous) question.
        documents: Documents shipped with the question.
        doc_types: Parallel to ``documents``: ``correct``, ``misinfo`` or ``noise``.
        gold_answers: All correct answers (one per disambiguated entity).
        wrong_answers: Answers planted by the misinformation documents.
        meta: ``disambig_entity`` and per-document ``doc_answers``.

    """

    id: str
    question: str
    documents: list[Evidence]
    doc_types: list[str]
    gold_answers: list[str]
    wrong_answers: list[str]
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class AtomicClaimItem:
    """An atomic claim extracted from an LLM response, labelled true or false.

    Attributes:
        id: Dataset-stable identifier.
        claim: Atomic claim text.
        label: True when the claim is factual.
        evidence: Evidence passages when the dataset ships them, else empty.
        meta: Context such as ``question`` and ``response``.

    """

    id: str
    claim: str
    label: bool
    evidence: list[Evidence] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------- helpers


def datasets_root() -> Path:
    """Return the shared data folder (``$FACTDEBATE_DATASETS`` or ``<repo>/../shared/datasets``)."""
    default = Path(__file__).resolve().parents[2].parent / "shared" / "datasets"
    return Path(os.environ.get("FACTDEBATE_DATASETS", default))


def _folder(path: str | Path | None, name: str) -> Path:
    return Path(path) if path is not None else datasets_root() / name


def _read_bytes(path: Path) -> bytes:
    """A dataset file's bytes (at most ``MAX_DATASET_BYTES``); missing or empty: DatasetError."""
    if not path.is_file():
        raise DatasetError(f"dataset file not found: {path}")
    if path.stat().st_size > MAX_DATASET_BYTES:
        raise DatasetError(f"{path}: larger than {MAX_DATASET_BYTES} bytes")
    data = path.read_bytes()
    if not data.strip():
        raise DatasetError(f"dataset file is empty: {path}")
    return data


def _utf8_problem(exc: UnicodeDecodeError) -> str:
    return f"not valid UTF-8 (byte 0x{exc.object[exc.start]:02x} at column {exc.start + 1})"


def _read_text(path: Path) -> str:
    """A whole dataset file as text; invalid UTF-8 is a DatasetError naming FILE:LINE."""
    data = _read_bytes(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - data.rfind(b"\n", 0, exc.start)
        raise DatasetError(
            f"{path}:{line}: not valid UTF-8 (byte 0x{data[exc.start]:02x} at column {column})"
        ) from None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(_read_text(path))
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from exc


def _jsonl(path: Path, issues: list[LoadIssue]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)``; bad lines (invalid UTF-8 too) become issues.

    Lines end at a newline only: U+0085, U+2028 and U+2029 are valid inside JSON strings (the
    official FELM file holds one), and ids taken from line numbers must not shift.
    """
    for lineno, raw in enumerate(_read_bytes(path).split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            issues.append(LoadIssue(str(path), lineno, _utf8_problem(exc)))
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            issues.append(LoadIssue(str(path), lineno, f"invalid JSON: {exc.msg}"))
            continue
        if isinstance(rec, dict):
            yield lineno, rec
        else:
            issues.append(LoadIssue(str(path), lineno, "expected a JSON object"))


def _describe(exc: Exception) -> str:
    return f"missing field {exc.args[0]!r}" if isinstance(exc, KeyError) else str(exc)


def _collect(
    rows: Iterable[tuple[int, Any]],
    path: Path,
    issues: list[LoadIssue],
    make: Callable[[int, Any], T],
    where: Callable[[int], str] = lambda _: "",
) -> list[T]:
    """Convert rows with ``make``; a failing row becomes an issue, the rest still load."""
    out: list[T] = []
    for line, rec in rows:
        try:
            out.append(make(line, rec))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            issues.append(
                LoadIssue(str(path), 0 if where(line) else line, where(line) + _describe(exc))
            )
    return out


def _str(rec: Any, key: str) -> str:
    value = rec[key]
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"field {key!r} must be a non-empty string")
    return _nfc(value)


def _str_list(rec: Any, key: str) -> list[str]:
    value = rec[key]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"field {key!r} must be a list of strings")
    return list(value)


def _nfc(text: str) -> str:
    # Some files mix decomposed (NFD) accents with composed ones; unify for matching.
    return unicodedata.normalize("NFC", text)


def _evidence(id_: str, text: str, title: str = "", source: str = "given") -> Evidence:
    return Evidence(id=id_, title=_nfc(title), text=_nfc(text), source=source, score=0.0)


def _logged(items: list[T], issues: list[LoadIssue]) -> list[T]:
    for issue in issues:
        log.warning("%s", issue)
    return items


# --------------------------------------------------------------------------- SciFact


def _scifact_corpus(path: Path, issues: list[LoadIssue]) -> list[Evidence]:
    def make(_: int, rec: Any) -> Evidence:
        text = " ".join(_str_list(rec, "abstract"))
        if not isinstance(rec["doc_id"], int) or not text:
            raise ValueError("doc_id must be an int and abstract non-empty")
        return _evidence(str(rec["doc_id"]), text, str(rec.get("title") or ""), "scifact")

    return _collect(_jsonl(path, issues), path, issues, make)


def load_scifact_corpus(path: str | Path | None = None, subset: bool = False) -> list[Evidence]:
    """Load SciFact abstracts as retrieval documents (malformed lines are logged and skipped).

    Args:
        path: The ``scifact`` folder (default: shared datasets).
        subset: Use ``corpus_dev_subset.jsonl`` (783 docs) instead of ``corpus.jsonl`` (5,183).

    Returns:
        One Evidence per abstract: ``id`` = ``str(doc_id)``, ``text`` = sentences joined by spaces.

    """
    file = _folder(path, "scifact") / ("corpus_dev_subset.jsonl" if subset else "corpus.jsonl")
    issues: list[LoadIssue] = []
    return _logged(_scifact_corpus(file, issues), issues)


def load_scifact(path: str | Path | None = None, split: str = "dev") -> LoadedDataset[ClaimItem]:
    """Load labelled SciFact claims with their cited abstracts as gold evidence.

    ``meta["gold_doc_ids"]`` lists the abstracts holding rationales (empty for
    NOT ENOUGH INFO claims), ``meta["cited_doc_ids"]`` all cited abstracts and
    ``meta["rationales"]`` maps doc id to rationale sentence indices.

    Args:
        path: The ``scifact`` folder (default: shared datasets).
        split: ``dev`` (300) or ``train`` (809); ``test`` is unlabelled upstream.

    Returns:
        The claims; evidence = all cited abstracts (the oracle-abstract setting).

    Raises:
        DatasetError: For an unknown split or a missing/empty file.

    """
    if split not in ("dev", "train"):
        raise DatasetError(
            f"SciFact split must be 'dev' or 'train' (test is unlabelled), got {split!r}"
        )
    folder = _folder(path, "scifact")
    issues: list[LoadIssue] = []
    corpus = {d["id"]: d for d in _scifact_corpus(folder / "corpus.jsonl", issues)}

    def make(_: int, rec: Any) -> ClaimItem:
        cited = [str(d) for d in rec["cited_doc_ids"]]
        if missing := [d for d in cited if d not in corpus]:
            raise ValueError(f"cited doc(s) {missing} not in corpus.jsonl")
        rationales = {
            str(doc): sorted({s for ev in evs for s in ev["sentences"]})
            for doc, evs in rec["evidence"].items()
        }
        return ClaimItem(
            id=str(rec["id"]),
            claim=_str(rec, "claim"),
            label=normalize_label(rec["label"]),
            evidence=[_evidence(d, corpus[d]["text"], corpus[d]["title"]) for d in cited],
            meta={
                "gold_doc_ids": sorted(rationales),
                "cited_doc_ids": cited,
                "rationales": rationales,
                "raw_label": rec["label"],
            },
        )

    claims = folder / f"claims_{split}.jsonl"
    return LoadedDataset("scifact", _collect(_jsonl(claims, issues), claims, issues, make), issues)


# --------------------------------------------------------------------------- FEVER mini

_FEVER_TOKENS = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-COLON-": ":", "_": " "}


def _fever_title(page: Any) -> str:
    title = page if isinstance(page, str) else ""
    for token, char in _FEVER_TOKENS.items():
        title = title.replace(token, char)
    return title


def _fever_corpus(path: Path, issues: list[LoadIssue]) -> list[Evidence]:
    def make(_: int, rec: Any) -> Evidence:
        return _evidence(
            _str(rec, "doc_id"), _str(rec, "text"), _fever_title(rec.get("page")), "fever"
        )

    return _collect(_jsonl(path, issues), path, issues, make)


def load_fever_mini_corpus(path: str | Path | None = None) -> list[Evidence]:
    """Load the 293 FEVER evidence sentences of ``fever_rag_mini`` as retrieval documents.

    Args:
        path: The ``fever/fever_rag_mini`` folder (default: shared datasets).

    Returns:
        One Evidence per sentence; ``title`` is the Wikipedia page ("" when ambiguous).

    """
    issues: list[LoadIssue] = []
    return _logged(
        _fever_corpus(_folder(path, "fever/fever_rag_mini") / "corpus.jsonl", issues), issues
    )


def load_fever_mini(path: str | Path | None = None) -> LoadedDataset[ClaimItem]:
    """Load the 535 ``fever_rag_mini`` claims with their gold sentence as evidence.

    Args:
        path: The ``fever/fever_rag_mini`` folder (default: shared datasets).

    Returns:
        Claims with ``meta["gold_doc_ids"]`` (empty for NOT ENOUGH INFO) and ``evidence_pages``.

    """
    folder = _folder(path, "fever/fever_rag_mini")
    issues: list[LoadIssue] = []
    corpus = {d["id"]: d for d in _fever_corpus(folder / "corpus.jsonl", issues)}

    def make(_: int, rec: Any) -> ClaimItem:
        gold = _str_list(rec, "gold_doc_ids")
        if missing := [d for d in gold if d not in corpus]:
            raise ValueError(f"gold doc(s) {missing} not in corpus.jsonl")
        return ClaimItem(
            id=str(rec["id"]),
            claim=_str(rec, "claim"),
            label=normalize_label(rec["label"]),
            evidence=[_evidence(d, corpus[d]["text"], corpus[d]["title"]) for d in gold],
            meta={
                "gold_doc_ids": gold,
                "evidence_pages": rec.get("evidence_pages", []),
                "origin": rec.get("source"),
            },
        )

    claims = folder / "claims.jsonl"
    return LoadedDataset(
        "fever-mini", _collect(_jsonl(claims, issues), claims, issues, make), issues
    )


# --------------------------------------------------------------------------- AVeriTeC


def _averitec_answer(ans: Any) -> str:
    text = f"A: {_str(ans, 'answer')}"
    explanation = ans.get("boolean_explanation")
    return (
        f"{text} ({explanation})" if isinstance(explanation, str) and explanation.strip() else text
    )


def load_averitec(path: str | Path | None = None, split: str = "dev") -> LoadedDataset[ClaimItem]:
    """Load AVeriTeC claims (dev by default) with their gold question-answer pairs as evidence.

    Each question becomes one Evidence: id ``{claim_id}-qa{i}``, title = question,
    text ``"Q: <question> A: <answer> [A: <answer>...]"`` (Boolean answers keep
    their explanation in parentheses). ``dev.json`` has no ids, so the claim id
    is its 0-based index in the file. Other fields go to ``meta``.

    Args:
        path: The ``averitec`` folder (default: shared datasets), or a split's JSON file.
        split: Which ``<split>.json`` of the folder to read (``dev``, ``train``); only dev
            is shipped here.

    Returns:
        For dev, 500 claims over four labels (CONFLICTING included).

    Raises:
        DatasetError: If the file is missing, empty, invalid or not a list.

    """
    given = Path(path) if path is not None else None
    if given is not None and given.suffix == ".json":
        file = given
    else:
        file = _folder(path, "averitec") / f"{split}.json"
    data = _read_json(file)
    if not isinstance(data, list):
        raise DatasetError(f"{file}: expected a JSON list of claims")

    def make(idx: int, rec: Any) -> ClaimItem:
        evidence = []
        for i, qa in enumerate(rec["questions"]):
            answers = " ".join(_averitec_answer(a) for a in qa["answers"])
            question = _str(qa, "question")
            evidence.append(_evidence(f"{idx}-qa{i}", f"Q: {question} {answers}", question))
        meta = {k: v for k, v in rec.items() if k not in ("claim", "label", "questions")}
        return ClaimItem(
            str(idx),
            _str(rec, "claim"),
            normalize_label(rec["label"]),
            evidence,
            meta | {"raw_label": rec["label"]},
        )

    issues: list[LoadIssue] = []
    items = _collect(enumerate(data), file, issues, make, lambda i: f"record {i}: ")
    return LoadedDataset("averitec", items, issues)


# --------------------------------------------------------------------------- RAMDocs

RAMDOCS_DOC_TYPES = ("correct", "misinfo", "noise")


def load_ramdocs(path: str | Path | None = None) -> LoadedDataset[QAItem]:
    """Load RAMDocs test questions with their correct / misinformation / noise documents.

    Args:
        path: The ``ramdocs`` folder (default: shared datasets).

    Returns:
        500 QA items; document ids are ``{qid}-doc{j}``, types in ``doc_types``.

    """
    file = _folder(path, "ramdocs") / "RAMDocs_test.jsonl"

    def make(line: int, rec: Any) -> QAItem:
        qid = str(line - 1)
        docs, types, answers = [], [], []
        for j, doc in enumerate(rec["documents"]):
            if doc["type"] not in RAMDOCS_DOC_TYPES:
                raise ValueError(f"document {j}: unknown type {doc['type']!r}")
            docs.append(_evidence(f"{qid}-doc{j}", _str(doc, "text")))
            types.append(str(doc["type"]))
            answers.append(str(doc.get("answer", "")))
        return QAItem(
            id=qid,
            question=_str(rec, "question"),
            documents=docs,
            doc_types=types,
            gold_answers=_str_list(rec, "gold_answers"),
            wrong_answers=_str_list(rec, "wrong_answers"),
            meta={"disambig_entity": rec.get("disambig_entity", []), "doc_answers": answers},
        )

    issues: list[LoadIssue] = []
    return LoadedDataset("ramdocs", _collect(_jsonl(file, issues), file, issues, make), issues)


# --------------------------------------------------------------------------- atomic claims


def load_factool_qa(path: str | Path | None = None) -> LoadedDataset[AtomicClaimItem]:
    """Load FacTool knowledge-QA atomic claims (233; no evidence text is shipped).

    Args:
        path: The ``factool`` folder (default: shared datasets).

    Returns:
        Claims with id ``{response_index}-{claim_index}`` and meta ``question``,
        ``response`` and the response-level ``response_label``.

    """
    file = _folder(path, "factool") / "knowledge_qa.jsonl"

    def make(line: int, rec: Any) -> list[AtomicClaimItem]:
        context = {
            "question": _str(rec, "prompt"),
            "response": _str(rec, "response"),
            "response_label": rec.get("label"),
        }
        items = []
        for k, claim in enumerate(rec["claims"]):
            if not isinstance(claim["label"], bool):
                raise ValueError(f"claim {k}: label must be true/false, got {claim['label']!r}")
            items.append(
                AtomicClaimItem(
                    f"{line - 1}-{k}", _str(claim, "claim"), claim["label"], [], dict(context)
                )
            )
        return items

    issues: list[LoadIssue] = []
    groups = _collect(_jsonl(file, issues), file, issues, make)
    return LoadedDataset("factool-qa", [item for group in groups for item in group], issues)


def load_factcheck_bench(path: str | Path | None = None) -> LoadedDataset[AtomicClaimItem]:
    """Load Factcheck-Bench claim factuality (subtask 4) with its evidence passages.

    Evidence = the claim's passages from subtask 3 (ids ``fcb-ev{n}``, shared by
    identical passages) with their stance in ``meta["evidence_stances"]``.
    ``meta`` also holds the prompt (``question``), ``response`` and ``revised_claim``.
    Claims labelled ``not_enough_evidence`` (30) have no boolean label and are
    left out (recorded in ``notes``).

    Args:
        path: The ``factcheck_bench`` folder (default: shared datasets).

    Returns:
        631 claims (472 true / 159 false).

    """
    folder = _folder(path, "factcheck_bench")
    issues: list[LoadIssue] = []
    passage_ids: dict[str, str] = {}
    passages: dict[str, list[tuple[Evidence, str]]] = {}
    stance_file = folder / "subtask3_claim_evidence_stance.jsonl"
    for line, rec in _jsonl(stance_file, issues):
        if not (isinstance(rec.get("evidence"), str) and isinstance(rec.get("claim"), str)):
            issues.append(LoadIssue(str(stance_file), line, "needs string 'claim' and 'evidence'"))
            continue
        pid = passage_ids.setdefault(rec["evidence"], f"fcb-ev{len(passage_ids)}")
        passages.setdefault(_nfc(rec["claim"].strip()), []).append(
            (_evidence(pid, rec["evidence"]), str(rec.get("stance")))
        )
    context: dict[str, dict[str, Any]] = {}
    for _, rec in _jsonl(folder / "factcheck-GPT-benchmark.jsonl", issues):
        ctx = {
            "question": rec.get("prompt"),
            "response": rec.get("response"),
            "response_factuality": rec.get("response_factuality"),
        }
        sentences = rec.get("sentences")
        for sentence in sentences.values() if isinstance(sentences, dict) else ():
            for claim in sentence.get("claims", []) if isinstance(sentence, dict) else ():
                context.setdefault(_nfc(str(claim).strip()), ctx)

    skipped = 0

    def make(line: int, rec: Any) -> AtomicClaimItem | None:
        nonlocal skipped
        claim, label = _str(rec, "claim"), rec["label"]
        if label == "not_enough_evidence":
            skipped += 1
            return None
        if label not in ("true", "false"):
            raise ValueError(f"unknown label {label!r}")
        pairs = passages.get(claim.strip(), [])
        meta = {
            **context.get(claim.strip(), {}),
            "revised_claim": rec.get("revised_claim"),
            "evidence_stances": [s for _, s in pairs],
        }
        return AtomicClaimItem(str(line - 1), claim, label == "true", [e for e, _ in pairs], meta)

    file = folder / "subtask4_claim_factuality.jsonl"
    items = [i for i in _collect(_jsonl(file, issues), file, issues, make) if i is not None]
    notes = [f"left out {skipped} claims labelled not_enough_evidence"] if skipped else []
    return LoadedDataset("factcheck-bench", items, issues, notes)


# --------------------------------------------------------------------------- PubMedQA


def load_pubmedqa(path: str | Path | None = None, split: str = "all") -> LoadedDataset[ClaimItem]:
    """Load PubMedQA PQA-L questions with their abstract sections as evidence.

    The question stands in for the claim and the answer is mapped
    yes -> SUPPORTS, no -> REFUTES, maybe -> NOT ENOUGH INFO (``PUBMEDQA_LABELS``);
    the original answer is kept in ``meta["answer"]``. Evidence ids are
    ``{pmid}-c{j}`` with the section label (BACKGROUND, RESULTS...) as title.

    Args:
        path: The ``pubmedqa`` folder (default: shared datasets).
        split: ``all`` (1,000) or ``test`` (the official 500 of ``test_ground_truth.json``).

    Returns:
        The questions, keyed by PMID.

    Raises:
        DatasetError: For an unknown split or a missing/empty/invalid file.

    """
    folder = _folder(path, "pubmedqa")
    file = folder / "ori_pqal.json"
    data = _read_json(file)
    if not isinstance(data, dict):
        raise DatasetError(f"{file}: expected a JSON object keyed by PMID")
    if split == "test":
        test = _read_json(folder / "test_ground_truth.json")
        data = {k: v for k, v in data.items() if k in test}
    elif split != "all":
        raise DatasetError(f"PubMedQA split must be 'all' or 'test', got {split!r}")
    pmids = list(data)

    def make(idx: int, rec: Any) -> ClaimItem:
        pmid, answer = pmids[idx], rec["final_decision"]
        if answer not in PUBMEDQA_LABELS:
            raise ValueError(f"unknown answer {answer!r}")
        contexts, sections = _str_list(rec, "CONTEXTS"), _str_list(rec, "LABELS")
        evidence = [
            _evidence(f"{pmid}-c{j}", text, sec)
            for j, (text, sec) in enumerate(zip(contexts, sections, strict=True))
        ]
        meta = {
            "answer": answer,
            "long_answer": rec.get("LONG_ANSWER"),
            "year": rec.get("YEAR"),
            "meshes": rec.get("MESHES", []),
        }
        return ClaimItem(pmid, _str(rec, "QUESTION"), PUBMEDQA_LABELS[answer], evidence, meta)

    issues: list[LoadIssue] = []
    items = _collect(enumerate(data.values()), file, issues, make, lambda i: f"PMID {pmids[i]}: ")
    return LoadedDataset("pubmedqa", items, issues)


def load_pubmedqa_corpus(path: str | Path | None = None) -> list[Evidence]:
    """Load PubMedQA's abstracts as a PubMed retrieval corpus (Tool-MAD's medical RAG index).

    One document per PMID: title = the article's question-form title, text = its abstract
    sections joined. The conclusion (``LONG_ANSWER``) is left out: it states PubMedQA's answer.

    Args:
        path: The ``pubmedqa`` folder (default: shared datasets).

    Returns:
        1,000 abstracts with ids ``pubmed-{pmid}``.

    """
    loaded = load_pubmedqa(path)
    docs = [
        _evidence(
            f"pubmed-{item.id}", " ".join(e["text"] for e in item.evidence), item.claim, "pubmed"
        )
        for item in loaded.items
    ]
    return _logged(docs, loaded.issues)


# --------------------------------------------------------------------------- utilities


def sample(items: Sequence[T], limit: int | None, seed: int) -> list[T]:
    """Pick ``limit`` items at random but reproducibly, keeping their original order.

    Args:
        items: Items to sample from.
        limit: How many to keep; ``None`` (or more than available) keeps all.
        seed: Seed for ``random.Random``.

    Returns:
        The chosen items in dataset order.

    Raises:
        ValueError: If ``limit`` is negative.

    """
    if limit is None or limit >= len(items):
        return list(items)
    if limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    return [items[i] for i in sorted(random.Random(seed).sample(range(len(items)), limit))]
