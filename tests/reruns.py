"""Comparing two runs' results field by field, wall times aside (identical reruns)."""

from __future__ import annotations

from typing import Any

TIMES = ("elapsed", "seconds", "started", "ended", "time", "at", "latency")
"""Keys whose values are wall times: the only fields two runs may differ in."""


def without_times(value: Any) -> Any:
    """``value`` with every wall-time field left out, at any depth."""
    if isinstance(value, dict):
        return {
            k: without_times(v)
            for k, v in value.items()
            if not (k in TIMES or k.endswith(("_s", "_at", "_time")))
        }
    if isinstance(value, list):
        return [without_times(v) for v in value]
    return value


def differences(a: Any, b: Any, path: str = "") -> list[str]:
    """Every path at which ``a`` and ``b`` differ, with both values."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [
            d
            for k in sorted(set(a) | set(b))
            for d in differences(a.get(k), b.get(k), f"{path}.{k}")
        ]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in differences(x, y, f"{path}[{i}]")
        ]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"[:300]]
