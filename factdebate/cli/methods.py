"""`factdebate methods` and `settings`: what the catalog holds, method by method."""

from __future__ import annotations

from typing import Annotated

import typer

from factdebate.cli.console import fail, out, print_json, print_markdown
from factdebate.settings import (
    GROUPS,
    context_class,
    describe,
    render,
)
from factdebate.tools.core.errors import FactDebateError


def settings_command(
    method: Annotated[str, typer.Argument(help="Method whose settings to list.")],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object, nothing else.")
    ] = False,
) -> None:
    """Every setting of a method, by group: name, type, default, range and meaning."""
    try:
        cls = context_class(method)
    except FactDebateError as exc:
        fail(str(exc))
    infos = describe(cls)
    if as_json:
        payload = {
            "method": method,
            "context": cls.__name__,
            "groups": list(GROUPS),
            "settings": [info.as_dict() for info in infos],
        }
        print_json(payload)
        return
    print_markdown(render(method, infos))


def methods() -> None:
    """List the available methods."""
    from factdebate.graphs.registry import METHODS

    for name, spec in METHODS.items():  # one line each, whatever the width: greppable when piped
        out.print(f"[bold]{name}[/bold] ({spec.input_kind}): {spec.description}", soft_wrap=True)
    out.print("Every setting of one, with defaults and ranges: factdebate settings METHOD")


def register(app: typer.Typer) -> None:
    """Add `settings`, `methods` to the `factdebate` command."""
    app.command(
        "settings",
        epilog="Example: factdebate settings tool-mad (then verify ... --set max_llm_calls=50)",
    )(settings_command)
    app.command(epilog="Example: factdebate methods")(methods)
