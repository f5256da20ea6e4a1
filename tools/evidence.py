"""The evidence record every retrieval backend returns and every method reads."""

from __future__ import annotations

from typing_extensions import TypedDict


class Evidence(TypedDict):
    """One retrieved or supplied document.

    Attributes:
        id: Stable identifier (corpus id, URL, or dataset-provided id).
        title: Human-readable title; may be empty.
        text: The passage text shown to the agents.
        source: Which backend produced it (``milvus``, ``bm25``, ``tavily``, ``given``...).
        score: Backend relevance score (higher is better); 0.0 when not applicable.
    """

    id: str
    title: str
    text: str
    source: str
    score: float
