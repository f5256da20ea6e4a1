"""A Milvus Lite database that cannot open says its own cause at once; only a held one waits."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from factdebate.cli import app
from factdebate.tools.retrieval.manifest import IndexUnavailableError
from factdebate.tools.retrieval.milvus import BUSY_HINT, milvus_client
from tests.bounded import COMMAND_GUARD_S, PROMPT_S, assert_prompt, run_bounded
from tests.conftest import REPO
from tests.reliability.bench_cli import one_line_error, runner

AT_ONCE_S = PROMPT_S  # far above an open's work, far below the full wait set below


def open_fails(path: Path) -> str:
    """The one-line error of opening ``path``, which must come within ``AT_ONCE_S``."""
    started = time.monotonic()
    with pytest.raises(IndexUnavailableError) as caught:
        milvus_client(str(path))
    assert time.monotonic() - started < AT_ONCE_S
    message = str(caught.value)
    assert "\n" not in message and BUSY_HINT not in message, message
    return message


@pytest.fixture(autouse=True)
def full_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """The longest wait for a held file: no cause below may spend it."""
    monkeypatch.setenv("FACTDEBATE_INDEX_WAIT_S", "600")


def test_a_file_of_junk_bytes_is_not_a_lite_database(tmp_path: Path) -> None:
    junk = tmp_path / "milvus.db"
    junk.write_bytes(os.urandom(4096))
    assert "it is a file, not a Milvus Lite database" in open_fails(junk)
    assert junk.stat().st_size == 4096  # left as it was


def test_a_folder_of_other_files_is_not_a_lite_database(tmp_path: Path) -> None:
    folder = tmp_path / "milvus.db"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    assert "the folder holds other files, not a Milvus Lite database" in open_fails(folder)
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]  # nothing written into it


def test_a_missing_folder_is_named(tmp_path: Path) -> None:
    message = open_fails(tmp_path / "no" / "such" / "milvus.db")
    assert f"its folder {tmp_path / 'no' / 'such'} does not exist" in message


def test_an_empty_folder_and_a_lite_database_open(tmp_path: Path) -> None:
    (tmp_path / "empty.db").mkdir()
    assert milvus_client(str(tmp_path / "empty.db")).list_collections() == []
    assert milvus_client(str(tmp_path / "new.db")).list_collections() == []


def test_index_names_the_junk_file_in_one_line(tmp_path: Path, data_home: Path) -> None:
    data_home.mkdir(parents=True)
    (data_home / "milvus.db").write_bytes(os.urandom(1024))
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "1", "text": "The Sun is a star."}\n')
    started = time.monotonic()
    result = runner.invoke(app, ["index", str(corpus), "--collection", "junk"])
    assert_prompt(started, "index on a junk file")  # refused before the encoder loads
    one_line_error(result, "it is a file, not a Milvus Lite database")


TRY_OPEN = """
import sys, time
from factdebate.tools.retrieval.milvus import milvus_client
from factdebate.tools.core.errors import FactDebateError
started = time.monotonic()
try:
    milvus_client(sys.argv[1])
    print("opened")
except FactDebateError as exc:
    print(f"{time.monotonic() - started:.2f} {exc}")
"""


def in_private_mount(tmp_path: Path, setup: str, target: str) -> str:
    """Run TRY_OPEN on ``target`` inside a private mount namespace after shell ``setup``.

    The tmpfs mounted by ``setup`` lives only as long as that namespace: nothing is left
    mounted, whatever happens. Skips where mount namespaces are not allowed.
    """
    if shutil.which("unshare") is None or os.geteuid() != 0:
        pytest.skip("needs root and unshare(1) to mount a throw-away file system")
    probe = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "true"], capture_output=True
    )
    if probe.returncode != 0:
        pytest.skip(f"no private mount namespace here: {probe.stderr.decode()[:200]}")
    script = f'{setup} && exec "{sys.executable}" -c "$TRY_OPEN" "{target}"'
    done = run_bounded(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
        cwd=REPO,
        env={**os.environ, "TRY_OPEN": TRY_OPEN, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        what="a Milvus Lite open in a private mount",
        guard_s=COMMAND_GUARD_S,
    )
    lines = done.stdout.strip().splitlines()
    assert done.returncode == 0 and lines, done.stderr[-2000:]
    seconds, _, message = lines[-1].partition(" ")
    assert float(seconds) < AT_ONCE_S, lines
    assert BUSY_HINT not in message
    return message


def test_a_home_on_a_read_only_file_system_says_so(tmp_path: Path) -> None:
    mount = tmp_path / "ro"
    mount.mkdir()
    setup = (
        f"mount -t tmpfs -o size=256k tmpfs {mount} && mkdir {mount}/home && "
        f"mount -o remount,ro {mount}"
    )
    message = in_private_mount(tmp_path, setup, f"{mount}/home/milvus.db")
    assert "its file system is read-only" in message


def test_a_full_disk_says_so(tmp_path: Path) -> None:
    mount = tmp_path / "full"
    mount.mkdir()
    setup = (
        f"mount -t tmpfs -o size=256k tmpfs {mount} && "
        f"(head -c 1048576 /dev/zero > {mount}/filler 2>/dev/null; true)"
    )
    message = in_private_mount(tmp_path, setup, f"{mount}/milvus.db")
    assert "the disk is full" in message
