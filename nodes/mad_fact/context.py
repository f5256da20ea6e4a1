"""MAD-Fact settings; defaults follow the paper (3 evaluators, 2 rounds, rule 1)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from nodes.context import Context
from prompts.mad_fact import NEUTRAL_ROLE, ROLE_NAMES

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
        default=200,
        metadata={"description": "Most claims taken from one answer (rest recorded), 1-1000."},
    )
    long_output_tokens: int = field(
        default=4096,
        metadata={
            "description": "Cap on generated tokens for the clerk, the expert reference writers "
            "and the claim merger (a LongFact-length answer yields 40-80 claims)."
        },
    )
    clerk_part_chars: int = field(
        default=4000,
        metadata={
            "description": "An answer longer than this is split at paragraph and sentence ends "
            "into parts of at most this many characters; each part is decomposed on its own "
            "and the claims joined in order."
        },
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
    merge_method: Literal["model", "embedding", "text"] = field(
        default="model",
        metadata={
            "description": "How equivalent claims are found (golden set, answer weights): "
            "'model' = the judge model matches paraphrases (the paper's merge); 'text' = same "
            "normalised text; 'embedding' = that, or MiniLM cosine >= merge_threshold."
        },
    )
    merge_threshold: float = field(
        default=0.9,
        metadata={
            "description": "Cosine at which two claims (stating the same numbers) count "
            "as equivalent."
        },
    )
    role_play: bool = field(
        default=True,
        metadata={
            "description": "Give each juror its role; false = identical jurors with one neutral "
            "profile (the paper's w/o Role-Playing ablation)."
        },
    )
    debate: bool = field(
        default=True,
        metadata={
            "description": "False = one round of statements, then the vote, whatever "
            "max_rounds says (the paper's w/o Debate ablation)."
        },
    )
    search: bool = field(
        default=True,
        metadata={
            "description": "False = jurors never search and answer directly (the paper's w/o "
            "Search ablation)."
        },
    )
    juror_models: list[str] = field(
        default_factory=list,
        metadata={
            "description": "One model per juror in speaking order (a mixed-model jury, the "
            "paper's MAD-Fact-various); empty = every juror uses the debater model."
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
        if self.merge_method not in ("model", "embedding", "text"):
            raise ValueError(
                f"merge_method must be model, embedding or text, got {self.merge_method!r}"
            )
        if min(self.claim_concurrency, self.max_claims, self.query_attempts) < 1:
            raise ValueError("claim_concurrency, max_claims and query_attempts must be >= 1")
        if self.max_claims > 1000 or self.claim_concurrency > 64:
            raise ValueError("max_claims must be <= 1000 and claim_concurrency <= 64")
        if not 256 <= self.long_output_tokens <= 32768:
            raise ValueError(
                f"long_output_tokens must be 256..32768, got {self.long_output_tokens}"
            )
        if not 500 <= self.clerk_part_chars <= 100_000:
            raise ValueError(f"clerk_part_chars must be 500..100000, got {self.clerk_part_chars}")
        if self.juror_models and len(self.juror_models) != self.n_evaluators:
            raise ValueError(
                f"juror_models must name one model per juror ({self.n_evaluators}), "
                f"got {len(self.juror_models)}"
            )

    def jury_roles(self) -> list[str]:
        """Return the jurors' roles in speaking order (all neutral without role play)."""
        if not self.role_play:
            return [NEUTRAL_ROLE] * self.n_evaluators
        return list(self.roles) if self.roles else list(ROLE_NAMES[: self.n_evaluators])

    def juror_names(self) -> list[str]:
        """Each juror's name in the transcript: its role, numbered when roles repeat."""
        roles = self.jury_roles()
        if len(set(roles)) == len(roles):
            return roles
        return [f"{role}_{i}" for i, role in enumerate(roles, 1)]

    def round_limit(self) -> int:
        """Rounds the jury holds: ``max_rounds``, or 1 without debate."""
        return self.max_rounds if self.debate else 1

    def juror_model(self, index: int) -> str:
        """The model of juror ``index`` (0-based): its own in a mixed jury, else the debater's."""
        return self.juror_models[index] if self.juror_models else self.model_for("debater")


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
