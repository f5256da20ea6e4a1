"""The vote: the most frequent readable verdict wins; a tie goes to the earliest sample.

Tie rule: among the verdicts tied for the most votes, the one cast by the lowest-numbered
sample wins. Sample numbers are fixed when the samples are sent, not by the order they
finish, so the rule is deterministic; as the samples are independent and identically drawn,
it picks among the tied verdicts as a fair coin would (no label is favoured, unlike a fixed
NOT ENOUGH INFO). Unreadable samples (verdict None) cast no vote; none readable, no verdict.
A vote counts only what was said: when more than half of the k samples failed (their model
call brought no reply: a timeout, a refused or rate-limited call), the item has no verdict and
stops as ``samples_failed``, a failed item in the benchmark, whatever the few answers said
(``MAX_FAILED_SHARE``). Exactly half failed still votes, over the half that answered.
Answer datasets vote over answer sets: two samples agree when their answers are the same once
normalised (``normalize_answer``), whatever their order or spelling.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from factdebate.nodes.self_consistency.sample import agent_name
from factdebate.nodes.self_consistency.state import SAMPLES_FAILED, Sample, SelfConsistencyState
from factdebate.nodes.state import decided
from factdebate.tools.scoring.answers import normalize_answer

K = TypeVar("K", bound=Hashable)
VoteReason = Literal["vote", "vote_tie", "no_votes"]
AGENT = "vote"
MAX_FAILED_SHARE = 0.5
"""The share of failed samples an item may have and still be voted; above it, it fails."""


@dataclass
class Tally(Generic[K]):
    """The outcome of a vote: the winner, why, the counts and who first cast each option."""

    winner: K | None
    reason: VoteReason
    counts: dict[K, int] = field(default_factory=dict)  # in order of first vote
    first: dict[K, int] = field(default_factory=dict)  # option -> its lowest sample number
    tied: list[K] = field(default_factory=list)  # the options sharing the top count, on a tie
    unreadable: int = 0


def tally(votes: Sequence[tuple[int, K | None]]) -> Tally[K]:
    """Count ``(sample number, vote)`` pairs (None: unreadable) under the rule above."""
    counts: dict[K, int] = {}
    first: dict[K, int] = {}
    unreadable = 0
    for number, vote in sorted(votes, key=lambda pair: pair[0]):
        if vote is None:
            unreadable += 1
            continue
        counts[vote] = counts.get(vote, 0) + 1
        first.setdefault(vote, number)
    if not counts:
        return Tally(None, "no_votes", unreadable=unreadable)
    top = max(counts.values())
    leaders = [option for option, n in counts.items() if n == top]
    winner = min(leaders, key=lambda option: first[option])
    if len(leaders) == 1:
        return Tally(winner, "vote", counts, first, unreadable=unreadable)
    return Tally(winner, "vote_tie", counts, first, leaders, unreadable)


def answer_key(answers: Sequence[str]) -> tuple[str, ...]:
    """What two answer lists must share to be one vote: their normalised set."""
    return tuple(sorted({normalize_answer(a) for a in answers} - {""}))


def mostly_failed(failed: int, k: int) -> bool:
    """Whether ``failed`` of ``k`` samples is more than ``MAX_FAILED_SHARE`` of them."""
    return k > 0 and failed > MAX_FAILED_SHARE * k


def _describe(result: Tally[Any], shown: dict[Any, str], k: int, failed: int = 0) -> str:
    parts = [f"{shown[option]} x{n}" for option, n in result.counts.items()]
    if result.unreadable - failed:
        parts.append(f"unreadable x{result.unreadable - failed}")
    if failed:
        parts.append(f"no reply x{failed}")
    line = f"Votes of {k} sample(s): {', '.join(parts)}."
    if mostly_failed(failed, k):
        return (
            f"{line} {failed} of {k} samples brought no reply (more than "
            f"{MAX_FAILED_SHARE:.0%}), so the item failed: no verdict from the few that answered."
        )
    if result.reason == "no_votes":
        return f"{line} No sample could be read, so no verdict."
    winner = result.winner
    if result.reason == "vote_tie":
        names = " and ".join(shown[o] for o in result.tied)
        return (
            f"{line} Tie between {names}: the earliest sample's wins "
            f"({agent_name(result.first[winner])}: {shown[winner]})."
        )
    return f"{line} Majority: {shown[winner]}."


def _decide(
    samples: list[Sample], keys: list[Hashable | None]
) -> tuple[dict[str, Any], Sample | None]:
    """The contract keys of the vote over ``keys`` (one per sample), and the winning sample."""
    result = tally([(s["sample"], key) for s, key in zip(samples, keys, strict=True)])
    failed = sum(bool(s.get("failed")) for s in samples)
    shown: dict[Any, str] = {}
    winning: Sample | None = None
    for s, key in zip(samples, keys, strict=True):
        if key is None:
            continue
        shown.setdefault(key, str(s.get("verdict")))
        if winning is None and key == result.winner:
            winning = s  # the earliest sample casting the winning vote
    detail = _describe(result, shown, len(samples), failed)
    reason: str = result.reason
    if mostly_failed(failed, len(samples)):  # a vote of the few that answered counts nothing
        winning, reason = None, SAMPLES_FAILED
    reasoning = winning.get("justification", "") if winning is not None else ""
    update: dict[str, Any] = {
        "verdict": None if winning is None else winning.get("verdict"),
        "justification": f"{detail}\n\n{reasoning}".strip(),
        "decided_by": decided(AGENT, 1, reason, detail),
        "stop_reason": reason,
        "rounds": 1,
    }
    return update, winning


def _in_order(state: SelfConsistencyState) -> list[Sample]:
    return sorted(state.get("samples", []), key=lambda s: s["sample"])


async def vote_labels(state: SelfConsistencyState) -> dict[str, Any]:
    """Majority vote over the samples' labels (claim datasets)."""
    samples = _in_order(state)
    update, _ = _decide(samples, [s.get("verdict") for s in samples])
    return update


async def vote_answers(state: SelfConsistencyState) -> dict[str, Any]:
    """Majority vote over the samples' normalised answer sets (answer datasets)."""
    samples = _in_order(state)
    keys: list[Hashable | None] = [
        None if s.get("verdict") is None else answer_key(s.get("answers", [])) for s in samples
    ]
    update, winning = _decide(samples, keys)
    update["answers"] = list(winning.get("answers", [])) if winning is not None else []
    return update
