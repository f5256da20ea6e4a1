"""AVeriTeC: real-world claims with gold question-answer evidence, over four labels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from factdebate.datasets.reading import collect, data_folder, make_evidence, read_json, str_field
from factdebate.datasets.records import (
    ClaimItem,
    DatasetError,
    LoadedDataset,
    LoadIssue,
    normalize_label,
)


def _averitec_answer(ans: Any) -> str:
    text = f"A: {str_field(ans, 'answer')}"
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
        file = data_folder(path, "averitec") / f"{split}.json"
    data = read_json(file)
    if not isinstance(data, list):
        raise DatasetError(f"{file}: expected a JSON list of claims")

    def make(idx: int, rec: Any) -> ClaimItem:
        evidence = []
        for i, qa in enumerate(rec["questions"]):
            answers = " ".join(_averitec_answer(a) for a in qa["answers"])
            question = str_field(qa, "question")
            evidence.append(make_evidence(f"{idx}-qa{i}", f"Q: {question} {answers}", question))
        meta = {k: v for k, v in rec.items() if k not in ("claim", "label", "questions")}
        return ClaimItem(
            str(idx),
            str_field(rec, "claim"),
            normalize_label(rec["label"]),
            evidence,
            meta | {"raw_label": rec["label"]},
        )

    issues: list[LoadIssue] = []
    items = collect(enumerate(data), file, issues, make, lambda i: f"record {i}: ")
    return LoadedDataset("averitec", items, issues)
