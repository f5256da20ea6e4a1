"""The one root of every error factdebate raises on purpose."""

from __future__ import annotations


class FactDebateError(Exception):
    """Something the user can act on: a bad setting, file, model, index, dataset or run.

    Every error class of the project derives from it (most also from the built-in type a
    caller would expect, such as ``ValueError``), so one ``except FactDebateError`` catches
    what the project raises on purpose and lets real bugs through.
    """


class SettingsError(FactDebateError, ValueError):
    """A setting, option or argument whose name or value the project refuses."""
