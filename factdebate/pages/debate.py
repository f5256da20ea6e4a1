"""One self-contained HTML page showing a debate result: verdict, rounds, evidence, cost."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape

from factdebate.nodes.review import proposed_of
from factdebate.nodes.tool_mad.gate import below, gate_thresholds
from factdebate.prompts.labels import LABEL_SPELLINGS, spelling_key
from factdebate.tools.core.files import OutputTargetError, check_target, write_atomic
from factdebate.tools.core.secrets import redact

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
    "screen_agreed": "the screen's answers agreed, so no debate was needed (an escalation)",
}
# Turns of these agents are shown beside the rounds, not as one of the debaters' columns.
_NOT_DEBATERS = {"moderator", "aggregator"}
# Context fields shown next to the scores they bound.
THRESHOLD_FIELDS = ("faithfulness_threshold", "relevance_threshold", "confidence_threshold")
DOC_CHARS = 3000  # characters of one document's text shown on a page (the rest is counted)
# Labels written in bold (``**SUPPORTS**``) are shown as label badges; these add the jury's.
_EXTRA_LABELS = {"TRUE": "TRUE", "FALSE": "FALSE", "FACTUAL": "FACTUAL"}
_BOLD = re.compile(r"\*\*(.+?)\*\*", re.DOTALL)
# A line that only restates the label: markdown, a short lead-in ("Verdict:") and the label.
_LEAD_IN = re.compile(r"^[\s#>*_`-]*(?:[A-Za-z]+(?: [A-Za-z]+)?\s*[:=-]\s*)?")
# Scores and their definitions (RAGAS): shown on 0-1; a value outside is clamped, and said so.
SCORE_NAMES = {"faithfulness": "faithfulness", "answer_relevance": "answer relevance"}
SCORE_NOTE = (
    "RAGAS faithfulness is the share of the answer's statements the documents support (0 to "
    "1); RAGAS answer relevancy is the mean cosine similarity between the claim and questions "
    "written back from the answer, reported on 0 to 1, so a negative mean is shown as 0.00 "
    "with its raw value beside it."
)


@cache
def environment() -> jinja2.Environment:
    """The templates of the report pages, every value HTML-escaped unless marked safe."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("factdebate.pages", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["prose"] = prose
    env.filters["label_class"] = label_class
    return env


def canonical_label(text: str) -> str | None:
    """The label ``text`` spells (``Supported`` -> ``SUPPORTS``), or None when it is none."""
    key = spelling_key(text)
    return LABEL_SPELLINGS.get(key) or _EXTRA_LABELS.get(key)


def label_class(value: str | None) -> str:
    """CSS class of a label badge (``none`` when there is no label)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", value) if value else "none"


def _badge(label: str) -> str:
    return f'<span class="label {label_class(label)}">{escape(label)}</span>'


def prose(text: object) -> Markup:
    """Model text as safe HTML: escaped, ``**LABEL**`` as a label badge, other bold as bold."""
    escaped = str(escape("" if text is None else str(text)))

    def bold(match: re.Match[str]) -> str:
        label = canonical_label(html.unescape(match.group(1)))
        return _badge(label) if label else f"<strong>{match.group(1)}</strong>"

    return Markup(_BOLD.sub(bold, escaped))


def _restates_label(line: str) -> bool:
    """Whether a line only names a label (``**SUPPORTS**``, ``Verdict: Refuted``)."""
    for core in (line, _LEAD_IN.sub("", line, count=1)):
        core = core.strip().strip("*_`.!#> ")
        if core and canonical_label(core) is not None:
            return True
    return False


def _dangling(line: str) -> bool:
    """Whether a line is only a short lead-in whose label was cut off (``The Scores:``)."""
    core = line.strip().strip("*_`#> ")
    return core.endswith(":") and len(core.split()) <= 4


def reasoning(justification: str | None) -> str:
    """The deciding agent's reasoning without the lines that only restate its label.

    A last line left as a bare lead-in (``Scores:``, once its label is gone) goes too.
    """
    lines = str(justification or "").strip().splitlines()
    while lines and (not lines[-1].strip() or _restates_label(lines[-1]) or _dangling(lines[-1])):
        lines.pop()
    while lines and (not lines[0].strip() or _restates_label(lines[0])):
        lines.pop(0)
    return "\n".join(lines).strip()


def stop_reason_words(reason: str | None) -> str:
    """The stop reason in words (the raw code when it is not a known one)."""
    if not reason:
        return "the run did not report why it stopped"
    return STOP_REASONS.get(reason, reason)


def capped(text: object, limit: int = DOC_CHARS) -> dict[str, Any]:
    """A document text cut to ``limit`` characters, and how many were left out."""
    full = " ".join(str(text or "").split())
    return {"text": full[:limit], "more": max(0, len(full) - limit)}


def _documents(docs: list[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    """Documents with their text capped for the page."""
    return [{**d, "body": capped(d.get("text"))} for d in docs or []]


def _score_metric(error: Mapping[str, Any]) -> tuple[str, bool] | None:
    """Which score a scoring error is about, and whether its message names it.

    An error of the scorer's inner steps names no score: it is placed by its stage.
    """
    stage = str(error.get("stage") or "")
    if not stage.startswith("score"):
        return None
    message = str(error.get("message") or "")
    for metric in SCORE_NAMES:
        if message.startswith(metric):
            return metric, True
    return ("answer_relevance" if "Relevance" in stage else "faithfulness"), False


def _score_reasons(errors: list[Mapping[str, Any]]) -> dict[tuple[int, str, str], str]:
    """(round, agent, score) -> the recorded reason it was not computed.

    An error naming the score wins over one of the scorer's inner steps.
    """
    reasons: dict[tuple[int, str, str], tuple[bool, str]] = {}
    for error in errors:
        found = _score_metric(error)
        if found is None:
            continue
        metric, named = found
        key = (int(error.get("round") or 0), str(error.get("agent") or ""), metric)
        message = str(error.get("message") or "").strip().removeprefix(f"{metric}:").strip()
        if key not in reasons or (named and not reasons[key][0]):
            reasons[key] = named, f"{error.get('kind') or 'error'}: {message}".rstrip(": ")
    return {key: reason for key, (_, reason) in reasons.items()}


def score_view(
    name: str, value: float | None, bound: float | None, reason: str | None = None
) -> dict[str, Any]:
    """One score as shown: clamped to 0-1 (raw value kept), its threshold, or why it is missing."""
    view: dict[str, Any] = {"name": name, "value": value, "bound": bound, "reason": reason}
    if value is None:
        return view
    shown = min(1.0, max(0.0, float(value)))
    view["shown"] = f"{shown:.2f}"
    view["raw"] = f"{float(value):.2f}" if shown != float(value) else None
    view["passes"] = None if bound is None else float(value) >= bound
    if bound is not None:
        view["bound_shown"] = f"{bound:.2f}"
        if not view["passes"] and shown < bound:  # "0.66 (threshold 0.66: below)" is false
            view["shown"], view["bound_shown"] = below(shown, bound)
    return view


def _missing_reason(turn: Mapping[str, Any], metric: str, settings: Mapping[str, Any]) -> str:
    """Why a score is absent when no error names it."""
    if settings.get("stability_score") is False:
        return "scoring is off (stability_score=false)"
    if metric == "faithfulness" and turn.get("tool") == "none":
        return "not applicable: this debater has no retrieval tool"
    if not turn.get("answer"):
        return "there was no answer to score"
    return "no reason was recorded"


def gate_in_force(settings: dict[str, Any]) -> dict[str, Any]:
    """``settings`` with Tool-MAD's thresholds as the run used them (negative: the profile's)."""
    profile = settings.get("gate_profile")
    if profile is None:
        return settings
    bounds = gate_thresholds(
        str(profile),
        str(settings.get("relevance_encoder") or ""),
        float(settings.get("faithfulness_threshold", -1.0)),
        float(settings.get("relevance_threshold", -1.0)),
    )
    return {
        **settings,
        "faithfulness_threshold": bounds.faithfulness,
        "relevance_threshold": bounds.relevance,
    }


def _turn_scores(
    turn: Mapping[str, Any],
    settings: Mapping[str, Any],
    reasons: dict[tuple[int, str, str], str],
) -> list[dict[str, Any]]:
    """The scores of a scored turn (Tool-MAD), each with its threshold or missing reason."""
    bounds = {"faithfulness": "faithfulness_threshold", "answer_relevance": "relevance_threshold"}
    views = []
    for metric, name in SCORE_NAMES.items():
        if metric not in turn:
            continue
        value = turn.get(metric)
        reason = None
        if value is None:
            key = (int(turn.get("round") or 0), str(turn.get("agent") or ""), metric)
            reason = reasons.get(key) or _missing_reason(turn, metric, settings)
        bound = settings.get(bounds[metric])
        views.append(score_view(name, value, None if bound is None else float(bound), reason))
    return views


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


def _scores_label(given: Mapping[str, Any]) -> str:
    """What the verdict's scores are: the judge's are means over the rounds, else one round's."""
    last = given.get("round")
    several = isinstance(last, int) and last > 1
    if given.get("agent") == "judge" and given.get("reason") == "round_limit" and several:
        return f"mean over rounds 1-{last}"
    return f"round {last}'s scores" if isinstance(last, int) and last > 0 else "scores"


def provenance(result: Mapping[str, Any]) -> dict[str, Any]:
    """Who decided the verdict, after which round and why (the contract's ``decided_by``).

    A result without one (an older run, a method that does not say) gives empty fields; the
    page then shows only the stop reason.
    """
    given = result.get("decided_by")
    given = dict(given) if isinstance(given, Mapping) else {}
    reason = given.get("reason")
    why = given.get("detail") or (stop_reason_words(str(reason)) if reason else None)
    scores = given.get("scores")
    return {
        "agent": str(given["agent"]) if given.get("agent") else None,
        "round": given.get("round"),
        "why": str(why) if why else None,
        "scores_label": _scores_label(given),
        "scores": {
            str(agent): [
                score_view(SCORE_NAMES.get(k, k), v, None)
                for k, v in dict(values).items()
                if v is None or isinstance(v, int | float)
            ]
            for agent, values in (scores.items() if isinstance(scores, Mapping) else [])
            if isinstance(values, Mapping)
        },
    }


def _shown_settings(settings: Mapping[str, Any]) -> dict[str, str]:
    """The run's settings as text, sorted by name, any secret-looking value redacted."""
    return {k: redact(str(v)) for k, v in sorted(settings.items()) if not k.startswith("_")}


def screen_view(screen: object) -> dict[str, Any] | None:
    """An escalation's screen as the page shows it: its labels, agreement and what followed."""
    if not isinstance(screen, Mapping):
        return None
    return {
        "labels": [label or "unreadable" for label in screen.get("labels") or []],
        "agreement": float(screen.get("agreement") or 0.0),
        "share": float(screen.get("share") or 0.0),
        "escalated": bool(screen.get("escalated")),
        "reason": str(screen.get("reason") or ""),
        "detail": str(screen.get("detail") or ""),
        "model": str(screen.get("model") or ""),
    }


def page_context(
    result: Mapping[str, Any],
    text: str,
    method: str,
    settings: Mapping[str, Any] | None = None,
    elapsed_s: float | None = None,
) -> dict[str, Any]:
    """What the debate template needs, taken from a result contract and the run's settings."""
    settings = gate_in_force(dict(settings or {}))
    errors = list(result.get("errors") or [])
    reasons = _score_reasons(errors)

    def card(turn: Mapping[str, Any]) -> dict[str, Any]:
        answer = str(turn.get("answer") or "")
        text = turn.get("reasoning") or (reasoning(answer) if turn.get("label") else answer)
        shown = {
            **turn,
            "shown_answer": text or answer,  # the label is shown beside it, as a badge
            "scores": _turn_scores(turn, settings, reasons),
        }
        if "evidence" in turn:
            shown["evidence"] = _documents(turn.get("evidence"))
        return shown

    notes = {int(n.get("round") or 0): n for n in result.get("moderator_notes") or []}
    rounds = [] if "claims" in result else _rounds(list(result.get("transcript") or []))
    claims = _claims(result)
    for slot in [*rounds, *(s for c in claims for s in c["rounds"])]:
        slot["columns"] = [card(t) for t in slot["columns"]]
    for slot in rounds:
        slot["notes"] = notes.get(slot["number"])
    cost = dict(result.get("cost") or {})
    total = cost.pop("total", None)
    return {
        "text": text,
        "method": method,
        "model": settings.get("model"),
        "verdict": proposed_of(result),  # awaiting review: the proposal, shown as one
        "answers": result.get("answers"),
        "justification": reasoning(result.get("justification")),
        "provenance": provenance(result),
        "screen": screen_view(result.get("screen")),  # escalation methods
        "review": result.get("review"),  # a person's approval or overruling (nodes/review.py)
        "replay": result.get("replay"),  # the stored debate this one was forked from
        "stop_reason": result.get("stop_reason"),
        "stop_words": stop_reason_words(result.get("stop_reason")),
        "rounds_run": result.get("rounds"),
        "rounds": rounds,
        "claims": claims,
        "dropped": result.get("dropped") or [],
        "scores": {
            k: v for k, v in (result.get("scores") or {}).items() if not isinstance(v, dict | list)
        },
        "documents": _documents(result.get("documents") or result.get("evidence")),
        "thresholds": {k: settings[k] for k in THRESHOLD_FIELDS if settings.get(k) is not None},
        "score_note": SCORE_NOTE,
        "has_scores": any(t["scores"] for slot in rounds for t in slot["columns"]),
        "settings": _shown_settings(settings),
        "elapsed_s": elapsed_s,
        "cost": cost,
        "total": total,
        "errors": errors,
    }


def render_debate_page(
    result: Mapping[str, Any],
    text: str,
    method: str,
    settings: Mapping[str, Any] | None = None,
    elapsed_s: float | None = None,
) -> str:
    """The debate page as HTML: no script, no network, every model and document text escaped.

    Args:
        result: The result contract of a run (``factdebate.api.averify`` or ``score_answer``).
        text: The claim, question or long answer that was checked.
        method: The method's registered name.
        settings: The run's settings (shown in full; model and thresholds also in place).
        elapsed_s: The run's wall-clock seconds, when known.
    """
    return (
        environment()
        .get_template("debate.html.j2")
        .render(**page_context(result, text, method, settings, elapsed_s))
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
    check_target(target, "page")  # a device, pipe or symlink is never written through
    html = redact(html)  # one last pass: no key (a model URL's, say) reaches a page
    try:
        write_atomic(target, html)  # shared like any page: 0666 less the umask
    except OSError as exc:
        raise OutputTargetError(f"cannot write page {target}: {exc.strerror or exc}") from exc
    return target


def write_debate_page(
    path: str | Path,
    result: Mapping[str, Any],
    text: str,
    method: str,
    settings: Mapping[str, Any] | None = None,
    elapsed_s: float | None = None,
) -> Path:
    """Render the debate page and write it to ``path`` (atomically); return the path."""
    return write_page(path, render_debate_page(result, text, method, settings, elapsed_s))
