"""One self-contained HTML page showing a debate result: verdict, rounds, evidence, cost."""

from __future__ import annotations

import html
import os
import tempfile
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

# Stop reasons in plain words (unknown ones are shown as they are).
STOP_REASONS = {
    "consensus": "the debaters agreed and their scores passed the thresholds",
    "round_limit": "the round limit was reached, so the final step decided",
    "moderator": "the moderator judged the debate settled",
    "moderator_unparseable": "the moderator's output could not be read, so there is no verdict",
    "moderator_error": "the moderator's model failed, so there is no verdict",
    "answers_stable": "no agent changed its answer from the round before",
    "no_documents": "no documents were found, so nothing was debated",
    "budget_exhausted": "the call or token budget ran out",
    "majority_tie": "the votes were tied",
    "single_answer": "one answer, no debate (a baseline)",
    "answered": "answered in one pass (a baseline)",
    "agreement": "the jury agreed",
    "scored": "every claim was judged and the answer scored",
    "no_claims": "no checkable claim was found in the answer",
    "error": "the run failed",
}
# Turns of these agents are shown beside the rounds, not as one of the debaters' columns.
_NOT_DEBATERS = {"moderator", "aggregator"}
# Context fields shown next to the scores they bound.
THRESHOLD_FIELDS = ("faithfulness_threshold", "relevance_threshold", "confidence_threshold")


@cache
def environment() -> jinja2.Environment:
    """The templates of the report pages, every value HTML-escaped unless marked safe."""
    return jinja2.Environment(
        loader=jinja2.PackageLoader("factdebate", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def stop_reason_words(reason: str | None) -> str:
    """The stop reason in words (the raw code when it is not a known one)."""
    if not reason:
        return "the run did not report why it stopped"
    return STOP_REASONS.get(reason, reason)


def _rounds(turns: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Group turns by round: debaters as columns, the aggregator's turn beside them."""
    by_round: dict[int, dict[str, Any]] = {}
    for turn in turns:
        number = int(turn.get("round") or 0)
        slot = by_round.setdefault(number, {"number": number, "columns": [], "aggregator": None})
        agent = str(turn.get("agent") or "?")
        if agent == "aggregator":
            slot["aggregator"] = turn
        elif agent not in _NOT_DEBATERS:
            slot["columns"].append(turn)
    return [by_round[n] for n in sorted(by_round)]


def _claims(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """MAD-Fact: each claim with its jury's turns grouped by round."""
    transcript = list(result.get("transcript") or [])
    return [
        {
            **claim,
            "split": bool(result.get("split_without_model")),
            "rounds": _rounds(
                [t for t in transcript if t.get("claim_id") == claim.get("claim_id")]
            ),
        }
        for claim in result.get("claims") or []
    ]


def page_context(
    result: Mapping[str, Any],
    text: str,
    method: str,
    settings: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """What the debate template needs, taken from a result contract and the run's settings."""
    settings = dict(settings or {})
    notes = {int(n.get("round") or 0): n for n in result.get("moderator_notes") or []}
    rounds = [] if "claims" in result else _rounds(list(result.get("transcript") or []))
    for slot in rounds:
        slot["notes"] = notes.get(slot["number"])
    cost = dict(result.get("cost") or {})
    total = cost.pop("total", None)
    return {
        "text": text,
        "method": method,
        "model": settings.get("model"),
        "verdict": result.get("verdict"),
        "answers": result.get("answers"),
        "justification": result.get("justification") or "",
        "stop_reason": result.get("stop_reason"),
        "stop_words": stop_reason_words(result.get("stop_reason")),
        "rounds_run": result.get("rounds"),
        "rounds": rounds,
        "claims": _claims(result),
        "dropped": result.get("dropped") or [],
        "scores": {
            k: v for k, v in (result.get("scores") or {}).items() if not isinstance(v, dict | list)
        },
        "documents": result.get("documents") or result.get("evidence") or [],
        "thresholds": {k: settings[k] for k in THRESHOLD_FIELDS if settings.get(k) is not None},
        "cost": cost,
        "total": total,
        "errors": list(result.get("errors") or []),
    }


def render_debate_page(
    result: Mapping[str, Any],
    text: str,
    method: str,
    settings: Mapping[str, Any] | None = None,
) -> str:
    """The debate page as HTML: no script, no network, every model and document text escaped.

    Args:
        result: The result contract of a run (``factdebate.api.averify`` or ``score_answer``).
        text: The claim, question or long answer that was checked.
        method: The method's registered name.
        settings: The run's settings (model and thresholds are shown when present).
    """
    return (
        environment()
        .get_template("debate.html.j2")
        .render(**page_context(result, text, method, settings))
    )


def inline_frame(page: str, height: int = 640) -> str:
    """An iframe holding ``page`` (for notebooks: the page's styles stay inside the frame)."""
    return (
        f'<iframe srcdoc="{html.escape(page, quote=True)}" sandbox '
        f'style="width:100%;height:{int(height)}px;border:1px solid #d0d7de"></iframe>'
    )


def write_page(path: str | Path, html: str) -> Path:
    """Write ``html`` to ``path`` atomically (a temporary file, then a rename); return it.

    Raises:
        ValueError: the folder cannot be created or written.
    """
    target = Path(path).expanduser()
    tmp: str | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(html)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes it private; a page is for sharing
        os.replace(tmp, target)
    except OSError as exc:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise ValueError(f"cannot write page {target}: {exc.strerror or exc}") from exc
    return target


def write_debate_page(
    path: str | Path,
    result: Mapping[str, Any],
    text: str,
    method: str,
    settings: Mapping[str, Any] | None = None,
) -> Path:
    """Render the debate page and write it to ``path`` (atomically); return the path."""
    return write_page(path, render_debate_page(result, text, method, settings))
