"""Tool-MAD prompts: query selection, debate turns and the judge (project wording)."""

from __future__ import annotations

import re

from factdebate.prompts.common import EVIDENCE_RULES, LABEL_INSTRUCTIONS, NO_EVIDENCE_LABELS

TOOL_DESCRIPTIONS = {
    "rag": "You consult a local document collection through dense vector retrieval.",
    "search": "You consult a search engine.",
    "none": "You have no retrieval tool and rely on what you already know.",
}

DEBATE_SETTING = """\
You take part in a fact-checking debate with one other agent. The shared aim is to agree on
the correct verdict for the claim."""

QUERY_EXAMPLE_CLAIM = "Mount Everest is in Chile"
QUERY_EXAMPLE = "Mount Everest location"
"""The query prompts' worked example. A small model may copy it whatever the claim; the query
step then searches the claim instead (``nodes/tool_mad/query.py``)."""

FIRST_QUERY = f"""\
{{role}}

Write one search query that would find evidence to check the claim below. Output only the
query inside square brackets and nothing else. Example: for the claim "{QUERY_EXAMPLE_CLAIM}"
you would write [{QUERY_EXAMPLE}].

Claim: {{claim}}"""

NEXT_QUERY = f"""\
{{role}}

You may keep your previous query or write a better one, taking the other agent's answer
into account. Output only the query inside square brackets and nothing else. Example: for
the claim "{QUERY_EXAMPLE_CLAIM}" you would write [{QUERY_EXAMPLE}].

Other agent's answer: {{opponent_answer}}
Your previous query: {{previous_query}}
Claim: {{claim}}"""

GROUNDED_STYLE = """\
Write your reasoning as plain statements of fact taken from the documents, citing them as
[1], [2]... (for example: "The Eiffel Tower was completed in 1889 [1]."). Every sentence you
write is checked against the documents, so write about the subject of the claim and about
what the documents contain, not about the debate:
- when the documents say nothing about the subject, or about part of it, say so as a fact
  about them (for example: "None of the documents mentions the tower's height." or
  "Document 2 is about a bridge in Lyon and does not mention the tower.");
- do not restate the claim or grade the documents (no "the claim states..." or "document 2
  is not relevant");
- from the second round on, say whether you agree with the other agent in one sentence of
  its own, written exactly "I agree with the other agent." or "I disagree with the other
  agent.", then give your reasons as statements about your documents.
That agree/disagree sentence and your final label line are not checked against the
documents; every other sentence is, including any other sentence about the other agent."""

AGREEMENT_SENTENCES = ("I agree with the other agent.", "I disagree with the other agent.")
"""The fixed sentences a debater uses to take a position on the other agent's answer."""

UNCHECKED_SENTENCES: tuple[re.Pattern[str], ...] = (
    re.compile(r"[-*>\s]*\**\s*I (?:dis)?agree with the other agent\s*\.?\s*\**\s*", re.I),
    re.compile(
        r"\W*(?:(?:final\s+)?(?:verdict|label|answer|conclusion)\s*[:=-]?\s*)?\W*"
        r"(?:SUPPORTS?|SUPPORTED|REFUTES?|REFUTED|NOT ENOUGH INFO(?:RMATION)?|NEI)\W*",
        re.I,
    ),
)
"""Whole sentences (or lines) that RAGAS faithfulness does not check: the agree/disagree
sentence and the label line. They state the debater's position, not a fact the documents
could back, so the statement step never sees them and they count neither way."""

SILENCE_NOTE = """<note to the checker>
The answer was asked to say so when the documents are silent, as a statement about them
("Document 2 does not mention the tower.", "None of the documents mentions its height.").
Such a statement can be inferred from the documents above when the document(s) it names
indeed say nothing about that subject, and cannot when they do mention it.
</note to the checker>"""
"""Ends the faithfulness context, so statements of silence, which the debater prompt asks for
(``GROUNDED_STYLE``), are judged one way: faithful when the named documents are silent."""

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

Every answer was scored between 0 and 1 (higher is more reliable): faithfulness says how well
it is backed by the documents its agent retrieved; answer relevance says how closely it
addresses the claim. The reason above quotes last-round scores; the list under "Scores" gives
each agent's average over all rounds, then its last-round scores. {relevance_note}Weigh the
arguments, the evidence and these scores.
{evidence_rules}

{label_instructions}

Claim: {claim}

Debate history (a document retrieved more than once is shown the first time only):
{history}

Scores:
{scores}"""

RELEVANCE_NOTE_RAGAS = (
    "RAGAS sets answer relevance to 0 for an answer it reads as noncommittal, which includes "
    "most answers concluding NOT ENOUGH INFO however well they are argued: for those, a 0 "
    "does not mean the answer missed the claim. "
)
"""Judge note when NOT ENOUGH INFO answers are scored by RAGAS's rule (``nei_relevance=ragas``)."""

RELEVANCE_NOTES = {"ragas": RELEVANCE_NOTE_RAGAS, "cosine": ""}
"""The judge's note on answer relevance, per ``nei_relevance`` setting."""

SITUATION_DISAGREED = "in the last round the agents disagreed ({labels})."
SITUATION_AGREED_UNSTABLE = (
    "in the last round both agents concluded {label}, but the agreement did not count as "
    "reliable because, in that last round, {problems}. Their agreement is a signal, not the "
    "answer."
)


def render_debater_role(tool: str) -> str:
    """Describe a debater's role and tool."""
    return f"{DEBATE_SETTING} {TOOL_DESCRIPTIONS[tool]}"


__all__ = [
    "AGREEMENT_SENTENCES",
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
    "RELEVANCE_NOTES",
    "RELEVANCE_NOTE_RAGAS",
    "SITUATION_AGREED_UNSTABLE",
    "SILENCE_NOTE",
    "SITUATION_DISAGREED",
    "NEXT_QUERY",
    "QUERY_EXAMPLE",
    "QUERY_EXAMPLE_CLAIM",
    "TOOL_DESCRIPTIONS",
    "UNCHECKED_SENTENCES",
    "render_debater_role",
]
