"""Escalating Tool-MAD: round 1's queries, retrievals and answers screen the claim first.

When both debaters' first answers give the same label (``screen_share`` of them), the run
stops there, unscored; otherwise round 1 goes on into Tool-MAD's own scoring, consensus
check, further rounds and judge, so no query, retrieval or answer is made twice. The graph is
Tool-MAD's own builder with the screen routed in after the round-1 answers.
"""

from __future__ import annotations

from factdebate.graphs.registry import context_class
from factdebate.graphs.tool_mad import make_builder
from factdebate.nodes.escalation.screen import make_screen_check, with_screen_model
from factdebate.nodes.tool_mad.screen import (
    EscalateToolMADOutput,
    EscalateToolMADState,
    close_unscored,
    first_answers,
)

EscalateToolMADContext = context_class("escalate-tool-mad")  # the settings class the catalog names


builder = make_builder(
    EscalateToolMADContext,
    screen=make_screen_check(EscalateToolMADContext, first_answers, close_unscored),
    screen_wrap=lambda node: with_screen_model(node, EscalateToolMADContext),
    state_schema=EscalateToolMADState,
    output_schema=EscalateToolMADOutput,
)
graph = builder.compile(name="escalate-tool-mad")
