"""The stability gate's thresholds: named profiles, each calibrated for one relevance encoder."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

SHIPPED_ENCODER = "all-MiniLM-L6-v2"
"""The shipped MiniLM's name (``tools.retrieval.embeddings.DEFAULT_ENCODER``, which this light
module does not import: settings are checked before any model stack loads)."""
GateProfileName = Literal["auto", "paper", "minilm"]
"""The values of the ``gate_profile`` setting: ``auto`` = the profile of the relevance encoder."""


@dataclass(frozen=True)
class GateProfile:
    """Stability thresholds and where they come from."""

    name: str
    faithfulness: float
    relevance: float
    encoder: str  # the relevance encoder the thresholds were chosen for
    data: str  # what they were chosen on, and by which rule
    date: str


PAPER = GateProfile(
    name="paper",
    faithfulness=0.7,
    relevance=0.8,
    encoder="openai:text-embedding-3-small",
    data="the paper's own runs (its Fig. 3), read by eye; the paper does not name its encoder, "
    "RAGAS's default embeddings are OpenAI's",
    date="2025",
)
MINILM = GateProfile(
    name="minilm",
    faithfulness=0.7,
    relevance=0.63,
    encoder=SHIPPED_ENCODER,
    data="24 recorded FEVER debates of a capable model (recordings of 2026-11-27 and "
    "2026-11-28, replayed with nei_relevance=cosine); rule: keep 0.9, ceilings 0.7 / 0.8; "
    "held out (leave one claim out): 95.8% right, 16.4 calls per claim",
    date="2026-11-28",
)
PROFILES: dict[str, GateProfile] = {p.name: p for p in (PAPER, MINILM)}
"""Every named profile; ``factdebate calibrate-gate`` proposes new rows for this table (a new
row's name also goes into ``GateProfileName``, which bounds the ``gate_profile`` setting)."""


def profile_for(name: str, encoder: str) -> GateProfile:
    """The profile ``name`` (``auto``: the one calibrated for ``encoder``, else ``paper``)."""
    if name != "auto":
        return PROFILES[name]
    from factdebate.tools.retrieval.embeddings import is_default_encoder

    # By name as given (no file-system look-up: routers call this inside the event loop).
    label = SHIPPED_ENCODER if is_default_encoder(encoder) else encoder.strip()
    return next((p for p in PROFILES.values() if p.encoder == label), PAPER)


@dataclass(frozen=True)
class Thresholds:
    """The thresholds a run uses and their source (a profile name, or ``custom``)."""

    faithfulness: float
    relevance: float
    source: str


def gate_thresholds(
    profile: str, encoder: str, faithfulness: float = -1.0, relevance: float = -1.0
) -> Thresholds:
    """The profile's thresholds, each replaced by an explicit setting that is not negative."""
    chosen = profile_for(profile, encoder)
    custom = faithfulness >= 0 or relevance >= 0
    return Thresholds(
        faithfulness=faithfulness if faithfulness >= 0 else chosen.faithfulness,
        relevance=relevance if relevance >= 0 else chosen.relevance,
        source=f"{chosen.name}, overridden" if custom else chosen.name,
    )


def below(value: float, threshold: float) -> tuple[str, str]:
    """``value`` and ``threshold`` printed with the fewest places (2 to 6) that keep them apart.

    At two places 0.657 reads 0.66, and "0.66 is below 0.66" is false as printed.
    """
    for places in range(2, 7):
        shown, bound = f"{value:.{places}f}", f"{threshold:.{places}f}"
        if float(shown) < float(bound):
            return shown, bound
    return repr(value), repr(threshold)
