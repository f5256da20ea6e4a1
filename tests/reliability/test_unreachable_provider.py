"""A provider that cannot be reached stops `verify` and `bench` in one line, before any run."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from factdebate.cli import app
from tests.bounded import assert_prompt
from tests.fake_provider import fake_provider
from tests.reliability.bench_cli import bench_args, fever_mini, one_line_error, runner

GOOD_PAGE = "<html>the earlier good debate</html>"


def dead_model() -> str:
    """A model at a 127.0.0.1 port that refuses connections (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    return f"openai-compatible:m@http://127.0.0.1:{port}/v1"


@pytest.mark.usefixtures("data_home")
def test_verify_stops_at_a_refused_connection_and_keeps_the_page(tmp_path: Path) -> None:
    page = tmp_path / "debate.html"
    page.write_text(GOOD_PAGE)
    started = time.monotonic()
    args = ["verify", "The sky is blue.", "--method", "cot", "--model", dead_model()]
    result = runner.invoke(app, [*args, "--html", str(page)])
    assert_prompt(started, "verify on a refused connection")
    one_line_error(result, "no connection")
    assert "cannot reach model openai-compatible:m@http://127.0.0.1:" in result.output
    assert "unparseable" not in result.output
    assert page.read_text() == GOOD_PAGE  # the earlier page is not overwritten


@pytest.mark.usefixtures("data_home")
@pytest.mark.parametrize(
    ("status", "cause"), [(401, "refused the credentials"), (404, "unknown model")]
)
def test_verify_stops_at_a_refused_key_or_unknown_model(status: int, cause: str) -> None:
    with fake_provider(lambda prompt, body: "Yes.\n**SUPPORTS**", status=status) as provider:
        result = runner.invoke(
            app, ["verify", "The sky is blue.", "--method", "cot", "--model", provider.model()]
        )
    one_line_error(result, cause)
    assert len(provider.requests) == 1  # the one probe: the debate never started


@pytest.mark.usefixtures("data_home")
def test_bench_stops_before_any_item(tmp_path: Path) -> None:
    out = tmp_path / "run"
    data = fever_mini(tmp_path / "data")
    with fake_provider(lambda prompt, body: "Yes.\n**SUPPORTS**", status=401) as provider:
        result = runner.invoke(app, bench_args(out, data, provider.model()))
    one_line_error(result, "refused the credentials")
    assert len(provider.requests) == 1 and not out.exists()  # no item ran, no folder made
    refused = runner.invoke(app, bench_args(out, data, dead_model()))
    one_line_error(refused, "no connection")
    assert not out.exists()


def test_bench_runs_on_a_reachable_provider(tmp_path: Path) -> None:
    with fake_provider(lambda prompt, body: "Yes.\n**SUPPORTS**") as provider:
        result = runner.invoke(
            app, bench_args(tmp_path / "run", fever_mini(tmp_path / "data"), provider.model())
        )
    assert result.exit_code == 0, result.output
    probes = [r for r in provider.requests if "connection check" in str(r["messages"])]
    assert len(probes) == 1 and len(provider.requests) == 4  # the probe, then 3 items


def test_a_run_without_replies_is_not_called_unparseable() -> None:
    from factdebate.cli.show import no_verdict

    failed = {"kind": "model_error", "message": "APIConnectionError: Connection error."}
    unread = {"kind": "parse_error", "message": "no label"}
    assert no_verdict({"errors": [failed, failed]}) == (
        "NO VERDICT (no reply from the model: 2 failed call(s))"
    )
    assert no_verdict({"errors": [unread]}) == "NO VERDICT (unparseable)"
    assert "unparseable" not in no_verdict({"errors": []})
    assert no_verdict({"errors": [], "stop_reason": "budget_exhausted"}).endswith("exhausted)")
    from factdebate.nodes.labelled import shown_label

    turn = {"agent": "cot", "round": 1, "answer": ""}
    where = {"agent": "cot", "round": 1}
    assert shown_label(turn, [{**failed, **where}]) == "NO REPLY"  # no answer came
    assert shown_label({**turn, "answer": "Maybe."}, [{**unread, **where}]) == "UNPARSED"
    assert shown_label(turn, [{**unread, **where}]) == "UNPARSED"  # a reply came, unreadable
