"""Raw LangGraph graphs with the methods' shapes, every model call a bare sleep: the floor."""

from __future__ import annotations

import asyncio
import operator
from collections.abc import Sequence
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

TOOL_MAD_CALLS_PER_ROUND = 4
"""Dependent calls of one debater per round: query, argue, faithfulness's two steps."""


class RawState(TypedDict, total=False):
    """Round counter plus a log every node appends to."""

    round: int
    log: Annotated[list[str], operator.add]


def _calls(name: str, latency: float, calls: int = 1) -> Any:
    async def node(state: RawState) -> dict[str, Any]:
        for _ in range(calls):
            await asyncio.sleep(latency)
        return {"log": [name]}

    return node


def _next_round(latency: float) -> Any:
    async def node(state: RawState) -> dict[str, Any]:
        await asyncio.sleep(latency)
        return {"round": state.get("round", 0) + 1}

    return node


def raw_tool_mad(latency: float, rounds: int = 3) -> Any:
    """Two debaters (query -> argue -> score with 2 steps) per round, a join, then a judge."""
    builder = StateGraph(RawState)
    for agent in ("a", "b"):
        builder.add_node(f"query_{agent}", _calls(f"query_{agent}", latency))
        builder.add_node(f"argue_{agent}", _calls(f"argue_{agent}", latency))
        builder.add_node(f"score_{agent}", _calls(f"score_{agent}", latency, 2))
        builder.add_edge(START, f"query_{agent}")
        builder.add_edge(f"query_{agent}", f"argue_{agent}")
        builder.add_edge(f"argue_{agent}", f"score_{agent}")

    def next_step(state: RawState) -> Sequence[str]:
        return ["judge"] if state["round"] >= rounds else ["query_a", "query_b"]

    builder.add_node("consensus", _next_round(0.0))
    builder.add_edge(["score_a", "score_b"], "consensus")
    builder.add_conditional_edges("consensus", next_step, ["judge", "query_a", "query_b"])
    builder.add_node("judge", _calls("judge", latency))
    builder.add_edge("judge", END)
    return builder.compile(name="raw-tool-mad")


def raw_madam(latency: float, documents: int, rounds: int) -> Any:
    """One agent per document in parallel (Send), then an aggregator, for ``rounds`` rounds."""
    builder = StateGraph(RawState)

    def fan_out(state: RawState) -> list[Send]:
        return [Send("agent", {}) for _ in range(documents)]

    def again(state: RawState) -> str:
        return END if state["round"] >= rounds else "start_round"

    builder.add_node("start_round", _calls("start_round", latency, 0))
    builder.add_node("agent", _calls("agent", latency))
    builder.add_node("aggregate", _next_round(latency))
    builder.add_edge(START, "start_round")
    builder.add_conditional_edges("start_round", fan_out, ["agent"])
    builder.add_edge("agent", "aggregate")
    builder.add_conditional_edges("aggregate", again, ["start_round", END])
    return builder.compile(name="raw-madam")
