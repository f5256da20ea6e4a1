"""MAD-Fact prompts: clerk, juror roles and turns, single verifier, expert reference writer."""

from __future__ import annotations

from factdebate.prompts.common import EVIDENCE_RULES

__all__ = ["EVIDENCE_RULES", "NEUTRAL_PROFILE", "NEUTRAL_ROLE", "ROLES", "ROLE_NAMES"]

# Six juror roles (speaking order = table order). Each ends by nudging the juror to look
# things up rather than guess, which keeps confident jurors from skipping the evidence.
ROLES: dict[str, tuple[str, str]] = {
    "general_public": (
        "Member of the Public",
        "You read the claim the way an attentive, non-specialist reader would: you care about "
        "what it says as a whole and whether a reasonable person would call it correct, not "
        "about quibbles over single words.",
    ),
    "critic": (
        "Critic",
        "You distrust easy agreement. You test the other jurors' reasoning link by link, ask "
        "what backs each step, and notice small mismatches in names, dates and numbers.",
    ),
    "news_author": (
        "News Author",
        "You care about sources and about whether the information is current. You check what "
        "the claim rests on, and when you are short of facts you look them up instead of "
        "guessing.",
    ),
    "scientist": (
        "Scientist",
        "You reason from evidence the way a careful researcher does: you weigh how reliable "
        "each source is, read references closely, and are quick to spot figures that do not "
        "add up.",
    ),
    "psychologist": (
        "Psychologist",
        "You pay attention to how people argue: you spot overconfidence, loaded framing and "
        "arguments that persuade without proving, and help the jury see which opinion is best "
        "supported.",
    ),
    "data_analyst": (
        "Data Analyst",
        "You take a quantitative view: you gather figures from several places, put them side "
        "by side, and check that quantities, units, dates and ranges are consistent.",
    ),
}
ROLE_NAMES: tuple[str, ...] = tuple(ROLES)

# The one profile every juror shares when role play is off (w/o Role-Playing ablation).
NEUTRAL_ROLE = "juror"
NEUTRAL_PROFILE = (
    "Juror",
    "You weigh the claim carefully and fairly, from the evidence and what you know.",
)

SEARCH_NUDGE = "When you are not sure, searching beats guessing."

CLERK = """\
You are the clerk of a fact-checking jury. Split the answer below into atomic claims.

Rules for each claim:
- one single fact that could be checked against reliable sources;
- self-contained: replace pronouns and vague references with the names they stand for
  (use the question for context), so the claim makes sense on its own;
- keep the wording of the answer; do not add facts of your own.
Leave out everything that cannot be checked: advice and recommendations, instructions,
opinions and value judgements, questions, greetings and hedges about the answer itself.

Question: {question}

Answer to split:
<answer>
{answer}
</answer>

Return the claims in the order they appear."""

JUROR_HEADER = """\
You are the {role_title} on a jury that decides whether a claim is factually TRUE or FALSE.
{role_description} {search_nudge}

Claim ({question_line}): {claim}

Searches the jury has run so far (shared knowledge):
{knowledge}

{evidence_rules}

What the jurors have said so far:
{pool}"""

CONFIDENCE = """\
{header}

Before giving your opinion: how confident are you that you can judge this claim correctly
from what you already know and what the jury has gathered? Explain briefly, then finish with
one line of the form
CONFIDENCE: <a number between 0 and 1>"""

QUERY = """\
{header}

Write one new web search query that would help settle the claim. It must differ from every
query already used:
{used_queries}
Put the query alone inside square brackets, like [your query]."""

OPINION = """\
{header}

Results of your own search for this turn:
{turn_evidence}

Give your opinion on the claim (round {round_no}). {round_instructions}
Finish with exactly one word alone on the last line, in bold: **TRUE** if the claim is
factually correct, **FALSE** if it is not."""

FIRST_ROUND = "Reason from the shared knowledge and your own expertise."
LATER_ROUND = (
    "Take the other jurors' opinions into account: build on points you find sound and correct "
    "mistakes you see, citing the searches where you can."
)
LATER_ROUND_NO_SEARCHES = (
    "Take the other jurors' opinions into account: build on points you find sound and correct "
    "mistakes you see. No searches were run, so reason from what the jurors know."
)

VERIFIER_QUERY = """\
You check whether a claim is factually correct using web search.

Claim: {claim}

Searches so far:
{knowledge}

{evidence_rules}

Write the next search query that would best help decide the claim. It must differ from
every query already used:
{used_queries}
Put the query alone inside square brackets, like [your query]."""

VERIFIER_RATE = """\
You check whether a claim is factually correct.

Claim: {claim}

Search results:
{knowledge}

{evidence_rules}

Reason step by step from the results and what you know. Finish with exactly one word alone
on the last line, in bold: **TRUE** if the claim is factually correct, **FALSE** if not."""

EXPERT = """\
Answer the question below thoroughly and accurately, as an expert would. State facts
plainly; include the key facts a complete answer needs.

Question: {question}"""

MERGE = """\
You compare factual claims. For each new claim below, find the known claim that states the
same fact: the same meaning, possibly in other words or another sentence order. A claim that
changes or adds a detail (another number, date, name, place or scope) does not state the
same fact. Give 0 when no known claim states the new claim's fact.

Known claims:
{known}

New claims:
{new}

Reply with "matches": one number per new claim, in the order of the new claims, each the
number of the matching known claim or 0."""
