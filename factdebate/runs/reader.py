"""The one reader of a bench run folder: validated run.json, metrics.json and rows; it never writes.

``read_run_info`` (run.json), ``read_metrics`` (metrics.json) and ``read_result_rows``
(results.jsonl) parse each file with a size limit, refuse a FIFO or a device before opening
it, and check every field a report computes with against its bounds (counts whole and >= 0,
scores finite and within [0, 1], answer relevance, a mean cosine, within [-1, 1], ids
non-empty, labels from the verdict vocabulary). A file
that fails is a one-line ``RunReadError``; a row that fails is a ``RowProblem`` (file, line,
why) beside the rows that passed, and stays on disk exactly as it was: the command reading
it decides by its own rule whether it can go on (``RowsRead.checked``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, model_validator

from factdebate.prompts.labels import LABELS_4
from factdebate.runs.folder import RUN_FILE, RunFolderError, RunNotFoundError
from factdebate.tools.core.files import read_bounded
from factdebate.tools.core.json_text import json_problem, parse_json

METRICS_FILE = "metrics.json"
RESULTS_FILE = "results.jsonl"
MAX_RUN_BYTES = 16 * 1024**2  # largest run.json read
MAX_METRICS_BYTES = 64 * 1024**2  # largest metrics.json read
MAX_RESULTS_BYTES = 2 * 1024**3  # largest results.jsonl read
LABEL_TASK, ANSWER_TASK = "labels", "answers"  # the tasks a bench run is scored as
SHOWN_PROBLEMS = 5  # problems named in one error line


class RunReadError(RunFolderError):
    """A run file that cannot be trusted: not JSON, a field of the wrong kind or out of bounds."""


Count = Annotated[int, Field(strict=True, ge=0)]
"""A whole number >= 0 (text, a bool or a fraction is refused)."""
Amount = Annotated[float, Field(ge=0, allow_inf_nan=False)]
"""A finite number >= 0 (a mean, seconds)."""
Finite = Annotated[float, Field(allow_inf_nan=False)]
"""A finite number."""
Share = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
"""A finite score within [0, 1]."""
ROUNDING = 1e-9
"""How far past +-1 a cosine may lie by float error (identical vectors: 1.0000000000000002)."""
Cosine = Annotated[float, Field(ge=-1 - ROUNDING, le=1 + ROUNDING, allow_inf_nan=False)]
"""A finite mean cosine within [-1, 1], give or take float error (answer relevance is one)."""
Name = Annotated[str, Field(strict=True, min_length=1)]
"""Non-empty text."""
Task = Literal["labels", "answers"]


class _Model(BaseModel):
    """Every model: fields are checked, keys it does not name are kept as they are."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)


class RoleCost(_Model):
    """LLM usage of one role: whole counts."""

    llm_calls: Count = 0
    input_tokens: Count = 0
    output_tokens: Count = 0


class PerItemCost(_Model):
    """Mean usage per item."""

    llm_calls: Amount
    input_tokens: Amount
    output_tokens: Amount


class CostSummary(_Model):
    """metrics.json's ``cost``: totals, means per item and usage per role."""

    llm_calls: Count
    rejected: Count | None = None
    """Attempts refused or failed, then retried: sent to the provider, not calls."""
    input_tokens: Count
    output_tokens: Count
    per_item: PerItemCost
    per_role: dict[str, RoleCost] = {}


class Latency(_Model):
    """Seconds per item."""

    mean_s: Amount
    p50_s: Amount | None = None
    p90_s: Amount | None = None
    max_s: Amount | None = None
    sum_s: Amount | None = None


class Interval(_Model):
    """A 95 % interval: finite bounds (or none where it could not be computed)."""

    low: Finite | None = None
    high: Finite | None = None


class Majority(_Model):
    """The majority-class baseline."""

    label: Name
    accuracy: Share
    support: Count


class ClassScores(_Model):
    """One label's precision, recall and F1."""

    precision: Share
    recall: Share
    f1: Share
    support: Count


class RunRecord(_Model):
    """What ran, as recorded (the fields a report uses, each within its bounds)."""

    method: Name | None = None
    dataset: Name | None = None
    limit: Count | None = None
    seed: Count | None = None
    task: Task | None = None
    repeats: Annotated[int, Field(strict=True, ge=1)] | None = None
    concurrency: Count | None = None
    context: dict[str, Any] = {}
    data: dict[str, Any] | None = None
    provenance: dict[str, Any] | None = None
    wall_s: Amount | None = None


class RunInfo(RunRecord):
    """run.json: a run names its method and dataset."""

    method: Name
    dataset: Name


class RunMetrics(_Model):
    """metrics.json: the scores, counts, cost and latency a report and a comparison show."""

    n: Count
    task: Task = "labels"
    accuracy: Share | None = None
    macro_f1: Share | None = None
    exact_match: Share | None = None
    precision: Share | None = None
    recall: Share | None = None
    f1: Share | None = None
    unparsed: Count | None = None
    unanswered: Count | None = None
    out_of_labels: Count | None = None
    failed: Count = 0
    answered: Count | None = None
    """Items not failed: the scores are over these."""
    coverage: Share | None = None
    """``answered`` / ``n``."""
    budget_exhausted: Count | None = None
    labels: list[Name] = []
    majority: Majority | None = None
    per_class: dict[str, ClassScores] | None = None
    confusion: dict[str, dict[str, Count]] | None = None
    intervals: dict[str, Interval | None] = {}
    cost: CostSummary
    latency: Latency
    run: RunRecord = RunRecord()

    @model_validator(mode="after")
    def _headline(self) -> RunMetrics:
        name = "exact_match" if self.task == ANSWER_TASK else "accuracy"
        if getattr(self, name) is None:
            raise ValueError(f"a {self.task} run's metrics need {name}")
        return self

    def as_dict(self) -> dict[str, Any]:
        """The metrics as the JSON object they were read from (checked, never changed)."""
        return dict(self.model_dump(mode="json", exclude_unset=True))


class Turn(_Model):
    """One transcript turn: its round, label and scores."""

    round: Count | None = None
    label: str | None = None
    faithfulness: Share | None = None
    answer_relevance: Cosine | None = None


class ResultContract(_Model):
    """A row's whole result: what a calibration and a turn table read of it."""

    verdict: Any = None
    stop_reason: str | None = None
    rounds: Count | None = None
    cost: dict[str, RoleCost] = {}
    transcript: list[Turn] = []


def _verdict(value: Any, what: str) -> None:
    if value is not None and value not in LABELS_4:
        raise ValueError(f"{what} {str(value)[:40]!r} is not a verdict label")


def _answers(value: Any, what: str, none_ok: bool) -> None:
    if value is None and none_ok:
        return
    if not isinstance(value, list) or not all(isinstance(a, str) for a in value):
        raise ValueError(f"{what} must be a list of answers")


class ResultRow(_Model):
    """One results.jsonl row: an item, its gold, the prediction, its cost and its result.

    The task (validation context ``{"task": ...}``) fixes what gold and prediction are:
    verdict labels, or lists of answers; without it, gold's own kind decides.
    """

    id: Name | Annotated[int, Field(strict=True)]
    gold: Any
    prediction: Any = None
    stop_reason: str | None = None
    rounds: Count | None = None
    cost: dict[str, RoleCost] = {}
    latency_s: Amount = 0.0
    errors: list[dict[str, Any]] = []
    result: ResultContract | None = None
    repeat: Annotated[int, Field(strict=True, ge=1)] | None = None
    exact_match: Share | None = None

    @model_validator(mode="after")
    def _labels(self, info: ValidationInfo) -> ResultRow:
        task = (info.context or {}).get("task")
        if task is None:
            task = ANSWER_TASK if isinstance(self.gold, list) else LABEL_TASK
        if task == ANSWER_TASK:
            _answers(self.gold, "gold", none_ok=False)
            _answers(self.prediction, "prediction", none_ok=True)
        else:
            if not isinstance(self.gold, str):
                raise ValueError("gold must be a verdict label")
            _verdict(self.gold, "gold")
            _verdict(self.prediction, "prediction")
        return self


@dataclass(frozen=True)
class RowProblem:
    """A line of a rows file that is not a row a report may count."""

    path: Path
    line: int
    why: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.why}"


@dataclass
class RowsRead:
    """The rows that passed (the first of each id, in file order) and the lines that did not."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    problems: list[RowProblem] = field(default_factory=list)

    def checked(self, skip_bad_rows: bool, hint: str = "--skip-bad-rows") -> list[dict[str, Any]]:
        """The rows, or a refusal naming the damaged lines unless told to skip them.

        Raises:
            RunReadError: a damaged line and not ``skip_bad_rows`` (``hint`` names the way on).
        """
        if self.problems and not skip_bad_rows:
            raise RunReadError(
                f"{problems_text(self.problems)}; the file is left as it is ({hint})"
            )
        return self.rows


def problems_text(problems: Sequence[RowProblem]) -> str:
    """The damaged lines in one line: how many, and the first few with why."""
    shown = "; ".join(str(p) for p in problems[:SHOWN_PROBLEMS])
    more = f"; and {len(problems) - SHOWN_PROBLEMS} more" if len(problems) > SHOWN_PROBLEMS else ""
    return f"{len(problems)} damaged row(s): {shown}{more}"


def skipped_note(name: str, problems: Sequence[RowProblem]) -> str:
    """The note a report prints for rows it skipped (empty when none were)."""
    if not problems:
        return ""
    return f"{name}: skipped {problems_text(problems)}"


def _why(exc: ValidationError) -> str:
    """A validation failure in a few words: where and what, first errors only."""
    parts = []
    for error in exc.errors()[:3]:
        where = ".".join(str(p) for p in error["loc"]) or "row"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)


def _json(path: Path, limit: int, what: str) -> Any:
    text = read_bounded(path, limit, what, RunReadError)
    try:
        return parse_json(text)
    except json.JSONDecodeError as exc:
        raise RunReadError(f"{what} {path}: not JSON ({json_problem(exc)})") from None


M = TypeVar("M", bound=BaseModel)


def _checked(path: Path, model: type[M], limit: int, what: str, missing: str) -> M:
    """The JSON file at ``path`` as ``model``; a missing file says ``missing``."""
    if not path.exists():
        raise RunNotFoundError(missing)
    try:
        return model.model_validate(_json(path, limit, what))
    except ValidationError as exc:
        raise RunReadError(f"{what} {path}: {_why(exc)}") from None


def read_run_info(folder: Path | str) -> RunInfo:
    """The run's run.json, checked.

    Raises:
        RunNotFoundError: no run.json. RunReadError: not JSON, or a field out of bounds.
    """
    missing = f"no {RUN_FILE} in {folder}: not a bench run folder"
    return _checked(Path(folder) / RUN_FILE, RunInfo, MAX_RUN_BYTES, "run file", missing)


def read_metrics(folder: Path | str) -> RunMetrics:
    """The run's metrics.json, checked.

    Raises:
        RunNotFoundError: no metrics.json. RunReadError: not JSON, not an object, a field
            missing (``cost``, ``n``, the headline score) or out of bounds.
    """
    missing = f"no {METRICS_FILE} in {folder}: run the benchmark first"
    path = Path(folder) / METRICS_FILE
    return _checked(path, RunMetrics, MAX_METRICS_BYTES, "metrics file", missing)


def read_result_rows(path: Path | str, task: str | None = None) -> RowsRead:
    """The rows of a results.jsonl file (none when there is no file), never changing it.

    Every line is checked as a ``ResultRow`` (``task``: "labels" or "answers"); a line that
    is not one (torn, not JSON, out of bounds) or repeats an earlier row's id is a problem,
    not a row.

    Raises:
        RunReadError: the file is not a regular file, too large, or not UTF-8.
    """
    path = Path(path)
    if not path.exists():
        return RowsRead()
    text = read_bounded(path, MAX_RESULTS_BYTES, "results file", RunReadError)
    found = RowsRead()
    seen: dict[str, int] = {}
    context: Mapping[str, Any] = {"task": task}
    lines = text.split("\n")  # U+2028 stays inside a row
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            raw = parse_json(line)
        except json.JSONDecodeError as exc:
            torn = ", a torn last line" if number == len(lines) else ""
            why = f"not JSON ({json_problem(exc, line=False)}{torn})"
            found.problems.append(RowProblem(path, number, why))
            continue
        if not isinstance(raw, dict) or "id" not in raw:
            found.problems.append(RowProblem(path, number, "a row is an object with an id"))
            continue
        try:
            ResultRow.model_validate(raw, context=dict(context))
        except ValidationError as exc:
            found.problems.append(RowProblem(path, number, _why(exc)))
            continue
        key = str(raw["id"])
        if key in seen:
            found.problems.append(
                RowProblem(path, number, f"repeats the id {key[:60]!r} of line {seen[key]}")
            )
            continue
        seen[key] = number
        found.rows.append(raw)
    return found
