"""Output caps of the call stages whose answers are measured short, below their role's cap.

A provider that counts ``max_tokens`` against a tokens-per-minute limit (OpenAI does) charges
a request its whole cap, so a search query asked with the debaters' 1,024 tokens costs as much
of the limit as an argument. Each stage here is first asked with about twice the longest
answer a capable model gave to the project's own prompts (the recordings behind
docs/models.md); an answer cut at that cap is asked again at the role's cap.
"""

from __future__ import annotations

STAGE_CAPS: dict[str, int] = {
    "query": 64,  # search queries: longest 20 tokens of 226 recorded
    "confidence": 384,  # MAD-Fact juror confidence: longest 151 of 45
    "score:AnswerRelevanceOutput": 128,  # RAGAS relevance question: longest 47 of 336
    "score:StatementGeneratorOutput": 768,  # RAGAS statements: longest 361 of 112
    "score:SomeStatements": 768,  # the same, as a grammar-held model is asked it
}
"""Cap of each measured stage, tokens (a stage not listed is asked with its role's cap)."""


def stage_cap(stage: str, role_cap: int | None) -> int | None:
    """The cap a call of ``stage`` is first sent with: the stage's own when below the role's."""
    sized = STAGE_CAPS.get(stage)
    if role_cap is None or sized is None:
        return role_cap
    return min(role_cap, sized)
