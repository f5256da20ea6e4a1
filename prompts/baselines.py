"""Baseline prompts: zero-shot CoT, single-agent ReAct, MAD and MADKE (project wording)."""

from __future__ import annotations

from factdebate.prompts.common import EVIDENCE_RULES, LABEL_INSTRUCTIONS, NO_EVIDENCE_LABELS

COT = """\
You are a careful fact-checker. Decide whether the claim below is true. No documents are
available: rely on your own knowledge.

{label_instructions}

Claim: {claim}"""

REACT_STEP = """\
You are a fact-checking agent with one tool: {tool_description}
Each step you either search or answer.
- To search, reply with one line `SEARCH: [your query]` and nothing else.
- To answer, reason from the documents found so far and end with the label.
You have {searches_left} search(es) left.{must_answer}
{evidence_rules}

{label_instructions}

Claim: {claim}

Searches so far:
{history}"""

MUST_ANSWER = " You may not search any more: answer now."

TOOL_DESCRIPTIONS = {
    "rag": "a dense retriever over a local document collection.",
    "search": "a search engine.",
    "none": "none (answer from your own knowledge).",
}

MAD_AFFIRMATIVE = """\
You argue the AFFIRMATIVE side of a fact-checking debate: make the strongest honest case
that the claim is true. Address the other side's points directly when there are any.

Claim: {claim}

{debate_so_far}

Write your argument in at most one paragraph."""

MAD_NEGATIVE = """\
You argue the NEGATIVE side of a fact-checking debate: challenge the claim and the
affirmative side's reasoning. Point out errors, gaps and counter-facts; do not simply agree.

Claim: {claim}

{debate_so_far}

Write your argument in at most one paragraph."""

MAD_JUDGE = """\
You judge a fact-checking debate between an affirmative and a negative side. Decide which
side argued correctly about the claim, using the arguments and your own knowledge.
{continue_rule}

{label_instructions}

Claim: {claim}

Debate:
{debate}"""

MAD_CONTINUE_RULE = """\
If the debate so far is not enough to decide, reply with the single word CONTINUE on the last
line instead of a label; another round will follow."""

MAD_FINAL_RULE = "This is the last round: you must give a label."

MADKE_FIRST = """\
You are {agent} in a fact-checking debate. All agents share the same retrieved documents.
Decide whether the claim holds, based on the documents.
{evidence_rules}

{label_instructions}

Claim: {claim}

Documents:
{evidence}"""

MADKE_NEXT = """\
You are {agent} in a fact-checking debate. All agents share the same retrieved documents.
Reconsider the claim given the documents and the other agents' previous answers; you may keep
or change your verdict.
{evidence_rules}

{label_instructions}

Claim: {claim}

Other agents' previous answers:
{others}

Documents:
{evidence}"""

MADKE_JUDGE = """\
You judge a fact-checking debate whose agents did not agree. Decide the verdict from the
shared documents and the agents' final answers.
{evidence_rules}

{label_instructions}

Claim: {claim}

Final answers:
{answers}

Documents:
{evidence}"""

__all__ = [
    "COT",
    "EVIDENCE_RULES",
    "LABEL_INSTRUCTIONS",
    "MADKE_FIRST",
    "MADKE_JUDGE",
    "MADKE_NEXT",
    "MAD_AFFIRMATIVE",
    "MAD_CONTINUE_RULE",
    "MAD_FINAL_RULE",
    "MAD_JUDGE",
    "MAD_NEGATIVE",
    "MUST_ANSWER",
    "NO_EVIDENCE_LABELS",
    "REACT_STEP",
    "TOOL_DESCRIPTIONS",
]
