"""Label, binary and retrieval metrics for fact-checking benchmarks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from factdebate.datasets import LABELS
from factdebate.nodes.self_consistency.state import SAMPLES_FAILED

UNPARSED = "UNPARSED"
VERDICTS = frozenset(LABELS)
"""Every verdict label a method gives; one outside a dataset's label set is out of labels."""


def _ratio(num: float, den: float) -> float:
    return num / den if den else 0.0


def _f1(precision: float, recall: float) -> float:
    return _ratio(2 * precision * recall, precision + recall)


def gold_labels(gold: Sequence[str], labels: Sequence[str]) -> list[str]:
    """The labels of ``labels`` (in their order) that some gold label is."""
    found = set(gold)
    return [label for label in labels if label in found]


def label_metrics(
    gold: Sequence[str],
    pred: Sequence[str | None],
    labels: Sequence[str],
    unreadable: Sequence[bool] | None = None,
) -> dict[str, Any]:
    """Score predicted labels against gold labels.

    A prediction that is not one of ``labels`` is wrong for accuracy and recall and predicts
    no class for precision (confusion column ``UNPARSED``: no label of the set). Such items
    are counted apart: ``out_of_labels``, a verdict label outside ``labels`` (CONFLICTING on
    a three-label dataset); ``unparsed``, no readable verdict (None, or not a verdict label).
    ``unreadable`` (aligned with ``gold``) marks which items without a verdict count as
    unparsed; the caller counts the others under their own names (model calls failed, a
    budget stopped them). ``macro_f1`` averages over all ``labels`` (a label never in gold nor
    predicted contributes 0.0, so it is comparable across samples); ``macro_f1_present``
    averages over ``macro_f1_labels`` only, the labels found in gold or in the predictions;
    ``macro_f1_gold`` over ``macro_f1_gold_labels``, the labels found in gold (the headline a
    comparison shows: a run right on every item scores 100 however few classes the sample
    holds). Every zero division yields 0.0.

    Args:
        gold: Gold labels, each one of ``labels``.
        pred: Predicted labels, aligned with ``gold``.
        labels: The label set (the dataset's), in reporting order.
        unreadable: Per item, whether a missing verdict is an unreadable one (default: all).

    Returns:
        ``{"n", "accuracy", "unparsed", "out_of_labels", "macro_f1", "macro_f1_present",
        "macro_f1_labels", "macro_f1_gold", "macro_f1_gold_labels",
        "per_class": {label: {"precision", "recall", "f1", "support"}},
        "confusion": {gold: {pred or "UNPARSED": count}}}``.

    Raises:
        ValueError: If lengths differ or a gold label is not in ``labels``.

    """
    if len(gold) != len(pred):
        raise ValueError(f"gold has {len(gold)} items but pred has {len(pred)}")
    flags = [True] * len(gold) if unreadable is None else list(unreadable)
    if len(flags) != len(gold):
        raise ValueError(f"gold has {len(gold)} items but unreadable has {len(flags)}")
    if unknown := sorted(set(gold) - set(labels)):
        raise ValueError(f"gold labels {unknown} are not in labels {list(labels)}")
    columns = [*labels, UNPARSED]
    confusion = {g: dict.fromkeys(columns, 0) for g in labels}
    for g, p in zip(gold, pred, strict=True):
        confusion[g][p if p in confusion else UNPARSED] += 1
    outside = [p in VERDICTS and p not in labels for p in pred]
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
    present = [label for label in labels if label in set(gold) or label in set(pred)]
    in_gold = gold_labels(gold, labels)
    return {
        "n": len(gold),
        "accuracy": _ratio(sum(confusion[g][g] for g in labels), len(gold)),
        "unparsed": sum(
            p not in labels and not out and flag
            for p, out, flag in zip(pred, outside, flags, strict=True)
        ),
        "out_of_labels": sum(outside),
        "macro_f1": _ratio(sum(float(c["f1"]) for c in per_class.values()), len(labels)),
        "macro_f1_present": _ratio(sum(float(per_class[x]["f1"]) for x in present), len(present)),
        "macro_f1_labels": present,
        "macro_f1_gold": _ratio(sum(float(per_class[x]["f1"]) for x in in_gold), len(in_gold)),
        "macro_f1_gold_labels": in_gold,
        "per_class": per_class,
        "confusion": confusion,
    }


FAILED_STOPS = frozenset({"error", "model_failure", "moderator_error", SAMPLES_FAILED})
"""Stop reasons of items whose run raised, whose deciding model calls all failed, or (a vote)
most of whose samples brought no reply."""
MODEL_CALL_FAILURES = frozenset({"model_error", "rate_limited", "timeout"})
"""Error kinds of a model call that gave no text at all."""
UNREADABLE_KINDS = frozenset({"parse_error", "moderator_unparseable", "truncated"})
"""Error kinds of a model reply that came but could not be read."""
BUDGET_STOP = "budget_exhausted"


def failed_item(row: Mapping[str, Any]) -> bool:
    """Whether a result row got no verdict because its run failed, not because of a reply.

    Failed: the run raised (``error``), every agent call failed (``model_failure``), the
    deciding model's calls all failed (DebateCV's ``moderator_error``), more than half of a
    self-consistency item's samples brought no reply (``samples_failed``), or the row has no
    prediction and its errors hold failed model calls but no unreadable reply. A budget stop
    is not a failure (counted as ``budget_exhausted``).
    """
    if row.get("stop_reason") in FAILED_STOPS:
        return True
    if row.get("prediction") is not None or row.get("stop_reason") == BUDGET_STOP:
        return False
    kinds = {str(e.get("kind")) for e in row.get("errors") or [] if isinstance(e, Mapping)}
    return bool(kinds & MODEL_CALL_FAILURES) and not kinds & UNREADABLE_KINDS


def failed_calls(row: Mapping[str, Any]) -> int:
    """The row's model calls that brought no reply (one error record each), apart from its cost.

    Such a call still counts in the row's ``llm_calls`` (each attempt was paid for), so a
    comparison shows them beside the calls: compute spent is not compute that answered.
    """
    errors = row.get("errors") or []
    return sum(isinstance(e, Mapping) and e.get("kind") in MODEL_CALL_FAILURES for e in errors)


def answered_rows(rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The rows of items that were answered (not ``failed_item``): what the scores are over.

    A failed item (its model calls brought no reply, or its run raised) is a fault, never a
    wrong answer: it counts in ``coverage`` and in the cost, not in accuracy or its intervals.
    """
    return [r for r in rows if not failed_item(r)]


def coverage(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``answered`` (items not failed) and ``coverage`` (answered / all items; 0.0 for none)."""
    answered = len(answered_rows(rows))
    return {"answered": answered, "coverage": _ratio(answered, len(rows))}


def unreadable_flags(rows: Sequence[Mapping[str, Any]]) -> list[bool]:
    """Per row, whether a missing verdict counts as unparsed (not failed, not budget-stopped)."""
    return [not failed_item(r) and r.get("stop_reason") != BUDGET_STOP for r in rows]


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
