"""Frozen evidence: what each run's retrieval and search calls returned, kept and served again."""

from factdebate.evidence import averitec as _knowledge_store  # noqa: F401, E402 (its loader)
from factdebate.evidence.exporting import describe, export_snapshot
from factdebate.evidence.format import EvidenceError, Snapshot
from factdebate.evidence.session import (
    EvidenceRun,
    evidence_session,
    open_replay,
    served_evidence,
    served_hook,
)
from factdebate.evidence.store import LOG_DIR, open_snapshot, register_loader

__all__ = [
    "LOG_DIR",
    "EvidenceError",
    "EvidenceRun",
    "Snapshot",
    "describe",
    "evidence_session",
    "export_snapshot",
    "open_replay",
    "open_snapshot",
    "register_loader",
    "served_evidence",
    "served_hook",
]
