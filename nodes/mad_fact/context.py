"""MAD-Fact settings; defaults follow the paper (3 evaluators, 2 rounds, rule 1)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from nodes.context import Context
from prompts.mad_fact import ROLE_NAMES

Strategy = Literal["direct", "search", "conditional"]


@dataclass(kw_only=True)
class MADFactContext(Context):
    """MAD-Fact settings; defaults follow the paper (3 evaluators, 2 rounds, rule 1)."""

    max_rounds: int = field(default=2, metadata={"description": "Jury debate rounds R."})
    n_evaluators: int = field(
        default=3, metadata={"description": "Jurors per claim (1-6), each with its own role."}
    )
    roles: list[str] = field(
        default_factory=list,
        metadata={
            "description": "Role of each juror in speaking order (names from the role table: "
            + ", ".join(ROLE_NAMES)
            + "); empty = the first n_evaluators roles of the table."
        },
    )
    debate_rule: int = field(
        default=1,
        metadata={
            "description": "1 free (round 1 searches when unsure, later rounds discuss); 2 "
            "mandatory search in round 1; 3 adaptive (stop after round 1 on agreement, else "
            "mandatory search before round 2)."
        },
    )
    confidence_threshold: float = field(
        default=0.8,
        metadata={"description": "A juror unsure below this confidence searches before speaking."},
    )
    claim_concurrency: int = field(
        default=4, metadata={"description": "Claims checked by juries at the same time."}
    )
    max_claims: int = field(
        default=30, metadata={"description": "Most claims taken from one answer (rest recorded)."}
    )
    max_answer_chars: int = field(
        default=20000, metadata={"description": "Longest answer/reference accepted, characters."}
    )
    query_attempts: int = field(
        default=2,
        metadata={"description": "Tries a juror gets to write a search query not used before."},
    )
    gamma: float = field(
        default=0.8,
        metadata={"description": "Recall@gamma: share of the golden mass deemed enough."},
    )
    merge_method: Literal["embedding", "text"] = field(
        default="embedding",
        metadata={
            "description": "How equivalent claims are found: 'text' = same normalised text; "
            "'embedding' = that, or MiniLM cosine >= merge_threshold."
        },
    )
    merge_threshold: float = field(
        default=0.9,
        metadata={
            "description": "Cosine at which two claims (stating the same numbers) count "
            "as equivalent."
        },
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
        if not 1 <= self.n_evaluators <= len(ROLE_NAMES):
            raise ValueError(f"n_evaluators must be 1-{len(ROLE_NAMES)}, got {self.n_evaluators}")
        if self.roles:
            unknown = [r for r in self.roles if r not in ROLE_NAMES]
            if unknown:
                raise ValueError(f"unknown roles {unknown}; choose from {list(ROLE_NAMES)}")
            if len(set(self.roles)) != len(self.roles) or len(self.roles) != self.n_evaluators:
                raise ValueError("roles must be n_evaluators distinct names")
        if self.debate_rule not in (1, 2, 3):
            raise ValueError(f"debate_rule must be 1, 2 or 3, got {self.debate_rule}")
        for name in ("confidence_threshold", "merge_threshold"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1, got {getattr(self, name)}")
        if not 0.0 < self.gamma <= 1.0:
            raise ValueError(f"gamma must be in (0, 1], got {self.gamma}")
        if self.merge_method not in ("embedding", "text"):
            raise ValueError(f"merge_method must be embedding or text, got {self.merge_method!r}")
        if min(self.claim_concurrency, self.max_claims, self.query_attempts) < 1:
            raise ValueError("claim_concurrency, max_claims and query_attempts must be >= 1")

    def jury_roles(self) -> list[str]:
        """Return the jurors' roles in speaking order."""
        return list(self.roles) if self.roles else list(ROLE_NAMES[: self.n_evaluators])


@dataclass(kw_only=True)
class SingleVerifierContext(Context):
    """Single-verifier settings: how many searches before the rating."""

    search_steps: int = field(
        default=3, metadata={"description": "Searches the verifier runs before rating (0-10)."}
    )
    query_attempts: int = field(
        default=2, metadata={"description": "Tries to write a query not used before."}
    )

    def __post_init__(self) -> None:
        """Check the settings after the shared ones."""
        super().__post_init__()
        if not 0 <= self.search_steps <= 10 or self.query_attempts < 1:
            raise ValueError("search_steps must be 0-10 and query_attempts >= 1")
