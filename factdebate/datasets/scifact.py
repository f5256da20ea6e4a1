"""SciFact: scientific claims checked against paper abstracts, and its abstract corpus."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from factdebate.datasets.reading import (
    collect,
    data_folder,
    jsonl_records,
    logged,
    make_evidence,
    str_field,
    str_list_field,
)
from factdebate.datasets.records import (
    ClaimItem,
    DatasetError,
    LoadedDataset,
    LoadIssue,
    normalize_label,
)
from factdebate.tools.core.records import Evidence


def _scifact_corpus(path: Path, issues: list[LoadIssue]) -> list[Evidence]:
    def make(_: int, rec: Any) -> Evidence:
        text = " ".join(str_list_field(rec, "abstract"))
        if not isinstance(rec["doc_id"], int) or not text:
            raise ValueError("doc_id must be an int and abstract non-empty")
        return make_evidence(str(rec["doc_id"]), text, str(rec.get("title") or ""), "scifact")

    return collect(jsonl_records(path, issues), path, issues, make)


def load_scifact_corpus(path: str | Path | None = None, subset: bool = False) -> list[Evidence]:
    """Load SciFact abstracts as retrieval documents (malformed lines are logged and skipped).

    Args:
        path: The ``scifact`` folder (default: shared datasets).
        subset: Use ``corpus_dev_subset.jsonl`` (783 docs) instead of ``corpus.jsonl`` (5,183).

    Returns:
        One Evidence per abstract: ``id`` = ``str(doc_id)``, ``text`` = sentences joined by spaces.

    """
    file = data_folder(path, "scifact") / ("corpus_dev_subset.jsonl" if subset else "corpus.jsonl")
    issues: list[LoadIssue] = []
    return logged(_scifact_corpus(file, issues), issues)


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
    folder = data_folder(path, "scifact")
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
            claim=str_field(rec, "claim"),
            label=normalize_label(rec["label"]),
            evidence=[make_evidence(d, corpus[d]["text"], corpus[d]["title"]) for d in cited],
            meta={
                "gold_doc_ids": sorted(rationales),
                "cited_doc_ids": cited,
                "rationales": rationales,
                "raw_label": rec["label"],
            },
        )

    claims = folder / f"claims_{split}.jsonl"
    return LoadedDataset(
        "scifact", collect(jsonl_records(claims, issues), claims, issues, make), issues
    )
