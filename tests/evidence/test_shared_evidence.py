"""`bench --suite ... --shared-evidence`: members after the debate read only the debate's pool."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from factdebate.bench import run_bench
from factdebate.bench.judging.suite import SuitePlan, write_comparison
from factdebate.bench.running.suite_runs import check_suite, run_suite
from factdebate.evidence import open_snapshot
from factdebate.tools.core.errors import SettingsError
from factdebate.tools.core.records import Evidence
from factdebate.tools.dispatch import override_tool
from tests.bench.test_runner import make_data
from tests.conftest import doc
from tests.fakes import ragas_rules

PLAN = SuitePlan("tool-mad", ("cot",), "self-consistency")


def live_tool(tool: str, seen: list[str]) -> Callable[[str, int], list[Evidence]]:
    def fetch(query: str, k: int) -> list[Evidence]:
        seen.append(tool)
        words = "-".join(query.lower().split())[:40]
        return [
            doc(f"{tool}-{words}", f"{tool} page on {query}."),
            doc(f"{tool}-paris", "Paris is the capital of France."),
        ][:k]

    return fetch


def refused(query: str, k: int) -> list[Evidence]:
    raise AssertionError(f"a member called a live tool for {query!r}")


@pytest.mark.usefixtures("data_home")
def test_members_after_the_debate_read_only_its_pool(tmp_path: Path, scripted: Any) -> None:
    data = make_data(tmp_path / "data", "SR")
    model, _ = scripted(
        [
            *ragas_rules(faithful=True, relevant_question="Which city is the capital of France?"),
            ("inside square brackets", "[Paris facts]"),
        ],
        default="The documents say so.\n**SUPPORTS**",
    )
    seen: list[str] = []
    ran: list[tuple[str, dict[str, Any]]] = []

    def run(method: str, folder: Path, settings: dict[str, Any]) -> None:
        ran.append((method, settings))
        for tool in ("rag", "search"):
            override_tool(tool, live_tool(tool, seen) if method == PLAN.method else refused)
        run_bench(
            method,
            "fever-mini",
            folder,
            data_dir=data,
            limit=None,
            seed=0,
            concurrency=1,
            context=settings,
            pages=False,
        )

    settings = {"model": model, "max_rounds": 1, "collection": "default"}
    try:
        folders = run_suite(
            PLAN, tmp_path / "suite", settings, run, lambda *_: 2, shared_evidence=True
        )
    finally:
        for tool in ("rag", "search"):
            override_tool(tool, None)
    debate = folders[0]
    assert ran[0] == ("tool-mad", settings) and seen  # the debate read live tools
    pooled = {"evidence_from": str(debate), "evidence_scope": "claim"}
    assert ran[1] == ("cot", {**settings, **pooled})
    assert ran[2] == ("self-consistency", {**settings, **pooled, "k": 2})
    pool: dict[str, set[str]] = {}
    for call in open_snapshot(debate).calls:
        pool.setdefault(call.item, set()).update(call.docs)
    member = open_snapshot(folders[2])  # self-consistency's samples retrieve: from the pool
    assert member.calls and {c.origin for c in member.calls} == {"snapshot"}
    for call in member.calls:
        assert call.docs and set(call.docs) <= pool[call.item]
    table = write_comparison(tmp_path / "suite", folders)
    assert "## Evidence" in table
    assert "| tool-mad | live tools (recorded in its evidence log) |" in table
    assert "| cot | none: it reads the claim alone |" in table
    assert "| self-consistency | the pool of tool-mad (claim scope, snapshot " in table


def test_shared_evidence_is_refused_with_a_server_or_another_snapshot(tmp_path: Path) -> None:
    data = make_data(tmp_path / "data", "SR")
    options = {"data_dir": data, "limit": None, "seed": 0}
    with pytest.raises(SettingsError, match="--shared-evidence is for local runs"):
        check_suite(
            PLAN,
            "fever-mini",
            tmp_path / "suite",
            {},
            match_on="calls",
            options={**options, "server_url": "http://127.0.0.1:9"},
            shared_evidence=True,
        )
    with pytest.raises(SettingsError, match="drop --evidence-from"):
        check_suite(
            PLAN,
            "fever-mini",
            tmp_path / "suite",
            {"evidence_from": str(tmp_path)},
            match_on="calls",
            options=options,
            shared_evidence=True,
        )
