"""LongFact: prompts to answer at length, for generating long-form answers to check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from factdebate.datasets.reading import collect, data_folder, jsonl_records, str_field
from factdebate.datasets.records import DatasetError, LoadedDataset, LoadIssue, PromptItem


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
        folder = data_folder(path, "longfact")
        files = sorted(folder.rglob("*.jsonl")) if folder.is_dir() else []
        if not files:
            raise DatasetError(f"longfact: no .jsonl files under {folder}")
    issues: list[LoadIssue] = []
    items: list[PromptItem] = []
    for file in files:

        def make(line: int, rec: Any, stem: str = file.stem) -> PromptItem:
            topic = stem.split("_", 1)[-1]
            return PromptItem(
                f"{stem}-{line}", str_field(rec, "prompt"), {"topic": topic, "file": stem}
            )

        items.extend(collect(jsonl_records(file, issues), file, issues, make))
    return LoadedDataset("longfact", items, issues)
