"""Terminal text: model and claim text reach the terminal without escape sequences or markup."""

from __future__ import annotations

import pytest

from factdebate.cli import app
from tests.reliability.bench_cli import runner

pytestmark = pytest.mark.usefixtures("data_home")  # each test indexes (if at all) into its own home


HOSTILE = "\x1b[2J\x1b]0;pwned\x07\x1b]52;c;ZXZpbA==\x07\x9b31m\u202eSUPPORTS\r\x08"


def test_printable_strips_escape_sequences_and_controls() -> None:
    from factdebate.tools.core.terminal import printable

    assert printable(f"ok{HOSTILE} done\tand\nmore") == "okSUPPORTS done\tand\nmore"
    assert printable("plain text, [brackets] and ünïcode") == "plain text, [brackets] and ünïcode"


def test_model_text_reaches_the_terminal_without_control_sequences(scripted) -> None:
    name, _ = scripted([], default=f"Reasoned {HOSTILE} [link=file:///etc]x[/link].\n**SUPPORTS**")
    result = runner.invoke(app, ["verify", "The sky is blue.", "--method", "cot", "--model", name])
    assert result.exit_code == 0, result.output
    assert "Reasoned" in result.output
    for bad in ("\x1b", "\x9b", "\x07", "\x08", "\r", "\u202e"):
        assert bad not in result.output, repr(bad)


def test_a_claim_holding_markup_is_shown_as_text(scripted) -> None:
    name, _ = scripted([], default="Reasoned.\n**SUPPORTS**")
    claim = "The [/] sky [bold]is[/bold] blue."
    result = runner.invoke(app, ["verify", claim, "--method", "cot", "--model", name])
    assert result.exit_code == 0, result.output
    assert claim in result.output
