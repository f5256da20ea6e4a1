"""Benchmark items: a dataset's records as graph inputs with their gold, sampled and checked."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, is_dataclass
from pathlib import Path
from typing import Any

from factdebate.datasets import (
    ANSWER_TASK,
    CATALOG,
    REFUTES,
    SUPPORTS,
    AtomicClaimItem,
    ClaimItem,
    DatasetError,
    QAItem,
    dataset,
    dataset_folder,
    datasets_root,
    sample,
)
from factdebate.tools.core.records import Evidence

TEXT_KEYS = ("claim", "question")
"""Always sent to the graph; other input keys only when its input schema takes them."""


@dataclass
class BenchItem:
    """One dataset item: the graph input, the gold and any extra fields for its result row.

    Attributes:
        id: Dataset-stable identifier.
        inputs: Graph input (``claim`` + ``evidence`` or ``question`` + ``documents``); keys
            other than the text are sent only to graphs whose input schema takes them.
        gold: A canonical label (claims) or the list of correct answers (questions).
        extra: Copied into the result row (``wrong``: the misinformation answers).

    """

    id: str
    inputs: dict[str, Any]
    gold: Any
    extra: dict[str, Any] = field(default_factory=dict)

    def text(self) -> dict[str, Any]:
        """The claim or question, for its result row (auditable without the dataset)."""
        return {k: self.inputs[k] for k in TEXT_KEYS if k in self.inputs}

    def graph_input(self, accepted: set[str]) -> dict[str, Any]:
        """The input for a graph whose input schema takes ``accepted`` keys."""
        return {k: v for k, v in self.inputs.items() if k in TEXT_KEYS or k in accepted}


def _claim(id_: str, claim: str, gold: str, evidence: list[Evidence]) -> BenchItem:
    # No shipped evidence -> None (retrieve); an explicit [] would mean "debate without any".
    return BenchItem(id_, {"claim": claim, "evidence": evidence or None}, gold)


def _question(raw: QAItem) -> BenchItem:
    inputs = {"question": raw.question, "documents": list(raw.documents)}
    return BenchItem(raw.id, inputs, list(raw.gold_answers), {"wrong": list(raw.wrong_answers)})


def load_items(
    name: str,
    data_dir: Path | None,
    limit: int | None,
    seed: int,
    issues: list[str] | None = None,
    notes: list[str] | None = None,
    identity: dict[str, str] | None = None,
) -> tuple[list[BenchItem], tuple[str, ...]]:
    """Load a dataset's items (a seeded sample of ``limit``) and its label set (empty: answers).

    True/false datasets (factcheck-bench, factool-qa) map true -> SUPPORTS, false -> REFUTES.
    ``data_dir`` is the shared datasets root (the dataset's own sub-folder is appended).
    Malformed records are skipped; each is described as ``file:line: problem`` in ``issues``.
    The loader's remarks (e.g. HoVer run claim-only) go to ``notes``. The label set is the
    dataset's catalog entry's (AVeriTeC's four labels whatever the sample holds).
    ``identity`` gets ``dataset_sha256``: a fingerprint of every item the dataset loaded, before
    sampling (two runs over the same copy of a dataset share it, whatever their samples).
    """
    spec = dataset(name)
    folder = dataset_folder(name, data_dir)
    loaded = spec.load(folder) if folder is not None else spec.load()
    if issues is not None:
        issues.extend(str(issue) for issue in loaded.issues)
    if notes is not None:
        notes.extend(f"{name}: {note}" for note in loaded.notes)
    if identity is not None:
        identity["dataset_sha256"] = _fingerprint(name, loaded.items)
    items: list[BenchItem] = []
    for raw in sample(loaded.items, limit, seed):
        if isinstance(raw, ClaimItem):
            items.append(_claim(raw.id, raw.claim, raw.label, list(raw.evidence)))
        elif isinstance(raw, AtomicClaimItem):
            gold = SUPPORTS if raw.label else REFUTES
            items.append(_claim(raw.id, raw.claim, gold, list(raw.evidence)))
        elif isinstance(raw, QAItem) and spec.task == ANSWER_TASK:
            items.append(_question(raw))
        else:
            raise DatasetError(
                f"{name} holds {type(raw).__name__} items: the benchmark cannot score them"
            )
    if not items:
        raise DatasetError(f"{name}: no items to run")
    if spec.task == ANSWER_TASK:
        return items, ()
    labels = spec.labels
    if outside := sorted({str(i.gold) for i in items} - set(labels)):
        raise DatasetError(f"{name}: gold label(s) {outside} outside its labels {list(labels)}")
    return items, labels


def _fingerprint(name: str, records: list[Any]) -> str:
    """SHA-256 over a dataset's name and every loaded record, in the order loaded."""
    digest = hashlib.sha256(name.encode("utf-8") + b"\n")
    for record in records:
        fields = asdict(record) if is_dataclass(record) and not isinstance(record, type) else record
        digest.update(json.dumps(fields, sort_keys=True, default=str).encode("utf-8") + b"\n")
    return digest.hexdigest()


def data_identity(name: str, data_dir: Path | None, items: list[BenchItem]) -> dict[str, str]:
    """What identifies a run's data for resuming: the dataset's folder and a hash of its items.

    Another copy of the dataset (another folder, or other labels, claims or evidence in the
    sampled items) is another run.
    """
    root = datasets_root(CATALOG[name].folder if name in CATALOG else name)
    folder = dataset_folder(name, root if data_dir is None else data_dir)
    assert folder is not None  # a root was given
    digest = hashlib.sha256()
    for item in items:
        record = [item.id, item.gold, item.inputs, item.extra]
        digest.update(json.dumps(record, sort_keys=True, default=str).encode("utf-8") + b"\n")
    return {"folder": str(folder.resolve()), "items_sha256": digest.hexdigest()}
