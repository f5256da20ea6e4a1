"""Tool-MAD prompts: query selection, debate turns and the judge (project wording)."""

from __future__ import annotations

from prompts.common import EVIDENCE_RULES, LABEL_INSTRUCTIONS

TOOL_DESCRIPTIONS = {
    "rag": "You consult a local document collection through dense vector retrieval.",
    "search": "You consult a search engine.",
    "none": "You have no retrieval tool and rely on what you already know.",
}

DEBATER_ROLE = """\
You take part in a fact-checking debate with one other agent. The shared aim is to agree on
the correct verdict for the claim. {tool_description}"""

FIRST_QUERY = """\
{role}

Write one search query that would find evidence to check the claim below. Output only the
query inside square brackets and nothing else. Example: for the claim "Mount Everest is in
Chile" you would write [Mount Everest location].

Claim: {claim}"""

NEXT_QUERY = """\
{role}

You may keep your previous query or write a better one, taking the other agent's answer
into account. Output only the query inside square brackets and nothing else. Example: for
the claim "Mount Everest is in Chile" you would write [Mount Everest location].

Other agent's answer: {opponent_answer}
Your previous query: {previous_query}
Claim: {claim}"""

FIRST_ARGUMENT = """\
{role}

Decide whether the claim holds, based on the documents you retrieved.
{evidence_rules}

{label_instructions}

Claim: {claim}

Documents:
{evidence}"""

NEXT_ARGUMENT = """\
{role}

Decide whether the claim holds, based on the documents you retrieved and the other agent's
previous answer. You may change your mind or defend your position.
{evidence_rules}

{label_instructions}

Claim: {claim}

Other agent's answer: {opponent_answer}

Documents:
{evidence}"""

JUDGE = """\
You are the judge of a fact-checking debate between two agents that did not reach a
reliable agreement. Decide the verdict yourself.

Each agent carries two scores averaged over the rounds, between 0 and 1 (higher is more
reliable): faithfulness says how well its answers are backed by the documents it retrieved;
answer relevance says how closely its answers address the claim. Weigh the arguments, the
evidence and these scores.
{evidence_rules}

{label_instructions}

Claim: {claim}

Debate history:
{history}

Scores:
{scores}"""


def render_debater_role(tool: str) -> str:
    """Describe a debater's role and tool."""
    return DEBATER_ROLE.format(tool_description=TOOL_DESCRIPTIONS[tool])


__all__ = [
    "EVIDENCE_RULES",
    "FIRST_ARGUMENT",
    "FIRST_QUERY",
    "JUDGE",
    "LABEL_INSTRUCTIONS",
    "NEXT_ARGUMENT",
    "NEXT_QUERY",
    "render_debater_role",
]
