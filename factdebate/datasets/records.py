"""Dataset records, verdict labels and their mapping, the dataset error, sampling and data root."""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from factdebate.tools.core.errors import FactDebateError
from factdebate.tools.core.home import home_dir
from factdebate.tools.core.records import Evidence

T = TypeVar("T")

SUPPORTS = "SUPPORTS"
REFUTES = "REFUTES"
NOT_ENOUGH_INFO = "NOT ENOUGH INFO"
CONFLICTING = "CONFLICTING"
LABELS: tuple[str, ...] = (SUPPORTS, REFUTES, NOT_ENOUGH_INFO, CONFLICTING)
THREE_WAY: tuple[str, ...] = (SUPPORTS, REFUTES, NOT_ENOUGH_INFO)
UNKNOWN = "unknown"  # the gold answer of a question its context cannot answer (FaithEval)


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


class DatasetError(FactDebateError, ValueError):
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
        name: Dataset name (its key in ``CATALOG`` when read with the catalog's loader).
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


BESIDE_CHECKOUT = Path(__file__).resolve().parents[2].parent / "shared" / "datasets"
"""The read-only ``shared/datasets`` folder beside a checkout (a fresh clone has none)."""


def datasets_root(folder: str | None = None) -> Path:
    """Return the folder datasets are read from by default (the one holding ``folder``).

    ``$FACTDEBATE_DATASETS`` when set; else ``datasets/`` in the factdebate home, where
    ``factdebate datasets get`` puts them; else, for a dataset the home does not hold (its
    folder missing or empty; without ``folder``: when the home holds none yet), a checkout's
    ``shared/datasets`` folder beside it when that folder has it.
    """
    home = download_root()
    if os.environ.get("FACTDEBATE_DATASETS"):
        return home
    beside = BESIDE_CHECKOUT
    if folder is None:
        return beside if not home.is_dir() and beside.is_dir() else home
    held = (home / folder).is_dir() and any((home / folder).iterdir())
    return beside if not held and (beside / folder).exists() else home


def download_root() -> Path:
    """Return where ``factdebate datasets get`` writes.

    ``$FACTDEBATE_DATASETS`` when set, else ``datasets/`` in the factdebate home; never the
    folder beside a checkout, which is read only.
    """
    explicit = os.environ.get("FACTDEBATE_DATASETS")
    return Path(explicit) if explicit else home_dir() / "datasets"


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
