"""Questions with answer lists over given documents: RAMDocs, FaithEval and AmbigDocs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from factdebate.datasets.reading import (
    collect,
    data_folder,
    find_file,
    jsonl_records,
    load_records,
    locate,
    make_evidence,
    nfc,
    record_id,
    str_field,
    str_list_field,
)
from factdebate.datasets.records import UNKNOWN, DatasetError, LoadedDataset, LoadIssue, QAItem

RAMDOCS_DOC_TYPES = ("correct", "misinfo", "noise")
"""The kinds of document a RAMDocs question comes with."""

FAITHEVAL_TASKS = ("unanswerable", "inconsistent", "counterfactual")
"""FaithEval's tasks, each loaded as a dataset of its own."""

# --------------------------------------------------------------------------- RAMDocs


def load_ramdocs(path: str | Path | None = None) -> LoadedDataset[QAItem]:
    """Load RAMDocs test questions with their correct / misinformation / noise documents.

    Args:
        path: The ``ramdocs`` folder (default: shared datasets).

    Returns:
        500 QA items; document ids are ``{qid}-doc{j}``, types in ``doc_types``.

    """
    file = data_folder(path, "ramdocs") / "RAMDocs_test.jsonl"

    def make(line: int, rec: Any) -> QAItem:
        qid = str(line - 1)
        docs, types, answers = [], [], []
        for j, doc in enumerate(rec["documents"]):
            if doc["type"] not in RAMDOCS_DOC_TYPES:
                raise ValueError(f"document {j}: unknown type {doc['type']!r}")
            docs.append(make_evidence(f"{qid}-doc{j}", str_field(doc, "text")))
            types.append(str(doc["type"]))
            answers.append(str(doc.get("answer", "")))
        return QAItem(
            id=qid,
            question=str_field(rec, "question"),
            documents=docs,
            doc_types=types,
            gold_answers=str_list_field(rec, "gold_answers"),
            wrong_answers=str_list_field(rec, "wrong_answers"),
            meta={"disambig_entity": rec.get("disambig_entity", []), "doc_answers": answers},
        )

    issues: list[LoadIssue] = []
    return LoadedDataset(
        "ramdocs", collect(jsonl_records(file, issues), file, issues, make), issues
    )


# --------------------------------------------------------------------------- FaithEval


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
    return [nfc(a) for a in answers if isinstance(a, str) and a]


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
    file = find_file(path, "faitheval", task)

    def make(index: int, rec: Any) -> QAItem:
        qid = record_id(rec, index, "qid", "id")
        parts = [p.strip() for p in str_field(rec, "context").split("\n\n") if p.strip()]
        docs = [make_evidence(f"{qid}-doc{j}", p) for j, p in enumerate(parts)]
        return QAItem(
            id=qid,
            question=str_field(rec, "question"),
            documents=docs,
            doc_types=["context"] * len(docs),
            gold_answers=_faitheval_gold(rec, task),
            wrong_answers=[],
            meta={"task": task},
        )

    return load_records(f"faitheval-{task}", file, make)


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
    file = locate(path, "ambigdocs", (f"{split}.json", f"{split}.jsonl"))

    def make(index: int, rec: Any) -> QAItem:
        qid = record_id(rec, index, "qid", "id")
        docs, answers = [], []
        for j, doc in enumerate(rec["documents"]):
            ident = record_id(doc, j, "pid")
            docs.append(
                make_evidence(f"{qid}-{ident}", str_field(doc, "text"), str(doc.get("title") or ""))
            )
            answers.append(nfc(str(doc.get("answer") or "")))
        gold = list(dict.fromkeys(a for a in answers if a.strip()))
        if not gold:
            raise ValueError("no document carries an answer")
        return QAItem(
            id=qid,
            question=str_field(rec, "question"),
            documents=docs,
            doc_types=["correct"] * len(docs),
            gold_answers=gold,
            wrong_answers=[],
            meta={"ambiguous_entity": rec.get("ambiguous_entity"), "doc_answers": answers},
        )

    return load_records("ambigdocs", file, make)
