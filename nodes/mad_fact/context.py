"""MAD-Fact settings; defaults follow the paper (3 evaluators, 2 rounds, rule 1)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from nodes.context import Context, setting
from prompts.mad_fact import ROLE_NAMES

Strategy = Literal["direct", "search", "conditional"]


@dataclass(kw_only=True)
class MADFactContext(Context):
    """MAD-Fact settings; defaults follow the paper (3 evaluators, 2 rounds, rule 1)."""

    max_rounds: int = setting(2, "Jury debate rounds R.", 1, 20)
    n_evaluators: int = setting(3, "Jurors per claim, each with its own role.", 1, len(ROLE_NAMES))
    roles: list[str] = field(
        default_factory=list,
        metadata={
            "description": "Role of each juror in speaking order (names from the role table: "
            + ", ".join(ROLE_NAMES)
            + "); empty = the first n_evaluators roles of the table."
        },
    )
    debate_rule: int = setting(
        1,
        "1 free (round 1 searches when unsure, later rounds discuss); 2 mandatory search in "
        "round 1; 3 adaptive (stop after round 1 on agreement, else mandatory search before "
        "round 2).",
        1,
        3,
    )
    confidence_threshold: float = setting(
        0.8, "A juror unsure below this confidence searches before speaking.", 0, 1
    )
    claim_concurrency: int = setting(4, "Claims checked by juries at the same time.", 1, 64)
    max_claims: int = setting(30, "Most claims taken from one answer (rest recorded).", 1, 500)
    max_answer_chars: int = setting(
        20000, "Longest answer/reference accepted, characters.", 1, 200_000
    )
    query_attempts: int = setting(
        2, "Tries a juror gets to write a search query not used before.", 1, 10
    )
    gamma: float = setting(
        0.8, "Recall@gamma: share of the golden mass deemed enough (above 0).", 0, 1
    )
    merge_method: Literal["embedding", "text"] = field(
        default="embedding",
        metadata={
            "description": "How equivalent claims are found: 'text' = same normalised text; "
            "'embedding' = that, or MiniLM cosine >= merge_threshold."
        },
    )
    merge_threshold: float = setting(
        0.9, "Cosine at which two claims (stating the same numbers) count as equivalent.", 0, 1
    )
    expert_models: list[str] = field(
        default_factory=list,
        metadata={
            "description": "Models that write reference answers when none are supplied (one "
            "reference each); empty = use only supplied references."
        },
    )

    def __post_init__(self) -> None:
        """Check the MAD-Fact settings after the shared ones."""
        super().__post_init__()
        if self.roles:
            unknown = [r for r in self.roles if r not in ROLE_NAMES]
            if unknown:
                raise ValueError(f"unknown roles {unknown}; choose from {list(ROLE_NAMES)}")
            if len(set(self.roles)) != len(self.roles) or len(self.roles) != self.n_evaluators:
                raise ValueError("roles must be n_evaluators distinct names")
        if self.gamma == 0:
            raise ValueError("setting gamma must be above 0")

    def jury_roles(self) -> list[str]:
        """Return the jurors' roles in speaking order."""
        return list(self.roles) if self.roles else list(ROLE_NAMES[: self.n_evaluators])


@dataclass(kw_only=True)
class SingleVerifierContext(Context):
    """Single-verifier settings: how many searches before the rating."""

    search_steps: int = setting(3, "Searches the verifier runs before rating.", 0, 10)
    query_attempts: int = setting(2, "Tries to write a query not used before.", 1, 10)
