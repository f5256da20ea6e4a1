"""Every bench output names the model of every role, the encoder, search, version and commit."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from factdebate.bench.judging.page import write_compare_page
from factdebate.bench.judging.report import compare_runs
from factdebate.tools.models.providers import register_model
from tests.bench.test_runner import bench, make_data
from tests.fakes import ScriptedChatModel

KEY = "sk-provenance-secret-0123456789abcdef"


def test_run_outputs_name_the_resolved_models(
    tmp_path: Path,
    scripted: Callable[..., tuple[str, ScriptedChatModel]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A model from FACTDEBATE_MODEL (no --model) is named in run.json, metrics and every page."""
    name, _ = scripted([], default="Yes.\n**SUPPORTS**")
    # a judge URL holding a key: the run reaches it by name, the outputs never show the key
    judge = register_model(
        f"openai-compatible:judge@http://user:{KEY}@127.0.0.1:9/v1",
        ScriptedChatModel(default="Yes.\n**SUPPORTS**"),
    )
    monkeypatch.setenv("FACTDEBATE_MODEL", name)
    data = make_data(tmp_path / "data", "SR")
    metrics = bench(tmp_path, data, name, context={"judge_model": judge})
    run = tmp_path / "run"
    recorded = json.loads((run / "run.json").read_text())["provenance"]
    assert recorded["models"]["model"] == name and recorded["models"]["debater_model"] == name
    assert recorded["models"]["judge_model"].startswith("openai-compatible:judge@http://")
    assert recorded["search_backend"] == "offline" and recorded["encoder"]
    assert recorded["version"] and "commit" in recorded
    assert metrics["run"]["provenance"] == recorded
    assert metrics["cost"]["models"]["debater"] == [name]  # priced by the resolved model
    for page in ("run.json", "metrics.json", "report.md", "report.html"):
        text = (run / page).read_text()
        assert name in text and KEY not in text, page
    report = (run / "report.md").read_text()
    assert f"debater model `{name}`" in report and "judge model `openai-compatible:judge@" in report
    assert name in compare_runs([run]) and KEY not in compare_runs([run])
    html = write_compare_page(tmp_path / "compare.html", [run]).read_text()
    assert 'id="provenance"' in html and name in html and KEY not in html


def test_commit_is_none_without_git(monkeypatch: pytest.MonkeyPatch) -> None:
    """No git on the machine: the commit is unknown and the run goes on."""
    from factdebate.bench.judging import provenance

    def no_git(*args: object, **kwargs: object) -> None:
        raise FileNotFoundError("git")

    provenance.git_commit.cache_clear()
    monkeypatch.setattr(subprocess, "run", no_git)
    try:
        assert provenance.git_commit() is None
    finally:
        provenance.git_commit.cache_clear()
    assert provenance.provenance_rows(None) == [
        ("models", "not recorded (a run from before they were)")
    ]
