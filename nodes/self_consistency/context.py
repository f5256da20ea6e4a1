"""Self-consistency settings: another method's settings plus ``k`` and a sampling temperature.

The catalog builds each self-consistency method's settings class from the single-agent
method it samples (``MethodSpec.derive``), so every sample runs under exactly the settings
that method reads; this room never imports that method's room.
"""

from __future__ import annotations

from dataclasses import make_dataclass
from typing import TypeVar

from factdebate.nodes.context import Context, setting

C = TypeVar("C", bound=Context)

DEFAULT_K = 5
MAX_K = 64
SAMPLING_TEMPERATURE = 0.7
"""Default temperature of every sample: k samples at temperature 0 are (nearly) identical."""


def sampled_settings(base: type[C], class_name: str, doc: str) -> type[C]:
    """``base``'s settings plus ``k`` (samples per item) and a temperature default above 0."""
    specs = [
        ("k", int, setting(DEFAULT_K, "Independent samples per item, majority-voted.", 1, MAX_K)),
        (
            "temperature",
            float,
            setting(
                SAMPLING_TEMPERATURE,
                "Sampling temperature of every sample (at 0 the k samples are near copies, "
                "so the vote adds nothing).",
                0,
                2,
            ),
        ),
    ]
    derived: type[C] = make_dataclass(class_name, specs, bases=(base,), kw_only=True)
    derived.__doc__ = doc
    derived.__module__ = __name__
    derived()  # the defaults pass the checks
    return derived
