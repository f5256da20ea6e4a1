"""Cooperation baseline (CAMEL-style role play): a user agent directs an assistant agent.

prepare (the claim; the given evidence, or retrieved once) -> user -> assistant -> user ...
Each exchange the user gives one instruction and the assistant carries it out and ends with
a RAG-CoT label. The user ends the task (``stop_reason="task_done"``) by saying TASK DONE
once an answer exists; otherwise the conversation stops after ``max_turns`` exchanges
(``turn_limit``). The verdict is the assistant's latest label (None if it was unreadable).
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from factdebate.graphs.registry import context_class
from factdebate.nodes.debate_cv.cooperation import (
    assistant,
    route_after_assistant,
    route_after_user,
    user,
)
from factdebate.nodes.debate_cv.debate_turn import make_prepare_node
from factdebate.nodes.debate_cv.state import CooperationState, EvidenceClaimInput, EvidenceOutput
from factdebate.nodes.review import add_review, averitec_labels

CooperationContext = context_class("cooperation")  # the settings class the catalog names

builder = StateGraph(
    CooperationState,
    context_schema=CooperationContext,
    input_schema=EvidenceClaimInput,
    output_schema=EvidenceOutput,
)
FINAL = add_review(builder, averitec_labels)
builder.add_node("prepare", make_prepare_node(CooperationContext))
builder.add_node("user", user)
builder.add_node("assistant", assistant)
builder.add_edge(START, "prepare")
builder.add_edge("prepare", "user")
builder.add_conditional_edges("user", route_after_user, {"assistant": "assistant", END: FINAL})
builder.add_conditional_edges("assistant", route_after_assistant, {"user": "user", END: FINAL})

graph = builder.compile(name="cooperation")
