"""An A2A message to a method: its parts as the method's input, the request's settings.

Read from the JSON-RPC request as sent (``params``), so numbers keep their type. A message
is text parts or data parts. Text parts are the claim (``question`` for MADAM-RAG and its
baselines; MAD-Fact, which scores a long answer, needs a data part); data parts, merged,
are the graph's input (``{"claim": ...}``, ``{"question": ..., "documents": [...]}``). The
run's settings are the request's ``context``: ``params.context`` (where LangGraph's own A2A
route reads them) or ``params.metadata.context`` (where `a2a-sdk`'s client can put them).
"""

from __future__ import annotations

from typing import Any

from factdebate.graphs.registry import MethodSpec

_FIELDS = {"claim": "the claim", "question": "the question"}


def _text(part: dict[str, Any]) -> str | None:
    """A text part's text (A2A 1.0's shape, or 0.3's with ``kind``), or None for another part."""
    if not isinstance(part.get("text"), str) or part.get("kind") not in (None, "text"):
        return None
    return str(part["text"])


def _data(part: dict[str, Any]) -> Any:
    """A data part's data, or None for another part."""
    if "data" not in part or part.get("kind") not in (None, "data"):
        return None
    return part["data"]


def message_arguments(spec: MethodSpec, message: Any) -> dict[str, Any]:
    """The method's input fields a message carries (``mcp_endpoint.run_input`` checks them).

    Raises:
        ValueError: no parts, a part that is neither text nor data, text and data mixed,
            data that is not an object, or text to a method that needs a data part.
    """
    parts = message.get("parts") if isinstance(message, dict) else None
    if not isinstance(parts, list) or not parts or not all(isinstance(p, dict) for p in parts):
        raise ValueError("the message has no parts: send the claim as a text part")
    texts = [_text(p) for p in parts]
    data = [_data(p) for p in parts]
    if any(t is None and d is None for t, d in zip(texts, data, strict=True)):
        raise ValueError(f"{spec.name} reads text and data parts only (no files or URLs)")
    if any(d is not None for d in data):
        if any(t is not None for t in texts):
            raise ValueError(
                "a message is text parts (the claim) or data parts (the input), not both"
            )
        merged: dict[str, Any] = {}
        for value in data:
            if not isinstance(value, dict):
                raise ValueError(f"a data part must be an object, got {type(value).__name__}")
            merged.update(value)
        if "settings" in merged:
            raise ValueError(
                "settings go in the request's context (params.context or metadata.context), "
                "not in the input"
            )
        return merged
    if spec.input_kind not in _FIELDS:
        raise ValueError(
            f'{spec.name} scores a long answer: send a data part {{"question": ..., "answer": ...}}'
        )
    return {spec.input_kind: "\n".join(t for t in texts if t is not None).strip()}


def request_settings(params: Any) -> dict[str, Any]:
    """The run settings a request names: ``params.context`` or ``params.metadata.context``.

    Raises:
        ValueError: settings that are not an object, or two different sets of them.
    """
    if not isinstance(params, dict):
        return {}
    metadata = params.get("metadata")
    named = [params.get("context"), metadata.get("context") if isinstance(metadata, dict) else None]
    given = [s for s in named if s not in (None, {})]
    for settings in given:
        if not isinstance(settings, dict):
            kind = type(settings).__name__
            raise ValueError(f"context must be an object of settings, got {kind}")
    if len(given) == 2 and given[0] != given[1]:
        raise ValueError("params.context and metadata.context name different settings: send one")
    return dict(given[0]) if given else {}
