"""The lengths of a run's items, and how they move an estimate's input tokens.

Each call's prompt quotes the item's text (and the given documents, for a method that reads
them) once, so measured means move by how much longer or shorter a dataset's items are than
the ones they were measured on. Read with the dataset's own loader; nothing of the graphs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factdebate.datasets import DatasetError, dataset, dataset_folder, sample
from factdebate.tools.core.errors import SettingsError

KEYS = ("llm_calls", "input_tokens", "output_tokens")

NO_DOCUMENTS = frozenset({"madam-no-rag"})
"""Methods that take given documents but never show them to the model (the question only)."""


@dataclass(frozen=True)
class ItemLengths:
    """Mean tokens (characters / 4, as the measured means count them) of a run's items.

    Attributes:
        items: How many items were counted.
        text: The claim, question or answer of an item.
        documents: Every document an item ships (title and text); None: the items ship none.
    """

    items: int
    text: float
    documents: float | None


def _tokens(text: object) -> int:
    return math.ceil(len(str(text or "")) / 4)


def item_lengths(items: Sequence[Any]) -> ItemLengths:
    """The mean text and document tokens of dataset records (claims, questions, answers)."""
    texts: list[int] = []
    docs: list[int] = []
    for item in items:
        text = next(
            (getattr(item, k) for k in ("claim", "question", "prompt") if hasattr(item, k)), ""
        )
        texts.append(_tokens(text))
        shipped = getattr(item, "evidence", None) or getattr(item, "documents", None) or []
        if shipped:
            docs.append(sum(_tokens(d.get("title")) + _tokens(d.get("text")) for d in shipped))
    n = max(len(texts), 1)
    return ItemLengths(len(texts), sum(texts) / n, sum(docs) / len(docs) if docs else None)


def read_items(name: str, data_dir: Path | None, limit: int | None, seed: int) -> list[Any]:
    """The records a run would take: the dataset's seeded sample of ``limit``, as a run samples.

    Raises:
        DatasetError, OSError: the dataset's loader cannot read it.
    """
    spec = dataset(name)
    folder = dataset_folder(name, data_dir)
    loaded = spec.load(folder) if folder is not None else spec.load()
    return sample(loaded.items, limit, seed)


def run_items(
    name: str, data_dir: Path | None, limit: int | None, seed: int = 0
) -> tuple[int, ItemLengths | None, str]:
    """Items a run would take, their lengths, and why none (read with the dataset's loader).

    With ``limit`` that is the count, and a dataset that cannot be read has no lengths (the
    reason says why); without one every item is counted.

    Raises:
        SettingsError: no ``limit`` and the dataset cannot be read.
    """
    try:
        records = read_items(name, data_dir, limit, seed)
    except (DatasetError, OSError) as exc:
        reason = f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__:.200}"
        if limit is None:
            raise SettingsError(
                f"cannot count the items of {name} ({reason}): pass --limit N"
            ) from None
        return limit, None, reason
    if not records:
        return limit or 0, None, f"{name} holds no items"
    return (len(records) if limit is None else limit), item_lengths(records), ""


def reads_documents(method: str) -> bool:
    """Whether ``method``'s prompts quote the documents its items ship (catalog, no graph)."""
    from factdebate.graphs.registry import METHODS

    spec = METHODS.get(method)
    return spec is not None and bool(spec.given) and method not in NO_DOCUMENTS


def with_lengths(
    per_role: Mapping[str, Mapping[str, float]],
    reference: Mapping[str, Any] | None,
    lengths: ItemLengths | None,
    documents: bool,
) -> tuple[dict[str, dict[str, float]], float | None]:
    """Per-item means with each call's input moved by the items' length over the reference's.

    Every call quotes the item's text once, and its documents once when ``documents`` and both
    the items and the reference have some; no input goes below zero. Returns the means and
    the tokens added to each call (None: nothing to compare, the means as they are).
    """
    if lengths is None or not reference or not isinstance(reference.get("text"), int | float):
        return {r: dict(u) for r, u in per_role.items()}, None
    delta = lengths.text - float(reference["text"])
    theirs = reference.get("documents")
    if documents and lengths.documents is not None and isinstance(theirs, int | float):
        delta += lengths.documents - float(theirs)
    moved = {
        role: {
            **u,
            "input_tokens": max(
                0.0, float(u.get("input_tokens", 0)) + delta * float(u.get("llm_calls", 0))
            ),
        }
        for role, u in per_role.items()
        if role != "total"
    }
    moved["total"] = {k: sum(float(u.get(k, 0)) for u in moved.values()) for k in KEYS}
    return moved, delta


def lengths_note(
    dataset_name: str,
    lengths: ItemLengths | None,
    reference: Mapping[str, Any] | None,
    documents: bool,
    delta: float | None,
    why_not: str,
) -> str:
    """One sentence saying what the input tokens were based on."""
    if lengths is None:
        return f"Input tokens as measured: the items' lengths were not read ({why_not})."
    shown = f"{lengths.text:,.1f} tokens of text"
    if documents and lengths.documents is not None:
        shown += f" and {lengths.documents:,.0f} of documents"
    counted = f"the {lengths.items} item(s) of {dataset_name} this run takes ({shown} each)"
    if delta is None:
        return (
            f"Input tokens as measured: the means' own items' lengths are not recorded; {counted}."
        )
    theirs = reference.get("documents") if reference else None
    ref = f"{float(reference['text']):,.1f}" if reference else "?"
    after = ""
    if documents and lengths.documents is not None and isinstance(theirs, int | float):
        ref += f" and {float(theirs):,.0f}"
    elif documents and lengths.documents is not None:
        after = "; documents as measured (the means' items shipped none)"
    return (
        f"Input tokens follow {counted}, against {ref} behind the means: "
        f"{delta:+,.1f} tokens a call{after}."
    )
