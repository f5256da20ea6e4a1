"""MAD-Fact settings; defaults follow the paper (3 evaluators, 2 rounds, rule 1)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from factdebate.nodes.context import Context, setting
from factdebate.prompts.mad_fact import NEUTRAL_ROLE, ROLE_NAMES
from factdebate.tools.core.errors import SettingsError

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
    max_claims: int = setting(
        200,
        "Most claims taken from one answer (rest recorded); LongFact-length answers yield 40-80.",
        1,
        1000,
    )
    max_answer_chars: int = setting(
        20000, "Longest answer/reference accepted, characters.", 1, 200_000
    )
    query_attempts: int = setting(
        2, "Tries a juror gets to write a search query not used before.", 1, 10
    )
    clerk_part_chars: int = setting(
        4000,
        "An answer longer than this is split at paragraph and sentence ends into parts of at "
        "most this many characters; each part is decomposed on its own and the claims joined "
        "in order.",
        500,
        100_000,
    )
    gamma: float = setting(
        0.8, "Recall@gamma: share of the golden mass deemed enough (above 0).", 0, 1
    )
    merge_method: Literal["model", "embedding", "text"] = field(
        default="model",
        metadata={
            "description": "How equivalent claims are found (golden set, answer weights): "
            "'model' = the judge model matches paraphrases (the paper's merge); 'text' = same "
            "normalised text; 'embedding' = that, or MiniLM cosine >= merge_threshold."
        },
    )
    merge_threshold: float = setting(
        0.9, "Cosine at which two claims (stating the same numbers) count as equivalent.", 0, 1
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
        if self.roles:
            unknown = [r for r in self.roles if r not in ROLE_NAMES]
            if unknown:
                raise SettingsError(f"unknown roles {unknown}; choose from {list(ROLE_NAMES)}")
            if len(set(self.roles)) != len(self.roles) or len(self.roles) != self.n_evaluators:
                raise SettingsError("roles must be n_evaluators distinct names")
        if self.gamma == 0:
            raise SettingsError("setting gamma must be above 0")
        if self.juror_models and len(self.juror_models) != self.n_evaluators:
            raise SettingsError(
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

    search_steps: int = setting(3, "Searches the verifier runs before rating.", 0, 10)
    query_attempts: int = setting(2, "Tries to write a query not used before.", 1, 10)
