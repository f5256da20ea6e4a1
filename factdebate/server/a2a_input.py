"""A2A messages to a method: a text message is the claim (or question) the method reads.

LangGraph's A2A route (langgraph-api 0.16) passes text parts only to graphs with a
``messages`` input and refuses them otherwise; factdebate's methods read a ``claim`` or a
``question``. The server's middleware rewrites a message whose parts are all text into one
data part holding that field, as the agent card's ``text/plain`` input promises; data parts
pass as they are.
"""

from __future__ import annotations

from typing import Any

from factdebate.graphs.registry import METHODS

SEND_METHODS = frozenset({"message/send", "message/stream", "SendMessage", "SendStreamingMessage"})
"""JSON-RPC methods that carry a message to an agent (A2A 0.3 names and 1.0 names)."""


def _text(part: Any) -> str | None:
    """A text part's text (either protocol version's shape), or None for any other part."""
    if not isinstance(part, dict) or not isinstance(part.get("text"), str):
        return None
    kind = part.get("kind")
    return str(part["text"]) if kind in (None, "text") else None


def text_as_input(body: Any, method: str | None) -> Any:
    """``body`` with a text-only message to ``method`` rewritten as a data part of its input.

    Only messages to a method that reads a claim or a question change; anything else (data
    or file parts, an answer-scoring method, an unknown target, a resume) is returned as is.
    """
    spec = METHODS.get(method or "")
    if spec is None or spec.input_kind == "answer" or not isinstance(body, dict):
        return body
    params = body.get("params")
    if not isinstance(params, dict):
        return body
    message = params.get("message")
    if body.get("method") not in SEND_METHODS or not isinstance(message, dict):
        return body
    parts = message.get("parts")
    if not isinstance(parts, list) or not parts:
        return body
    texts = [_text(p) for p in parts]
    if any(t is None for t in texts):
        return body
    text = "\n".join(t for t in texts if t is not None).strip()
    data: dict[str, Any] = {"data": {spec.input_kind: text}}
    if any(isinstance(p, dict) and "kind" in p for p in parts):
        data = {"kind": "data", **data}  # the 0.3 shape, as the message was written
    return {**body, "params": {**params, "message": {**message, "parts": [data]}}}
