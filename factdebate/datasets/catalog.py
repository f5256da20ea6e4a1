"""The dataset catalog: one entry per dataset and the lookups derived from it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from factdebate.datasets.atomic_claims import (
    load_bingcheck,
    load_factcheck_bench,
    load_factool_qa,
    load_felm,
)
from factdebate.datasets.averitec import load_averitec
from factdebate.datasets.fever import (
    load_faviq,
    load_fever_mini,
    load_fever_mini_corpus,
    load_feverous,
    load_hover,
)
from factdebate.datasets.longfact import load_longfact
from factdebate.datasets.medical import load_medqa, load_pubmedqa, load_pubmedqa_corpus
from factdebate.datasets.multi_answer import (
    FAITHEVAL_TASKS,
    load_ambigdocs,
    load_faitheval,
    load_ramdocs,
)
from factdebate.datasets.records import LABELS, THREE_WAY, DatasetError, LoadedDataset
from factdebate.datasets.scifact import load_scifact, load_scifact_corpus
from factdebate.graphs.registry import METHODS, MethodSpec, resolve
from factdebate.tools.core.records import Evidence

LABEL_TASK = "labels"
"""Claims with a gold label, scored as labels (accuracy, macro-F1)."""
ANSWER_TASK = "answers"
"""Questions with answer lists, scored by strict exact match and answer P/R/F1."""
PROMPT_TASK = "prompts"
"""Prompts without gold, answered at length by ``factdebate gen-answers``."""
TASKS = (LABEL_TASK, ANSWER_TASK, PROMPT_TASK)
"""Every task a dataset can be."""
INPUT_KIND = {LABEL_TASK: "claim", ANSWER_TASK: "question"}
"""What a method must read to run a dataset of each task (``MethodSpec.input_kind``)."""


@dataclass(frozen=True, kw_only=True)
class DatasetSpec:
    """Everything known about one dataset: how to load it, where it lives, how it is scored.

    Attributes:
        name: The dataset's name (its key in ``CATALOG``).
        load: Its loader, called with its folder (or file), or with nothing for the default
            location under the datasets root.
        task: ``LABEL_TASK``, ``ANSWER_TASK`` or ``PROMPT_TASK``.
        description: What the dataset is, in one line.
        folder: Its folder under the datasets root (default: the name).
        labels: The labels a labels dataset is scored over (default: ``THREE_WAY``); empty
            for the other tasks.
        corpus: The loader of its own retrieval corpus (called like ``load``), if any.
        corpus_of: Another dataset whose corpus it retrieves from, if any.
        shipped: Whether it is in the shared datasets folder (False: the user downloads it).

    """

    name: str
    load: Callable[..., LoadedDataset[Any]]
    task: str
    description: str
    folder: str = ""
    labels: tuple[str, ...] = ()
    corpus: Callable[..., list[Evidence]] | None = None
    corpus_of: str | None = None
    shipped: bool = True

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ValueError(f"{self.name}: task must be one of {TASKS}, got {self.task!r}")
        if self.labels and self.task != LABEL_TASK:
            raise ValueError(f"{self.name}: only a {LABEL_TASK} dataset has labels")
        if self.corpus is not None and self.corpus_of is not None:
            raise ValueError(f"{self.name}: a corpus of its own or another's, not both")
        if not self.folder:
            object.__setattr__(self, "folder", self.name)
        if self.task == LABEL_TASK and not self.labels:
            object.__setattr__(self, "labels", THREE_WAY)


_FAITHEVAL = {
    "unanswerable": "contexts that do not hold the answer (gold: unknown)",
    "inconsistent": "contexts whose parts back different answers",
    "counterfactual": "contexts that contradict common knowledge",
}

CATALOG: dict[str, DatasetSpec] = {
    spec.name: spec
    for spec in (
        DatasetSpec(
            name="scifact",
            load=load_scifact,
            task=LABEL_TASK,
            description="SciFact: scientific claims checked against the abstracts they cite",
            corpus=load_scifact_corpus,
        ),
        DatasetSpec(
            name="fever-mini",
            load=load_fever_mini,
            task=LABEL_TASK,
            description="FEVER (mini): Wikipedia claims with their gold evidence sentences",
            folder="fever/fever_rag_mini",
            corpus=load_fever_mini_corpus,
        ),
        DatasetSpec(
            name="averitec",
            load=load_averitec,
            task=LABEL_TASK,
            description="AVeriTeC: real-world claims with gold question-answer evidence",
            labels=LABELS,
        ),
        DatasetSpec(
            name="ramdocs",
            load=load_ramdocs,
            task=ANSWER_TASK,
            description="RAMDocs: ambiguous questions over correct, misinformation and noise docs",
        ),
        DatasetSpec(
            name="factcheck-bench",
            load=load_factcheck_bench,
            task=LABEL_TASK,
            description="Factcheck-Bench: true/false atomic claims of LLM answers, with evidence",
            folder="factcheck_bench",
        ),
        DatasetSpec(
            name="factool-qa",
            load=load_factool_qa,
            task=LABEL_TASK,
            description="FacTool knowledge QA: true/false atomic claims of LLM answers",
            folder="factool",
        ),
        DatasetSpec(
            name="pubmedqa",
            load=load_pubmedqa,
            task=LABEL_TASK,
            description="PubMedQA: yes/no/maybe biomedical questions read as claims",
            corpus=load_pubmedqa_corpus,
        ),
        DatasetSpec(
            name="feverous",
            load=load_feverous,
            task=LABEL_TASK,
            description="FEVEROUS: Wikipedia claims over sentences, tables and lists",
            shipped=False,
        ),
        *(
            DatasetSpec(
                name=f"faviq-{subset}",
                load=partial(load_faviq, subset=subset),
                task=LABEL_TASK,
                description=f"FAVIQ {subset.upper()}: claims from {kind} questions",
                folder="faviq",
                shipped=False,
            )
            for subset, kind in (("a", "ambiguous"), ("r", "regular"))
        ),
        DatasetSpec(
            name="medqa",
            load=load_medqa,
            task=LABEL_TASK,
            description="MedQA: USMLE questions, each answer option read as a claim",
            corpus_of="pubmedqa",
            shipped=False,
        ),
        *(
            DatasetSpec(
                name=f"faitheval-{task}",
                load=partial(load_faitheval, task=task),
                task=ANSWER_TASK,
                description=f"FaithEval {task}: {_FAITHEVAL[task]}",
                folder="faitheval",
                shipped=False,
            )
            for task in FAITHEVAL_TASKS
        ),
        DatasetSpec(
            name="ambigdocs",
            load=load_ambigdocs,
            task=ANSWER_TASK,
            description="AmbigDocs: questions about same-named entities, one answer per entity",
            shipped=False,
        ),
        DatasetSpec(
            name="bingcheck",
            load=load_bingcheck,
            task=LABEL_TASK,
            description="BingCheck: true/false claims of search-engine chat answers",
        ),
        DatasetSpec(
            name="felm-wk",
            load=load_felm,
            task=LABEL_TASK,
            description="FELM (world knowledge): true/false segments of LLM answers",
            folder="felm",
            shipped=False,
        ),
        DatasetSpec(
            name="hover",
            load=load_hover,
            task=LABEL_TASK,
            description="HoVer: many-hop Wikipedia claims, supported or not",
            shipped=False,
        ),
        DatasetSpec(
            name="longfact",
            load=load_longfact,
            task=PROMPT_TASK,
            description="LongFact: prompts asking for long answers about concepts and objects",
        ),
    )
}
"""Every dataset, by name: the benchmark ones first, then the prompt sets."""

DATASETS: dict[str, DatasetSpec] = {
    name: spec for name, spec in CATALOG.items() if spec.task in (LABEL_TASK, ANSWER_TASK)
}
"""The datasets the benchmark runs (scored as labels or as answers), by name."""

PROMPT_SETS: dict[str, DatasetSpec] = {
    name: spec for name, spec in CATALOG.items() if spec.task == PROMPT_TASK
}
"""Prompt-only datasets for generating long answers (``factdebate gen-answers``), by name."""


def dataset(name: str) -> DatasetSpec:
    """Return a dataset's catalog entry.

    Raises:
        DatasetError: If no dataset has that name (the message lists the names).

    """
    try:
        return CATALOG[name]
    except KeyError:
        raise DatasetError(
            f"unknown dataset {name!r}; choose one of: {', '.join(CATALOG)}"
        ) from None


def dataset_task(name: str) -> str:
    """Return how a dataset is used: ``labels``, ``answers`` or ``prompts``."""
    return dataset(name).task


def check_method_fits(method: str | MethodSpec, name: str) -> None:
    """Raise DatasetError when the method takes another kind of input than the dataset holds.

    Raises:
        UnknownMethodError: no such method. DatasetError: an unknown dataset, or one whose
            items the method cannot read.
    """
    spec = resolve(method)
    task = dataset_task(name)
    wanted = INPUT_KIND[task]
    if spec.input_kind != wanted:
        fitting = sorted(m for m, s in METHODS.items() if s.input_kind == wanted)
        raise DatasetError(
            f"{spec.name} takes {spec.input_kind}s but {name} holds {wanted}s (scored as {task}); "
            f"use one of: {', '.join(fitting)}"
        )


def label_set(name: str) -> tuple[str, ...]:
    """Return the labels a claim dataset is scored over: its own, whatever a sample holds.

    True/false datasets keep the three verdict labels: NOT ENOUGH INFO is a verdict the
    methods may give, scored as a wrong class rather than as outside the labels. Datasets
    that are not scored as labels have none.
    """
    return dataset(name).labels


def dataset_folder(name: str, data_dir: Path | None) -> Path | None:
    """Locate a dataset's folder under a datasets root (None: the loader's default).

    A file (one dataset's records) is handed to the loader as it is. A name outside the
    catalog is taken as its own folder.
    """
    if data_dir is None:
        return None
    if Path(data_dir).is_file():
        return Path(data_dir)
    return Path(data_dir) / (CATALOG[name].folder if name in CATALOG else name)


def corpus_source(name: str) -> str | None:
    """Return the dataset whose retrieval corpus ``name`` uses (None: it retrieves from none).

    That is the dataset itself when it has a corpus, else the one it borrows (MedQA retrieves
    PubMedQA's abstracts).
    """
    spec = dataset(name)
    return spec.name if spec.corpus is not None else spec.corpus_of


def load_corpus(name: str, data_dir: Path | None) -> list[Evidence]:
    """Load the retrieval corpus a dataset uses, from under ``data_dir`` (None: the default).

    Raises:
        DatasetError: If the dataset retrieves from no corpus (the message lists those that
            do), or the corpus cannot be read.

    """
    source = corpus_source(name)
    load = dataset(source).corpus if source is not None else None
    if source is None or load is None:
        having = [n for n in CATALOG if corpus_source(n) is not None]
        raise DatasetError(f"{name} has no retrieval corpus; choose one of: {', '.join(having)}")
    folder = dataset_folder(source, data_dir)
    return load(folder) if folder is not None else load()
