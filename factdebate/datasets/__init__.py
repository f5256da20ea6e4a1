"""Benchmark datasets by name: the loaders, their records and where each lives under the root."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from factdebate.datasets.base import (
    CONFLICTING,
    LABELS,
    NOT_ENOUGH_INFO,
    PUBMEDQA_LABELS,
    RAMDOCS_DOC_TYPES,
    REFUTES,
    SUPPORTS,
    THREE_WAY,
    AtomicClaimItem,
    ClaimItem,
    DatasetError,
    LoadedDataset,
    LoadIssue,
    QAItem,
    datasets_root,
    load_averitec,
    load_factcheck_bench,
    load_factool_qa,
    load_fever_mini,
    load_fever_mini_corpus,
    load_pubmedqa,
    load_pubmedqa_corpus,
    load_ramdocs,
    load_scifact,
    load_scifact_corpus,
    normalize_label,
    sample,
)
from factdebate.datasets.official import (
    BINGCHECK_FILES,
    FAITHEVAL_TASKS,
    HOVER_LABELS,
    MEDQA_OPTIONS,
    UNKNOWN,
    PromptItem,
    load_ambigdocs,
    load_bingcheck,
    load_faitheval,
    load_faviq,
    load_felm,
    load_feverous,
    load_hover,
    load_longfact,
    load_medqa,
)

DATASETS: dict[str, Callable[..., LoadedDataset[Any]]] = {
    "scifact": load_scifact,
    "fever-mini": load_fever_mini,
    "averitec": load_averitec,
    "ramdocs": load_ramdocs,
    "factcheck-bench": load_factcheck_bench,
    "factool-qa": load_factool_qa,
    "pubmedqa": load_pubmedqa,
    "feverous": load_feverous,
    "faviq-a": partial(load_faviq, subset="a"),
    "faviq-r": partial(load_faviq, subset="r"),
    "medqa": load_medqa,
    **{f"faitheval-{t}": partial(load_faitheval, task=t) for t in FAITHEVAL_TASKS},
    "ambigdocs": load_ambigdocs,
    "bingcheck": load_bingcheck,
    "felm-wk": load_felm,
    "hover": load_hover,
}
"""Every dataset the benchmark runs, by name; each loader takes its folder (or file)."""

SUBFOLDERS: dict[str, str] = {
    "fever-mini": "fever/fever_rag_mini",
    "factcheck-bench": "factcheck_bench",
    "factool-qa": "factool",
    "faviq-a": "faviq",
    "faviq-r": "faviq",
    **{f"faitheval-{t}": "faitheval" for t in FAITHEVAL_TASKS},
    "felm-wk": "felm",
}
"""A dataset's folder under the datasets root, where it is not the dataset's own name."""

LABEL_SETS: dict[str, tuple[str, ...]] = {"averitec": LABELS}
"""A claim dataset's label set where it is not ``THREE_WAY`` (AVeriTeC: four, CONFLICTING too)."""


def label_set(dataset: str) -> tuple[str, ...]:
    """The labels a claim dataset is scored over: its own, whatever a sample happens to hold.

    True/false datasets keep the three verdict labels: NOT ENOUGH INFO is a verdict the
    methods may give, scored as a wrong class rather than as outside the labels.
    """
    return LABEL_SETS.get(dataset, THREE_WAY)


QUESTION_SETS = frozenset({"ramdocs", "ambigdocs", *(f"faitheval-{t}" for t in FAITHEVAL_TASKS)})
"""Datasets of questions with answer lists (scored by strict EM and answer P/R/F1)."""

DOWNLOADED = frozenset(
    {"feverous", "faviq-a", "faviq-r", "medqa", "ambigdocs", "felm-wk", "hover"}
    | {f"faitheval-{t}" for t in FAITHEVAL_TASKS}
)
"""Datasets whose files the user downloads (the others are in the shared datasets folder)."""

PROMPT_SETS: dict[str, Callable[..., LoadedDataset[PromptItem]]] = {"longfact": load_longfact}
"""Prompt-only datasets for generating long answers (``factdebate gen-answers``)."""

__all__ = [
    "BINGCHECK_FILES",
    "CONFLICTING",
    "DATASETS",
    "DOWNLOADED",
    "FAITHEVAL_TASKS",
    "HOVER_LABELS",
    "LABELS",
    "LABEL_SETS",
    "MEDQA_OPTIONS",
    "NOT_ENOUGH_INFO",
    "PROMPT_SETS",
    "PUBMEDQA_LABELS",
    "QUESTION_SETS",
    "RAMDOCS_DOC_TYPES",
    "REFUTES",
    "SUBFOLDERS",
    "SUPPORTS",
    "THREE_WAY",
    "UNKNOWN",
    "AtomicClaimItem",
    "ClaimItem",
    "DatasetError",
    "LoadIssue",
    "LoadedDataset",
    "PromptItem",
    "QAItem",
    "datasets_root",
    "label_set",
    "load_ambigdocs",
    "load_averitec",
    "load_bingcheck",
    "load_factcheck_bench",
    "load_factool_qa",
    "load_faitheval",
    "load_faviq",
    "load_felm",
    "load_fever_mini",
    "load_fever_mini_corpus",
    "load_feverous",
    "load_hover",
    "load_longfact",
    "load_medqa",
    "load_pubmedqa",
    "load_pubmedqa_corpus",
    "load_ramdocs",
    "load_scifact",
    "load_scifact_corpus",
    "normalize_label",
    "sample",
]
