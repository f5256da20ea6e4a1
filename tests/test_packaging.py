"""What an install holds: one import name, ``factdebate``, with every package and data file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.bounded import COMMAND_GUARD_S, run_bounded
from tests.conftest import REPO

LINKED = ("graphs", "nodes", "tools", "prompts")


SKIPPED_IN_COPY = shutil.ignore_patterns(
    ".git",
    ".venv",
    ".milvus-venv",
    "runs",
    "site",
    "build",
    "*.egg-info",
    "__pycache__",
    ".*_cache",
)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project built as a wheel from a copy of the checkout (links kept as links).

    A build writes build/ and *.egg-info beside its sources, so it never runs in the checkout;
    no build isolation: the setuptools already installed builds it.
    """
    source = tmp_path_factory.mktemp("source") / "factdebate"
    shutil.copytree(REPO, source, symlinks=True, ignore=SKIPPED_IN_COPY)
    out = tmp_path_factory.mktemp("wheel")
    built = run_bounded(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
        + [str(source), "-w", str(out)],
        capture_output=True,
        text=True,
        what="pip wheel",
        guard_s=COMMAND_GUARD_S,
        env={**os.environ, "PIP_NO_INPUT": "1"},
    )
    if built.returncode != 0 and "No module named" in built.stderr:
        pytest.skip(f"cannot build a wheel here: {built.stderr.strip().splitlines()[-1]}")
    assert built.returncode == 0, built.stderr
    (path,) = out.glob("factdebate-*.whl")
    return path


def test_the_wheel_adds_only_the_factdebate_import_name(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"factdebate", wheel.name.split("-py3")[0] + ".dist-info"}
    for package in LINKED:  # the top-level folders, installed inside factdebate/
        assert f"factdebate/{package}/__init__.py" in names, package
    assert "factdebate/tools/retrieval/index.py" in names
    assert "factdebate/nodes/tool_mad/judge.py" in names
    assert "factdebate/data/default_corpus.jsonl" in names
    assert "factdebate/pages/templates/debate.html.j2" in names


def test_the_installed_package_runs_from_outside_the_repository(
    wheel: Path, tmp_path: Path
) -> None:
    """Installed apart from the checkout, every module imports as factdebate.* and no other."""
    target = tmp_path / "site"
    run_bounded(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target)]
        + [str(wheel)],
        check=True,
        capture_output=True,
        what="pip install of the wheel",
        guard_s=COMMAND_GUARD_S,
    )
    script = (
        "import json, os, factdebate\n"
        "from factdebate.graphs.registry import METHODS\n"
        "from factdebate.settings import context_class\n"
        "[context_class(name) for name in METHODS]\n"
        "import factdebate.graphs.tool_mad, factdebate.cli\n"
        "print(json.dumps({'file': factdebate.__file__, 'graph': factdebate.graphs.__file__}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(target), "PYTHONSAFEPATH": "1"}
    shown = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert shown.returncode == 0, shown.stderr
    found = json.loads(shown.stdout.strip().splitlines()[-1])
    assert Path(found["file"]).is_relative_to(target)
    assert Path(found["graph"]).is_relative_to(target)
    installed = {p.name for p in target.iterdir() if not p.name.endswith(".dist-info")}
    assert installed == {"factdebate", "bin"}  # bin/: the `factdebate` console script
    assert [p.name for p in (target / "bin").iterdir()] == ["factdebate"]
