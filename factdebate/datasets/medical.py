"""Medical sets: PubMedQA (questions read as claims, with its abstract corpus) and MedQA."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from factdebate.datasets.reading import (
    collect,
    data_folder,
    load_records,
    locate,
    logged,
    make_evidence,
    read_json,
    str_field,
    str_list_field,
)
from factdebate.datasets.records import (
    NOT_ENOUGH_INFO,
    REFUTES,
    SUPPORTS,
    ClaimItem,
    DatasetError,
    LoadedDataset,
    LoadIssue,
)
from factdebate.tools.core.records import Evidence

PUBMEDQA_LABELS: dict[str, str] = {"yes": SUPPORTS, "no": REFUTES, "maybe": NOT_ENOUGH_INFO}
"""PubMedQA answers mapped onto verdicts for the question read as a claim."""

MEDQA_OPTIONS = ("A", "B", "C", "D")
"""The answer options of a MedQA question, each read as a claim of its own."""

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
    folder = data_folder(path, "pubmedqa")
    file = folder / "ori_pqal.json"
    data = read_json(file)
    if not isinstance(data, dict):
        raise DatasetError(f"{file}: expected a JSON object keyed by PMID")
    if split == "test":
        test = read_json(folder / "test_ground_truth.json")
        data = {k: v for k, v in data.items() if k in test}
    elif split != "all":
        raise DatasetError(f"PubMedQA split must be 'all' or 'test', got {split!r}")
    pmids = list(data)

    def make(idx: int, rec: Any) -> ClaimItem:
        pmid, answer = pmids[idx], rec["final_decision"]
        if answer not in PUBMEDQA_LABELS:
            raise ValueError(f"unknown answer {answer!r}")
        contexts, sections = str_list_field(rec, "CONTEXTS"), str_list_field(rec, "LABELS")
        evidence = [
            make_evidence(f"{pmid}-c{j}", text, sec)
            for j, (text, sec) in enumerate(zip(contexts, sections, strict=True))
        ]
        meta = {
            "answer": answer,
            "long_answer": rec.get("LONG_ANSWER"),
            "year": rec.get("YEAR"),
            "meshes": rec.get("MESHES", []),
        }
        return ClaimItem(pmid, str_field(rec, "QUESTION"), PUBMEDQA_LABELS[answer], evidence, meta)

    issues: list[LoadIssue] = []
    items = collect(enumerate(data.values()), file, issues, make, lambda i: f"PMID {pmids[i]}: ")
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
        make_evidence(
            f"pubmed-{item.id}", " ".join(e["text"] for e in item.evidence), item.claim, "pubmed"
        )
        for item in loaded.items
    ]
    return logged(docs, loaded.issues)


# --------------------------------------------------------------------------- MedQA


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
    file = locate(
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
        question, options, answer = str_field(rec, "question"), rec["options"], rec["answer_idx"]
        if not isinstance(options, dict) or sorted(options) != list(MEDQA_OPTIONS):
            raise ValueError("options must map exactly A, B, C and D to answers")
        if answer not in options:
            raise ValueError(f"answer_idx must be one of A-D, got {answer!r}")
        qid = str(line - 1)
        return [
            ClaimItem(
                id=f"{qid}-{letter}",
                claim=f"{question} Proposed answer: {str_field(options, letter)}",
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

    return load_records("medqa", file, make)
