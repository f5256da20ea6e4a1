"""Escalating DebateCV: RAG-CoT's reading of the evidence, sampled k times, screens the claim.

prepare (the debate's evidence set) -> screen_samples (``screen_k`` answers, one request with
``n`` where the provider takes it) -> screen: unanimous (``screen_share`` of the answers) =
done; else DebateCV's own debate and moderator over the same evidence.
"""

from __future__ import annotations

from factdebate.graphs.debate_cv import make_builder
from factdebate.graphs.registry import context_class
from factdebate.nodes.debate_cv.screen import (
    EscalateDebateCVOutput,
    EscalateDebateCVState,
    make_screen_sampler,
    screen_answers,
    screen_settled,
)
from factdebate.nodes.escalation.screen import make_screen_check

EscalateDebateCVContext = context_class(
    "escalate-debate-cv"
)  # the settings class the catalog names


builder = make_builder(
    EscalateDebateCVContext,
    screen=(
        make_screen_sampler(EscalateDebateCVContext),
        make_screen_check(EscalateDebateCVContext, screen_answers, screen_settled),
    ),
    state_schema=EscalateDebateCVState,
    output_schema=EscalateDebateCVOutput,
)
graph = builder.compile(name="escalate-debate-cv")
