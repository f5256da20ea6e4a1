"""Label, binary and retrieval metrics for fact-checking benchmarks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

UNPARSED = "UNPARSED"


def _ratio(num: float, den: float) -> float:
    return num / den if den else 0.0


def _f1(precision: float, recall: float) -> float:
    return _ratio(2 * precision * recall, precision + recall)


def label_metrics(
    gold: Sequence[str], pred: Sequence[str | None], labels: Sequence[str]
) -> dict[str, Any]:
    """Score predicted labels against gold labels.

    A prediction that is ``None`` or not one of ``labels`` counts as unparsed:
    it is wrong for accuracy and recall, and predicts no class for precision.
    Macro-F1 averages over all ``labels`` (a label never in gold nor predicted
    contributes 0.0). Every zero division yields 0.0.

    Args:
        gold: Gold labels, each one of ``labels``.
        pred: Predicted labels, aligned with ``gold``.
        labels: The label set, in reporting order.

    Returns:
        ``{"n", "accuracy", "unparsed", "macro_f1", "per_class": {label: {"precision",
        "recall", "f1", "support"}}, "confusion": {gold: {pred or "UNPARSED": count}}}``.

    Raises:
        ValueError: If lengths differ or a gold label is not in ``labels``.

    """
    if len(gold) != len(pred):
        raise ValueError(f"gold has {len(gold)} items but pred has {len(pred)}")
    if unknown := sorted(set(gold) - set(labels)):
        raise ValueError(f"gold labels {unknown} are not in labels {list(labels)}")
    columns = [*labels, UNPARSED]
    confusion = {g: dict.fromkeys(columns, 0) for g in labels}
    for g, p in zip(gold, pred, strict=True):
        confusion[g][p if p in confusion else UNPARSED] += 1
    per_class: dict[str, dict[str, float | int]] = {}
    for label in labels:
        tp = confusion[label][label]
        support = sum(confusion[label].values())
        predicted = sum(row[label] for row in confusion.values())
        precision, recall = _ratio(tp, predicted), _ratio(tp, support)
        per_class[label] = {
            "precision": precision,
            "recall": recall,
            "f1": _f1(precision, recall),
            "support": support,
        }
    return {
        "n": len(gold),
        "accuracy": _ratio(sum(confusion[g][g] for g in labels), len(gold)),
        "unparsed": sum(row[UNPARSED] for row in confusion.values()),
        "macro_f1": _ratio(sum(float(c["f1"]) for c in per_class.values()), len(labels)),
        "per_class": per_class,
        "confusion": confusion,
    }


def binary_metrics(gold: Sequence[bool], pred: Sequence[bool | None]) -> dict[str, Any]:
    """Score true/false factuality judgements, per class as in fact-checker tables.

    Args:
        gold: True when the claim is factual.
        pred: Predicted factuality; ``None`` = no usable verdict (counted wrong).

    Returns:
        ``label_metrics`` output over the classes ``"TRUE"`` and ``"FALSE"``
        (``per_class["TRUE"]`` / ``per_class["FALSE"]`` hold precision, recall, F1).

    """

    def name(value: bool | None) -> str | None:
        return None if value is None else ("TRUE" if value else "FALSE")

    return label_metrics([str(name(g)) for g in gold], [name(p) for p in pred], ["TRUE", "FALSE"])


def retrieval_metrics(
    ranked_ids: Sequence[Sequence[str]],
    gold_ids: Sequence[set[str]],
    ks: Sequence[int] = (1, 3, 10),
) -> dict[str, float | int]:
    """Recall@k and MRR@10 of ranked document ids against gold document ids.

    Recall@k is the share of a query's gold documents found in its top k, averaged
    over the queries that have at least one gold document (others are skipped).
    MRR@10 is the mean reciprocal rank of the first gold document within the top 10
    (0 if none).

    Args:
        ranked_ids: Per query, document ids best first.
        gold_ids: Per query, the set of relevant document ids.
        ks: Cut-offs for recall.

    Returns:
        ``{"recall@k": ..., "mrr@10": ..., "queries": number of scored queries}``.

    Raises:
        ValueError: If the two sequences differ in length.

    """
    if len(ranked_ids) != len(gold_ids):
        raise ValueError(
            f"ranked_ids has {len(ranked_ids)} queries but gold_ids has {len(gold_ids)}"
        )
    scored = [
        (list(ranked), gold) for ranked, gold in zip(ranked_ids, gold_ids, strict=True) if gold
    ]
    out: dict[str, float | int] = {}
    for k in ks:
        out[f"recall@{k}"] = _ratio(
            sum(len(gold & set(r[:k])) / len(gold) for r, gold in scored), len(scored)
        )
    rr = [
        next((1 / rank for rank, d in enumerate(r[:10], 1) if d in gold), 0.0) for r, gold in scored
    ]
    out["mrr@10"] = _ratio(sum(rr), len(scored))
    out["queries"] = len(scored)
    return out
