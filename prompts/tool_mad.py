"""Tool-MAD prompts: query selection, debate turns and the judge (project wording)."""

from __future__ import annotations

from prompts.common import EVIDENCE_RULES, LABEL_INSTRUCTIONS, NO_EVIDENCE_LABELS

TOOL_DESCRIPTIONS = {
    "rag": "You consult a local document collection through dense vector retrieval.",
    "search": "You consult a search engine.",
    "none": "You have no retrieval tool and rely on what you already know.",
}

DEBATE_SETTING = """\
You take part in a fact-checking debate with one other agent. The shared aim is to agree on
the correct verdict for the claim."""

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

GROUNDED_STYLE = """\
Write your reasoning as plain statements of fact taken from the documents, citing them as
[1], [2]... (for example: "The Eiffel Tower was completed in 1889 [1]."). Every sentence you
write is checked against the documents, so write about the subject of the claim, not about
the debate: no sentences such as "the claim states...", "the other agent says..." or
"document 2 is not relevant"."""

# A later round's argument prompt is the first round's prompt with the opponent's answer
# appended. Every turn opens with what all debaters share (setting, rules, label format), so
# llama.cpp's prefix cache (or a provider's prompt cache) evaluates that opening once per
# debate, and a debater whose query brings back the same documents resumes its previous
# turn's prompt: only the opponent's answer and the closing line are new.
FIRST_ARGUMENT = """\
{setting}

{evidence_rules}

{grounded_style}

{label_instructions}

{tool_description} Decide whether the claim holds, based on the documents you retrieved.

Claim: {claim}

Documents:
{evidence}"""


def _with_reply(first: str, grounds: str) -> str:
    """``first`` with the opponent's previous answer and the closing line appended."""
    return (
        f"{first}\n\nOther agent's answer in the previous round: {{opponent_answer}}\n\n"
        f"Weigh the other agent's answer against {grounds}: you may change your mind or defend\n"
        "your position."
    )


NEXT_ARGUMENT = _with_reply(FIRST_ARGUMENT, "your documents")

FIRST_ARGUMENT_NO_TOOL = """\
{setting}

{label_instructions}

{tool_description} Decide whether the claim holds, from what you know.

Claim: {claim}"""

NEXT_ARGUMENT_NO_TOOL = _with_reply(FIRST_ARGUMENT_NO_TOOL, "what you know")

JUDGE = """\
You are the judge of a fact-checking debate between two agents. The debate reached its round
limit without settling the verdict: {situation} Decide the verdict yourself.

Each agent carries two scores averaged over the rounds, between 0 and 1 (higher is more
reliable): faithfulness says how well its answers are backed by the documents it retrieved;
answer relevance says how closely its answers address the claim. Weigh the arguments, the
evidence and these scores.
{evidence_rules}

{label_instructions}

Claim: {claim}

Debate history (a document retrieved more than once is shown the first time only):
{history}

Scores:
{scores}"""


SITUATION_DISAGREED = "in the last round the agents disagreed ({labels})."
SITUATION_AGREED_UNSTABLE = (
    "in the last round both agents concluded {label}, but the agreement did not count as "
    "reliable because {problems}. Their agreement is a signal, not the answer."
)


def render_debater_role(tool: str) -> str:
    """Describe a debater's role and tool."""
    return f"{DEBATE_SETTING} {TOOL_DESCRIPTIONS[tool]}"


__all__ = [
    "DEBATE_SETTING",
    "EVIDENCE_RULES",
    "FIRST_ARGUMENT",
    "FIRST_ARGUMENT_NO_TOOL",
    "GROUNDED_STYLE",
    "FIRST_QUERY",
    "JUDGE",
    "LABEL_INSTRUCTIONS",
    "NEXT_ARGUMENT",
    "NEXT_ARGUMENT_NO_TOOL",
    "NO_EVIDENCE_LABELS",
    "SITUATION_AGREED_UNSTABLE",
    "SITUATION_DISAGREED",
    "NEXT_QUERY",
    "TOOL_DESCRIPTIONS",
    "render_debater_role",
]
