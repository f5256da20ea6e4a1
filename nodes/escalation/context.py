"""Escalation settings: the method's own settings plus the screen's confidence rule.

The catalog builds each escalation method's settings class from the method it screens for
(``MethodSpec.derive``), so the method proper runs under exactly its own settings and
defaults; this room never imports that method's room.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field, make_dataclass
from typing import Any, TypeVar

from factdebate.nodes.context import Context, setting
from factdebate.tools.core.errors import SettingsError

C = TypeVar("C", bound=Context)

DEFAULT_SCREEN_K = 3
MAX_SCREEN_K = 64
SCREEN_TEMPERATURE = 0.7
"""Default temperature of sampled screens: k samples at temperature 0 are near copies."""


def check_screen_model(value: str) -> None:
    """Refuse a ``screen_model`` that names no model, in one line, before any call."""
    if not value or value == "local" or value.startswith("hf:"):
        return
    provider, sep, name = value.partition(":")
    if sep and provider.strip() and name.strip() and value == value.strip():
        return
    from factdebate.tools.models.providers import registered_models

    if value in registered_models():
        return
    raise SettingsError(
        f"setting screen_model={value!r:.80} names no model: use 'local', 'PROVIDER:MODEL' "
        "(e.g. openai:gpt-4o-mini) or a registered model; empty = the debaters' model"
    )


def _rule_fields() -> list[tuple[str, type, Any]]:
    return [
        (
            "screen_share",
            float,
            setting(
                1.0,
                "Share of the screen's answers that must give the same label for the screen to "
                "settle the item (1 = all of them); below it the method proper runs.",
                0.5,
                1,
            ),
        ),
        (
            "screen_model",
            str,
            field(
                default="",
                metadata={
                    "description": "Model of the screen's answers (e.g. a cheaper one); empty = "
                    "the debaters' model. On a server it must be one the operator allows."
                },
            ),
        ),
        (
            "screen_all",
            bool,
            field(
                default=False,
                metadata={
                    "description": "Run the method proper on every item, also those the screen "
                    "settled (the verdict is the method's; the screen's is recorded), so both "
                    "outcomes are known for calibrate-escalation."
                },
            ),
        ),
    ]


def _sample_fields() -> list[tuple[str, type, Any]]:
    return [
        (
            "screen_k",
            int,
            setting(
                DEFAULT_SCREEN_K,
                "Screen answers per item (one request with n where the provider takes it).",
                1,
                MAX_SCREEN_K,
            ),
        ),
        (
            "screen_temperature",
            float,
            setting(SCREEN_TEMPERATURE, "Sampling temperature of the screen's answers.", 0, 2),
        ),
    ]


def _derive(
    base: type[C], class_name: str, doc: str, specs: list[tuple[str, type, Any]]
) -> type[C]:
    inherited: Callable[[Any], None] = base.__post_init__

    def __post_init__(self: Any) -> None:
        inherited(self)
        check_screen_model(self.screen_model)

    derived: type[C] = make_dataclass(
        class_name,
        specs,
        bases=(base,),
        kw_only=True,
        namespace={"__post_init__": __post_init__},
    )
    derived.__doc__ = doc
    derived.__module__ = __name__
    derived()  # the defaults pass the checks
    return derived


def screened_settings(base: type[C], class_name: str, doc: str) -> type[C]:
    """``base``'s settings plus the screen's rule (the screen is the method's own first step)."""
    return _derive(base, class_name, doc, _rule_fields())


def sampled_screen_settings(base: type[C], class_name: str, doc: str) -> type[C]:
    """``base``'s settings plus the rule and ``screen_k`` sampled screen answers."""
    return _derive(base, class_name, doc, _sample_fields() + _rule_fields())
