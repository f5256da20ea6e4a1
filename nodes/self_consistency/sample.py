"""Fan out k independent samples of a single-agent step, each under its own name.

The step is the sampled method's own node (``graphs/`` hands it in), so a sample makes
exactly the call that method makes: same prompt, parser and settings, but for its sampling
seed (``sample_seed``): k calls of one prompt under one seed would come back alike.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Awaitable, Callable
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import Send

from factdebate.nodes.claims import clean_claim
from factdebate.nodes.common import Node, settings
from factdebate.nodes.context import Context
from factdebate.nodes.labelled import NO_REPLY_KINDS
from factdebate.nodes.self_consistency.state import (
    INPUT_KEYS,
    Sample,
    SampleTask,
    SelfConsistencyState,
)
from factdebate.nodes.state import Turn
from factdebate.tools.core.records import ErrorRecord

Step = Callable[[Any, Runtime[Any]], Awaitable[dict[str, Any]]]
"""A single-agent node: ``(state, runtime) -> update`` with the contract keys."""


def sample_seed(seed: int, sample: int) -> int:
    """The sampling seed of sample ``sample`` of a run seeded ``seed`` (-1, none sent, stays)."""
    if seed < 0:
        return seed
    digest = hashlib.sha256(f"{seed}|sample|{sample}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % 1_000_000


def agent_name(sample: int) -> str:
    """The transcript and error name of sample ``sample`` (``sample_3``)."""
    return f"sample_{sample}"


async def prepare_claim(state: SelfConsistencyState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Check the claim once, before k samples read it."""
    ctx = settings(runtime, Context)
    return {"claim": clean_claim(state.get("claim"), ctx.max_claim_chars)}


def make_fan_out(cls: type[Context], end: str) -> Callable[..., list[Send] | str]:
    """Router sending ``k`` sample tasks, or going to ``end`` when the run already stopped."""

    def fan_out(state: SelfConsistencyState, runtime: Runtime[Any]) -> list[Send] | str:
        if state.get("stop_reason"):  # e.g. no documents: nothing to sample
            return end
        ctx = settings(runtime, cls)
        inputs = {key: state[key] for key in INPUT_KEYS if key in state}  # type: ignore[literal-required]
        k: int = getattr(ctx, "k")  # noqa: B009 - a field the catalog adds to the class
        return [Send("sample", SampleTask(sample=i, inputs=inputs)) for i in range(1, k + 1)]

    return fan_out


def make_sampler(step: Step, cls: type[Context]) -> Node:
    """Node running ``step`` once for one sample and filing its outcome under the sample's name.

    Its turns and errors are renamed ``sample_N``; an unreadable answer stays unreadable
    (verdict None, its error kept) and so casts no vote. A sample without a verdict whose
    model call brought no reply (an error of a ``NO_REPLY_KINDS`` kind) is marked ``failed``:
    the vote counts those apart (see ``vote.MAX_FAILED_SHARE``).
    """

    async def sample(state: SampleTask, runtime: Runtime[Any]) -> dict[str, Any]:
        number = state["sample"]
        base = settings(runtime, cls)
        ctx = dataclasses.replace(base, sampling_seed=sample_seed(base.sampling_seed, number))
        name = agent_name(number)
        update = await step(dict(state["inputs"]), runtime.override(context=ctx))
        turns = [Turn(**{**t, "agent": name}) for t in update.get("transcript", [])]  # type: ignore[typeddict-item]
        errors = [ErrorRecord(**{**e, "agent": name}) for e in update.get("errors", [])]  # type: ignore[typeddict-item]
        verdict = update.get("verdict")
        outcome = Sample(
            sample=number,
            verdict=verdict,
            justification=str(update.get("justification") or ""),
            failed=verdict is None and any(e.get("kind") in NO_REPLY_KINDS for e in errors),
        )
        if "answers" in update:
            outcome["answers"] = list(update["answers"] or [])
        return {
            "samples": [outcome],
            "transcript": turns,
            "cost": update.get("cost", {}),
            "errors": errors,
        }

    return sample
