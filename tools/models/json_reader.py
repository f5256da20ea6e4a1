"""Read one JSON object from what a model wrote: fences, prose around it, small syntax slips."""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

import json_repair
from pydantic import BaseModel, ValidationError

SchemaT = TypeVar("SchemaT", bound=BaseModel)

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_KEY_SPACES = re.compile(r"[\s\-]+")


def json_object(text: str) -> dict[str, Any] | str:
    """The first JSON object in ``text``, or the reason there is none.

    Looks inside a fenced code block when there is one, decodes the first ``{...}`` and
    ignores what follows it (models add prose, sometimes with braces of its own), and
    repairs small slips (trailing commas, single quotes) with ``json_repair``. Text that
    ends inside the object (an answer cut at the output cap) is not repaired: a cut list
    would silently read as a shorter one.
    """
    fenced = _FENCE.search(text)
    body = fenced.group(1) if fenced else text
    start = body.find("{")
    if start < 0:
        return "no JSON object in output"
    try:
        value, _ = json.JSONDecoder().raw_decode(body, start)
    except json.JSONDecodeError:
        if not _closes(body[start:]):
            return "the JSON object is not closed (output cut off?)"
        value = json_repair.loads(body[start:])
    if not isinstance(value, dict):
        return "no JSON object in output"
    return value


def _closes(text: str) -> bool:
    """Whether the braces of ``text`` balance somewhere (outside strings), closing the object."""
    depth, in_string, escaped = 0, False, False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return True
    return False


def key_form(key: str) -> str:
    """``"Proceeding Necessity"`` -> ``"proceeding_necessity"``: how keys are compared."""
    return _KEY_SPACES.sub("_", key.strip().lower())


def read_model(
    text: str, schema: type[SchemaT], aliases: dict[str, str] | None = None
) -> SchemaT | str:
    """Validate the first JSON object in ``text`` against ``schema``; else the reason why not.

    Keys are matched case- and spacing-insensitively to the schema's fields; ``aliases`` (and
    a ``key_aliases`` class attribute of the schema) map other key spellings, in ``key_form``,
    to field names, e.g. a paper's own key names.
    """
    found = json_object(text)
    if isinstance(found, str):
        return found
    return validate(found, schema, aliases)


def validate(
    value: dict[str, Any], schema: type[SchemaT], aliases: dict[str, str] | None = None
) -> SchemaT | str:
    """Validate an already decoded object, renaming keys as ``read_model`` does."""
    fields = {key_form(name): name for name in schema.model_fields}
    aliases = {**getattr(schema, "key_aliases", {}), **(aliases or {})}
    renamed: dict[str, Any] = {}
    for key, item in value.items():
        form = key_form(str(key))
        name = fields.get(form) or aliases.get(form) or str(key)
        renamed.setdefault(name, item)
    try:
        return schema.model_validate(renamed)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'object'}: {e['msg']}"
            for e in exc.errors()[:3]
        )
        return f"invalid JSON for {schema.__name__}: {exc.error_count()} error(s): {problems}"
