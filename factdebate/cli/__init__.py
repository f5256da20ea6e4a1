"""The `factdebate` command: a root that registers each command module's commands."""

from __future__ import annotations

import os
import sys

for _name, _value in {
    "HF_HUB_OFFLINE": "1",
    "RAGAS_DO_NOT_TRACK": "true",
    "GRPC_VERBOSITY": "NONE",
    "TRANSFORMERS_VERBOSITY": "error",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TOKENIZERS_PARALLELISM": "false",
}.items():
    os.environ.setdefault(_name, _value)

import typer  # noqa: E402

from factdebate.cli import (  # noqa: E402
    answers,
    bench,
    calibrate,
    datasets,
    evidence,
    index,
    methods,
    review,
    training,
    verify,
)
from factdebate.cli.console import err  # noqa: E402
from factdebate.cli.helptext import tidy_help  # noqa: E402
from factdebate.tools.core.errors import FactDebateError  # noqa: E402

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Verify facts by multi-agent LLM debate over evidence.",
    epilog='Example: factdebate verify "The Eiffel Tower is in Paris." (then factdebate --help '
    "COMMAND for any other command)",
)
for _module in (
    verify,
    index,
    bench,
    calibrate,
    answers,
    training,
    methods,
    review,
    datasets,
    evidence,
):
    _module.register(app)
tidy_help(app)  # whole paragraphs in help screens, flags shown without a type


def main() -> None:
    """Console-script entry point: an error the project raises on purpose is one line, exit 2."""
    from factdebate.tools.core.secrets import install_redacted_tracebacks, install_secret_filters

    install_secret_filters()
    install_redacted_tracebacks()  # even a bug's traceback shows no password
    try:
        app()
    except FactDebateError as exc:
        err.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        sys.exit(2)
