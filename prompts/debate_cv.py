"""DebateCV prompts: debaters, moderator, final verdict, corrector, RAG-CoT (project wording)."""

from __future__ import annotations

from factdebate.prompts.common import EVIDENCE_RULES

VERDICT_CRITERIA = """\
Verdict labels (AVeriTeC's categories):
- SUPPORTS: the credible evidence fully backs the claim.
- REFUTES: the credible evidence directly contradicts the claim. A claim whose central
  statement is contradicted is REFUTES even when some of its details are true.
- NOT ENOUGH INFO: the credible evidence is too thin to confirm or contradict the claim,
  or leaves part of it neither backed nor contradicted.
- CONFLICTING: the claim misleads but is not explicitly contradicted: the evidence points
  both ways, or the claim picks only the facts that suit it (cherry-picking, true but
  misleading)."""

LABEL_INSTRUCTIONS_4 = """\
Reason step by step from the documents first. Then finish with exactly one label, alone on
the last line, written in bold:
- **SUPPORTS** if the documents show the claim is true;
- **REFUTES** if the documents contradict the claim's central statement, even when some
  details of it are true;
- **NOT ENOUGH INFO** if the documents do not settle the question;
- **CONFLICTING** if the claim misleads without being contradicted: the documents point both
  ways, or the claim is true but misleading."""

DEBATER_SETUP = """\
You are one of two debaters checking a claim against a set of documents. You are given a
side to defend. Stay factual and concise: ground every point in the documents, cite them by
number like [2], and take apart the weak points of the other side.
{evidence_rules}

Claim: {claim}

Documents:
{evidence}"""

AFFIRMATIVE_OPENING = """\
{setup}

Your side: the claim is TRUE. Open the debate. Say what the claim asserts, part by part,
then bring the documents that back it up most strongly."""

NEGATIVE_REPLY = """\
{setup}

The debate so far, oldest argument first:
{dialogue}

Your side: the claim is FALSE. Answer the affirmative's latest argument, keeping the whole
debate in view: bring the documents that count against the claim, and point out where the
affirmative side is unsupported, outdated, or reads more into the documents than they say."""

AFFIRMATIVE_REPLY = """\
{setup}

The debate so far, oldest argument first:
{dialogue}

Your side: the claim is TRUE. Do you accept any of the negative's latest points? Explain your
reasoning, cite the documents that support your side, and show where its reply is weak."""

MODERATOR_SETUP = """\
You moderate a fact-checking debate. An affirmative debater defends the claim and a
negative debater attacks it, both from the same documents. Judge only by how relevant and
sufficient the cited evidence is, not by how confident a side sounds.
{evidence_rules}

Claim: {claim}

Documents:
{evidence}

{criteria}"""

MODERATOR_ROUND = """\
{setup}

Your notes from earlier rounds:
{notes}

The debate so far, oldest argument first:
{dialogue}

Round {round_no} has just ended (its arguments are the last two above).

Be brief. Fill in:
- new_insight: what this round added that earlier rounds had not;
- evidence_gaps: evidence or arguments still missing on either side;
- proceed: true only if another round is really needed; false if a verdict is already
  clear or the debaters only repeat themselves;
- reason: why you continue or stop;
- verdict: when proceed is false, one of SUPPORTS, REFUTES, NOT ENOUGH INFO, CONFLICTING;
  null when proceed is true;
- justification: when proceed is false, why the evidence leads to that verdict; empty
  otherwise."""

FINAL_VERDICT = """\
{setup}

The debate reached its round limit of {max_rounds} rounds. The whole debate, oldest argument
first:
{dialogue}

Your notes per round:
{summary}

Sum up the main insights of the whole debate, weigh both sides against the documents and
decide. Give a step-by-step justification and one verdict among SUPPORTS, REFUTES, NOT
ENOUGH INFO, CONFLICTING."""

RETRY_NOTE = """\

Your previous reply could not be used ({problem}). Reply again with only one JSON object
that follows the schema exactly."""

CORRECTOR = """\
You review a fact-checking debate whose moderator reached the wrong verdict. The correct
verdict is known: {gold}. Write the justification a careful moderator would have written to
reach {gold} from this debate and these documents: which arguments hold, which do not, and
which documents decide the matter. Do not mention that a verdict was given to you.
{evidence_rules}

Claim: {claim}

Documents:
{evidence}

Debate:
{debate}

Moderator's notes:
{notes}"""

RAG_COT = """\
Check whether the claim below is true, using only the documents given.
{evidence_rules}

{label_instructions}

Claim: {claim}

Documents:
{evidence}"""


VOTING = """\
Several fact-checkers each checked the claim below on their own, with the same documents,
and each gave a verdict with its reasoning. Count their verdicts and give the one most of
them reached. If no verdict has more votes than every other, weigh the reasoning behind the
tied verdicts and pick the better-founded one. A vote marked "unreadable" gave no clear
verdict: use its reasoning only to break a tie.

Claim: {claim}

Votes:
{votes}

{label_instructions}"""

COOP_SETUP = """\
Two agents work together to check a claim against the documents below: a user, who directs
the work, and an assistant, who carries it out.
{evidence_rules}

Claim: {claim}

Documents:
{evidence}

The conversation so far:
{conversation}"""

COOP_USER = """\
{setup}

You are the user. Do not check the claim yourself: give the assistant one instruction at a
time, each a concrete next step (which part of the claim or which document to examine, what
to compare, what to settle), written as "Instruction: ...". Once the assistant's latest
answer settles the claim with a well-founded verdict, reply with only the words TASK DONE."""

COOP_ASSISTANT = """\
{setup}

You are the assistant. Carry out the user's latest instruction, then give your current
verdict on the whole claim.
{label_instructions}"""

__all__ = [
    "AFFIRMATIVE_OPENING",
    "COOP_ASSISTANT",
    "COOP_SETUP",
    "COOP_USER",
    "AFFIRMATIVE_REPLY",
    "CORRECTOR",
    "DEBATER_SETUP",
    "EVIDENCE_RULES",
    "FINAL_VERDICT",
    "LABEL_INSTRUCTIONS_4",
    "MODERATOR_ROUND",
    "MODERATOR_SETUP",
    "NEGATIVE_REPLY",
    "RAG_COT",
    "RETRY_NOTE",
    "VERDICT_CRITERIA",
    "VOTING",
]
