"""How a debate is printed: its turns as they stream, then the verdict block or one JSON."""

from __future__ import annotations

from typing import Any

from rich.markup import escape

from factdebate.cli.console import out, print_json


def print_turn(turn: dict[str, Any], errors: list[dict[str, Any]] | None = None) -> None:
    """One transcript turn; ``errors`` (the run's so far) tell an unreadable label from none."""
    from factdebate.nodes.labelled import shown_label, without_label

    def fmt(v: Any) -> str:
        return "n/a" if v is None else f"{v:.2f}"

    evidence = (
        ", ".join(f"{e.get('title') or e.get('id')}" for e in turn.get("evidence", [])) or "-"
    )
    label = shown_label(turn, errors or [])
    out.print(
        f"[bold]Round {turn.get('round')} · {escape(str(turn.get('agent')))}[/bold] "
        f"({escape(str(turn.get('tool', '')))})"
        + (f" → [cyan]{escape(label)}[/cyan]" if label else "")
    )
    if turn.get("query"):
        out.print(f"  query: {turn['query']}", markup=False)
    out.print(f"  evidence: {evidence}", markup=False)
    answer = " ".join((without_label(str(turn.get("answer") or "")) or "(no answer)").split())
    out.print(f"  answer: {answer[:400]}{'…' if len(answer) > 400 else ''}", markup=False)
    if "faithfulness" in turn or "answer_relevance" in turn:
        out.print(
            f"  faithfulness {fmt(turn.get('faithfulness'))} · "
            f"answer relevance {fmt(turn.get('answer_relevance'))}"
        )


def print_result(result: dict[str, Any]) -> None:
    """The verdict block: verdict, who decided, justification, review, replay, cost."""
    total = result["cost"].get("total", {})
    out.rule("Verdict")
    out.print(
        f"[bold green]{escape(str(result.get('verdict') or no_verdict(result)))}[/bold green] "
        f"— stop reason: {result.get('stop_reason')}, rounds: {result.get('rounds')}"
    )
    if not result.get("verdict") and (failed := _failed_calls(result)):
        out.print(f"first failed model call: {failed[0].get('message')}", markup=False)
    decided_by = result.get("decided_by") or {}
    if decided_by.get("agent"):
        out.print(
            f"decided by {decided_by['agent']} after round {decided_by.get('round')}: "
            f"{decided_by.get('detail', '')}",
            markup=False,
        )
    if screen := result.get("screen"):  # an escalation: what the screen read and why
        out.print(f"screen: {screen.get('detail', '')}", markup=False)
    if result.get("justification"):
        from factdebate.pages.debate import reasoning  # no lead-in left dangling ("Scores:")

        if shown := " ".join(reasoning(str(result["justification"])).split())[:1200]:
            out.print(shown, markup=False)
    if review := result.get("review"):  # a person approved or overruled the proposed verdict
        note = f"; note: {review['note']}" if review.get("note") else ""
        out.print(
            f"reviewed: {review.get('status')} (proposed {review.get('proposed')}) at "
            f"{review.get('at')}{note}",
            markup=False,
        )
    if replay := result.get("replay"):
        out.print(
            f"replay of thread {replay.get('parent_thread')} from {replay.get('from')} "
            f"(step {replay.get('parent_step')}), now thread {replay.get('thread')}",
            markup=False,
        )
    out.print(
        f"{'this fork: ' if replay else ''}LLM calls {total.get('llm_calls', 0)}, tokens in "
        f"{total.get('input_tokens', 0)} / out {total.get('output_tokens', 0)}; "
        f"recorded errors{' (whole thread)' if replay else ''}: {len(result['errors'])}"
    )
    if replay and "parent_cost" in replay:
        before = (replay.get("parent_cost") or {}).get("total") or {}
        out.print(
            f"parent {replay.get('parent_thread')} up to {replay.get('from')}: LLM calls "
            f"{before.get('llm_calls', 0)}, tokens in {before.get('input_tokens', 0)} / out "
            f"{before.get('output_tokens', 0)}",
            markup=False,
        )


def _failed_calls(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The run's errors for model calls that got no reply."""
    from factdebate.nodes.labelled import NO_REPLY_KINDS

    return [e for e in result.get("errors") or [] if e.get("kind") in NO_REPLY_KINDS]


def no_verdict(result: dict[str, Any]) -> str:
    """What the verdict line says when there is none: why, as far as the errors tell.

    "unparseable" only when a reply came and could not be read; calls that got no reply are
    said so, and a budget stop by its name.
    """
    kinds = {e.get("kind") for e in result.get("errors") or []}
    failed = _failed_calls(result)
    if result.get("stop_reason") == "budget_exhausted":
        return "NO VERDICT (budget exhausted)"
    if failed and "parse_error" not in kinds:
        return f"NO VERDICT (no reply from the model: {len(failed)} failed call(s))"
    if failed:
        return "NO VERDICT (some model calls failed, other replies were unreadable)"
    if "parse_error" in kinds:
        return "NO VERDICT (unparseable)"
    return "NO VERDICT"


def show_final(result: dict[str, Any], as_json: bool) -> None:
    """Print a result: one JSON object, or the verdict block."""
    if as_json:
        print_json(result)
    else:
        print_result(result)


def without_given(result: dict[str, Any], docs: list[Any] | None) -> dict[str, Any]:
    """``result`` less a top-level copy of the caller's own ``--documents``.

    The text is in the transcript's evidence where an agent read it, and in the caller's file.
    """
    if not docs:
        return result
    given = {str(d.get("id")) for d in docs}

    def echoed(value: Any) -> bool:
        return isinstance(value, list) and all(
            isinstance(d, dict) and str(d.get("id")) in given for d in value
        )

    return {k: v for k, v in result.items() if k not in ("documents", "evidence") or not echoed(v)}
