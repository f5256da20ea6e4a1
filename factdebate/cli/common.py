"""What every command shares: option help, the --progress-every option, settings checks."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import typer

from factdebate.cli.console import fail
from factdebate.cli.progress import MAX_EVERY_S, MIN_EVERY_S
from factdebate.settings import budget_names, check_method, check_settings, context_class
from factdebate.settings import parse_settings as _parse_settings
from factdebate.tools.core.errors import FactDebateError


def choices(kind: str) -> str:
    """The registered method names (``verify``: those taking a claim or question), or datasets."""
    from factdebate.graphs.registry import METHODS

    if kind == "methods":
        return ", ".join(METHODS)
    if kind == "verify":
        return ", ".join(n for n, spec in METHODS.items() if spec.input_kind != "answer")
    from factdebate.datasets import DATASETS

    return ", ".join(DATASETS)


METHOD_HELP = f"Method: {choices('methods')}."
VERIFY_METHOD_HELP = f"Method: {choices('verify')} (mad-fact: use score-answer)."
DATASET_HELP = f"Dataset: {choices('datasets')}."
MODEL_HELP = "Model for every role: local, hf:OWNER/REPO/FILE.gguf, openai:gpt-4o-mini, ..."
SET_HELP = (
    "A setting, KEY=VALUE (repeat it). Budgets per item: "
    f"{', '.join(budget_names())}. Every setting, its default and range: "
    "`factdebate settings METHOD`."
)
MAD_FACT_SET_HELP = "A MAD-Fact setting, KEY=VALUE (repeat it); all: factdebate settings mad-fact."
DEBATE_CV_SET_HELP = "A DebateCV setting, KEY=VALUE (repeat it); all: factdebate settings debate-cv"
PROGRESS_HELP = "Seconds between progress lines when stderr is not a terminal (a log file, CI)."
ProgressEvery = Annotated[
    float,
    typer.Option(
        min=MIN_EVERY_S, max=MAX_EVERY_S, envvar="FACTDEBATE_PROGRESS_EVERY", help=PROGRESS_HELP
    ),
]
"""The --progress-every option of the long-running commands."""


def parse_settings(pairs: list[str], context_cls: Any, method: str | None = None) -> dict[str, Any]:
    """Turn ``key=value`` strings into typed settings of ``context_cls`` (did-you-mean on typos)."""
    return _parse_settings(pairs, context_cls, method)


EVIDENCE_FROM_HELP = (
    "Answer every retrieval and search call from this frozen evidence (a bench run folder, an "
    "exported snapshot file or a knowledge store): no network, no index. Scope and misses: "
    "--set evidence_scope=exact|claim, --set evidence_miss=stop|live."
)
FLAG_OF = {
    "model": "--model",
    "debater_model": "--debater-model",
    "judge_model": "--judge-model",
    "max_rounds": "--rounds",
    "collection": "--collection",
    "evidence_from": "--evidence-from",
}
"""Settings that have an option of their own: an error names the option the user typed."""


def checked_settings(
    method: str,
    kind: Literal["any", "verify"],
    pairs: list[str] | None,
    flags: dict[str, Any],
    text: str | None = None,
) -> dict[str, Any]:
    """Check the method, the settings and ``text`` before the heavy imports; fail at once.

    Errors name the option typed (``--rounds``) and suggest the closest method or setting.
    Returns the typed settings (``--set`` pairs plus the options given).
    """
    from factdebate.nodes.claims import clean_claim

    try:
        check_method(method, kind)
        context_cls = context_class(method)
        settings = parse_settings(pairs or [], context_cls, method)
        settings.update({k: v for k, v in flags.items() if v is not None})
        typed = {k: FLAG_OF[k] for k, v in flags.items() if v is not None}
        context = check_settings(context_cls, settings, typed)
        if text is not None:
            clean_claim(text, context.max_claim_chars)
    except FactDebateError as exc:
        fail(str(exc))
    return settings
