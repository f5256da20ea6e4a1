"""Hostile output targets: pipes, symlinks and folders refused; files replaced whole, one mode."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from factdebate.cli import app
from tests.bounded import COMMAND_GUARD_S, run_bounded
from tests.conftest import REPO
from tests.reliability.bench_cli import bench_args, fever_mini, one_line_error, runner


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.html"
    os.mkfifo(path)
    return path


@pytest.mark.usefixtures("data_home")
def test_write_atomic_refuses_a_pipe_a_symlink_and_a_folder(tmp_path: Path, fifo: Path) -> None:
    from factdebate.tools.core.files import OutputTargetError, write_atomic

    real = tmp_path / "real.txt"
    real.write_text("keep me", encoding="utf-8")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    folder = tmp_path / "folder"
    folder.mkdir()
    for target, message in (
        (fifo, "is not a regular file"),
        (link, "is a symlink"),
        (folder, "is a folder"),
    ):
        with pytest.raises(OutputTargetError, match=message):
            write_atomic(target, "<html></html>")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # still the pipe, not a regular file
    assert link.is_symlink() and real.read_text(encoding="utf-8") == "keep me"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


@pytest.mark.usefixtures("data_home")
def test_verify_html_at_a_pipe_is_refused_before_any_model_call(fifo: Path, scripted) -> None:
    name, model = scripted([], default="Reasoned.\n**SUPPORTS**")
    result = runner.invoke(
        app, ["verify", "The sky is blue.", "--method", "cot", "--model", name, "--html", str(fifo)]
    )
    one_line_error(result, "is not a regular file")
    assert model.prompts == []
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.usefixtures("data_home")
def test_verify_html_at_a_symlink_is_refused(tmp_path: Path, scripted) -> None:
    real = tmp_path / "elsewhere.txt"
    real.write_text("not a page", encoding="utf-8")
    link = tmp_path / "debate.html"
    link.symlink_to(real)
    name, model = scripted([], default="Reasoned.\n**SUPPORTS**")
    result = runner.invoke(
        app, ["verify", "The sky is blue.", "--method", "cot", "--model", name, "--html", str(link)]
    )
    one_line_error(result, "is a symlink")
    assert model.prompts == [] and real.read_text(encoding="utf-8") == "not a page"


@pytest.mark.usefixtures("data_home")
def test_bench_compare_html_at_a_pipe_is_refused(tmp_path: Path, fifo: Path, scripted) -> None:
    name, _ = scripted([], default="Reasoned.\n**SUPPORTS**")
    out = tmp_path / "run"
    data = fever_mini(tmp_path / "data")
    assert runner.invoke(app, bench_args(out, data, name)).exit_code == 0
    result = runner.invoke(app, ["bench", "--compare", str(out), "--html", str(fifo)])
    assert result.exit_code == 2, result.output
    assert "is not a regular file" in result.output and "Traceback" not in result.output
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.usefixtures("data_home")
def test_result_files_share_one_mode_and_keep_a_chosen_one(tmp_path: Path, scripted) -> None:
    from factdebate.tools.core.files import write_atomic

    old = os.umask(0o022)
    try:
        name, _ = scripted([], default="Reasoned.\n**SUPPORTS**")
        out = tmp_path / "run"
        assert (
            runner.invoke(app, bench_args(out, fever_mini(tmp_path / "data"), name)).exit_code == 0
        )
        modes = {
            p.name: stat.S_IMODE(p.stat().st_mode)
            for p in out.iterdir()
            if p.is_file() and p.suffix in (".json", ".jsonl", ".md", ".html", ".png")
        }
        assert {"metrics.json", "report.md", "run.json", "results.jsonl"} <= set(modes)
        assert set(modes.values()) == {0o644}, modes
        private = tmp_path / "private.txt"
        private.write_text("x", encoding="utf-8")
        private.chmod(0o600)
        write_atomic(private, "y")
        assert stat.S_IMODE(private.stat().st_mode) == 0o600
    finally:
        os.umask(old)


@pytest.mark.usefixtures("data_home")
@pytest.mark.parametrize("kind", ["file", "pipe", "under-a-file"])
def test_bench_out_that_cannot_be_a_run_folder_is_one_line(
    kind: str, tmp_path: Path, scripted
) -> None:
    name, model = scripted([], default="Reasoned.\n**SUPPORTS**")
    blocker = tmp_path / "taken"
    if kind == "pipe":
        os.mkfifo(blocker)
    else:
        blocker.write_text("a file", encoding="utf-8")
    out = blocker / "run" if kind == "under-a-file" else blocker
    result = runner.invoke(app, bench_args(out, fever_mini(tmp_path / "data"), name))
    one_line_error(result, f"--out {out}")
    assert model.prompts == []


@pytest.mark.usefixtures("data_home")
def test_bench_results_file_that_is_a_pipe_is_refused(tmp_path: Path, scripted) -> None:
    import threading

    name, model = scripted([], default="Reasoned.\n**SUPPORTS**")
    out = tmp_path / "run"
    out.mkdir()
    pipe = out / "results.jsonl"
    os.mkfifo(pipe)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(pipe.read_bytes()), daemon=True)
    reader.start()  # drains the pipe if anything writes to it, so a regression cannot hang
    try:
        result = runner.invoke(app, bench_args(out, fever_mini(tmp_path / "data"), name))
    finally:
        if reader.is_alive():  # nothing opened it for writing: release the reader
            with open(pipe, "wb"):
                pass
        reader.join(timeout=10)
    one_line_error(result, "is not a regular file")
    assert model.prompts == [] and got == [b""]


REWRITE_UNDER_A_FULL_DISK = """
import resource, signal, sys
import json
from pathlib import Path
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
limit = int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
from factdebate.bench.running.results import repair_results
try:
    repair_results(Path(sys.argv[1]))
except OSError as exc:
    print("write failed:", exc.errno)
"""


def test_a_failed_rewrite_of_results_keeps_every_finished_row(tmp_path: Path):
    """A disk that fills up while resume rewrites results.jsonl must not cost finished rows."""
    import json
    import sys

    from factdebate.bench import read_results

    path = tmp_path / "results.jsonl"
    rows = [
        {"id": f"item-{i}", "gold": "SUPPORTS", "prediction": "SUPPORTS", "note": "x" * 200}
        for i in range(40)
    ]
    text = "".join(json.dumps(r) + "\n" for r in rows) + '{"id": "item-40", "predic'
    path.write_text(text, encoding="utf-8")  # a truncated last line forces the rewrite
    limit = len(text) // 2
    done = run_bounded(
        [sys.executable, "-c", REWRITE_UNDER_A_FULL_DISK, str(path), str(limit)],
        capture_output=True,
        text=True,
        what="the CLI child",
        guard_s=COMMAND_GUARD_S,
        cwd=REPO,
    )
    assert "write failed" in done.stdout, done.stdout + done.stderr
    assert [r["id"] for r in read_results(path)] == [r["id"] for r in rows]
    assert [p.name for p in tmp_path.iterdir()] == ["results.jsonl"], "a temp file was left"


def test_write_atomic_replaces_the_whole_file(tmp_path: Path):
    from factdebate.tools.core.files import write_atomic

    path = tmp_path / "sub" / "metrics.json"
    write_atomic(path, "first\n")
    write_atomic(path, b"second\n")
    assert path.read_bytes() == b"second\n"
    assert sorted(p.name for p in path.parent.iterdir()) == ["metrics.json"]
