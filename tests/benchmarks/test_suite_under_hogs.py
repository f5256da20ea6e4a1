"""The CI-under-hogs benchmark runs a clone's .ci/run beside the loops and reports its outcome."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from benchmarks import suite_under_hogs

SUMMARY = "=========== 3 passed, 1 skipped in 0.10s ==========="


def repo_with_ci(root: Path, body: str) -> Path:
    """A git repository whose .ci/run is ``body`` (what the benchmark runs in its clone)."""
    (root / ".ci").mkdir(parents=True)
    (root / ".ci" / "run").write_text(body, encoding="utf-8")
    for command in (
        ["git", "init", "-q"],
        ["git", "add", "."],
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "ci"],
    ):
        subprocess.run(command, cwd=root, check=True, timeout=60)
    return root


@pytest.mark.parametrize("code", [0, 1])
def test_the_runs_exit_log_summary_and_home_are_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], code: int
) -> None:
    body = f'echo "home=$HOME ci=$CI"\necho "{SUMMARY}"\nexit {code}\n'
    monkeypatch.setattr(suite_under_hogs, "REPO", repo_with_ci(tmp_path / "repo", body))
    out = tmp_path / "out"
    assert suite_under_hogs.main(["--hogs", "1", "--out", str(out)]) == code
    printed = capsys.readouterr().out
    assert f"exit {code}," in printed and "1 busy loops at nice 0" in printed
    assert "pytest: 3 passed, 1 skipped in 0.10s" in printed
    log = (out / "ci.log").read_text(encoding="utf-8")
    assert "ci=true" in log and "home=" in log and str(Path.home()) not in log.split("home=")[1]
