"""The verdict label vocabulary: the label sets and every spelling that names a label."""

from __future__ import annotations

from typing import Literal

Label = Literal["SUPPORTS", "REFUTES", "NOT ENOUGH INFO", "CONFLICTING"]
LABELS_3: tuple[str, ...] = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
"""FEVER-style labels (Tool-MAD and its baselines)."""
LABELS_4: tuple[str, ...] = (*LABELS_3, "CONFLICTING")
"""AVeriTeC-style labels (DebateCV), adding CONFLICTING (conflicting evidence/cherry-picking)."""

LABEL_SPELLINGS: dict[str, str] = {
    "SUPPORTS": "SUPPORTS",
    "SUPPORTED": "SUPPORTS",
    "REFUTES": "REFUTES",
    "REFUTED": "REFUTES",
    "NOT ENOUGH INFO": "NOT ENOUGH INFO",
    "NOT ENOUGH INFORMATION": "NOT ENOUGH INFO",
    "NOT ENOUGH EVIDENCE": "NOT ENOUGH INFO",
    "NEI": "NOT ENOUGH INFO",
    "INSUFFICIENT EVIDENCE": "NOT ENOUGH INFO",
    "INSUFFICIENT INFORMATION": "NOT ENOUGH INFO",
    "INSUFFICIENT INFO": "NOT ENOUGH INFO",
    "CONFLICTING": "CONFLICTING",
    "CONFLICTING EVIDENCE": "CONFLICTING",
    "CONFLICTING EVIDENCE/CHERRY-PICKING": "CONFLICTING",
    "CONFLICTING EVIDENCE/CHERRYPICKING": "CONFLICTING",
    "CHERRY-PICKING": "CONFLICTING",
    "CHERRYPICKING": "CONFLICTING",
}
"""Upper-case spellings (underscores read as spaces) -> the label they name."""


def spelling_key(text: str) -> str:
    """Upper-case ``text`` with underscores as spaces and runs of spaces collapsed."""
    return " ".join(text.strip().upper().replace("_", " ").split())
