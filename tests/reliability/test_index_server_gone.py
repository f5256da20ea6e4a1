"""A Milvus server stopped in the middle of `factdebate index`: one line naming it, no traceback."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.bounded import MODEL_GUARD_S, assert_prompt, communicate_bounded
from tests.conftest import REPO
from tests.milvus_server import MilvusUnavailable, running_milvus

pytestmark = pytest.mark.service


def test_a_server_stopped_mid_ingest_is_named_in_one_line(tmp_path: Path) -> None:
    """The build stops within two minutes with one ``error:`` line naming the server."""
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(
        "".join(
            json.dumps({"id": str(i), "text": f"Fact {i} about a thing that happened."}) + "\n"
            for i in range(20000)
        )
    )
    try:
        with running_milvus() as server:
            args = ["index", str(corpus), "--collection", "gone", "--milvus-uri", server.uri]
            args += ["--progress-every", "2"]
            build = subprocess.Popen(
                [sys.executable, "-c", "from factdebate.cli import app; app()", *args],
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                env={
                    **os.environ,
                    "FACTDEBATE_HOME": str(tmp_path / "home"),
                    "PYTHONPATH": str(REPO),
                },
            )
            assert build.stdout is not None
            seen: list[str] = []
            for line in build.stdout:  # wait for the first stored step, then pull the plug
                seen.append(line)
                if re.search(r"· [1-9][0-9]* passages", line):
                    break
            server.stop()
            stopped = time.monotonic()
            rest, _ = communicate_bounded(
                build, what="the index build after its server stopped", guard_s=MODEL_GUARD_S
            )
    except MilvusUnavailable as exc:
        pytest.skip(f"no Milvus server: {exc}")
    output = "".join(seen) + rest
    assert build.returncode == 2, output[-3000:]
    assert_prompt(stopped, "the index build after its server stopped")
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert errors == [line for line in output.splitlines() if "error" in line.lower()], output
    assert len(errors) == 1 and "Traceback" not in output
    assert errors[0].startswith(f"error: the Milvus server at {server.uri} failed while indexing")
