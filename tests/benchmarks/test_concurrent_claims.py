"""The concurrent-claims benchmark runs end to end on a fast fake provider; figures come from it."""

from __future__ import annotations

import json

import pytest

from benchmarks.concurrent_claims import Delayed, main, scripted_answer


def test_benchmark_prints_both_clients_for_one_and_many_claims(capsys: pytest.CaptureFixture[str]):
    args = ["--latency", "0.01", "--claims", "2", "--repeats", "1", "--json"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    rows = [line for line in printed.splitlines() if line.startswith("| ")]
    assert len(rows) == 5  # header + 2 clients x (1 claim, 2 claims at once)
    result = json.loads(printed[printed.index("{") :])
    for client in ("this code", "LangChain's ChatOpenAI"):
        assert result[client]["one"]["calls"] == 31  # 3 rounds x 10 calls + the judge
        assert result[client]["many"]["calls"] == 62
        assert result[client]["many"]["cpu_ms_per_call"] > 0


def test_a_request_waits_once_whatever_its_number_of_choices():
    delayed = Delayed(0.0)
    body: dict[str, object] = {}
    waits = []
    for _ in range(3):
        before = getattr(delayed.local, "body", None)
        delayed("AnswerRelevanceOutput", body)
        waits.append(before is not body)
    assert waits == [True, False, False]
    assert "question" in scripted_answer("AnswerRelevanceOutput (claim 1)", {})


def test_bad_settings_are_refused():
    with pytest.raises(SystemExit):
        main(["--claims", "0"])
