"""The shell commands of the README and the docs pages, run as a newcomer would run them.

A page's commands are the lines of its ``bash`` blocks and the ``$ `` lines of its ``console``
and ``text`` blocks (continuations and multi-line quotes joined, comments dropped). They run on
a copy of the checkout with no folder beside it (`fresh_clone`), in an empty factdebate home,
with every model answered by the fake provider: ``factdebate ...`` in-process, ``python -m
benchmarks...`` as a child process of the copy.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from factdebate.cli import app
from factdebate.datasets import records
from tests.bounded import MODEL_GUARD_S, run_bounded
from tests.conftest import REPO
from tests.services import serving_in_thread

PROMPTED = ("console", "text")
"""Fence languages whose commands are the lines after a ``$ `` prompt (the rest is output)."""


def page_commands(path: Path) -> list[str]:
    """Every shell command of a Markdown page's ``bash``/``console``/``text`` blocks, in order."""
    commands: list[str] = []
    fence: str | None = None
    pending = ""
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if line.startswith("```"):
            fence = None if fence is not None else line[3:].strip()
            pending = ""
            continue
        if fence not in ("bash", *PROMPTED):
            continue
        if not pending and fence in PROMPTED:
            if not line.startswith("$ "):
                continue
            line = line[2:].strip()
        if not pending and (not line or line.startswith("#")):
            continue
        line = pending + (line if "'" in pending else line.split("  #")[0].strip())
        if line.endswith("\\"):
            pending = line[:-1].rstrip() + " "
            continue
        try:
            shlex.split(line)
        except ValueError:  # a quote opened on this line closes on a later one
            pending = line + "\n"
            continue
        pending = ""
        commands.append(line)
    return commands


def fresh_clone(into: Path) -> Path:
    """A copy of the checkout's files (tracked and not ignored) at ``into``, links kept as links.

    Nothing is beside it: a command that needs ``../shared`` fails here as on a user's clone.
    """
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source, target = REPO / name, into / name
        if not os.path.lexists(source):
            continue  # deleted in the working tree, not yet in the index
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        elif source.is_file():
            shutil.copyfile(source, target)
    return into


def hide_folder_beside(monkeypatch: pytest.MonkeyPatch, clone: Path) -> None:
    """What the package computes as the folder beside its checkout, as it would in ``clone``."""
    monkeypatch.setattr(records, "BESIDE_CHECKOUT", clone.parent / "shared" / "datasets")


def fill(schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    """A value of a JSON schema that reads as a plain, supported answer."""
    if "$ref" in schema:
        return fill(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    if "anyOf" in schema:
        return fill(next(s for s in schema["anyOf"] if s.get("type") != "null"), defs)
    kind = schema.get("type")
    if kind == "object":
        return {k: fill(v, defs) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        return [fill(schema.get("items", {"type": "string"}), defs)]
    if kind in ("integer", "number"):
        return 0
    if kind == "boolean":
        return False
    if "enum" in schema:
        return schema["enum"][0]
    return "William Shakespeare wrote Hamlet [1]."


def answer(prompt: str, body: dict[str, Any]) -> str:
    """The fake provider's reply: JSON for a schema, a query, else a labelled argument."""
    wanted = (body.get("response_format") or {}).get("json_schema")
    if wanted:
        schema = wanted["schema"]
        value = fill(schema, schema.get("$defs", {}))
        statements = value.get("statements") if isinstance(value, dict) else None
        if statements and isinstance(statements[0], dict):
            statements[0]["verdict"] = 1  # the statement is backed by the documents
        return json.dumps(value)
    if "inside square brackets" in prompt:
        return "[Hamlet author]"
    return "Document 1 says so [1].\n**SUPPORTS**"


@dataclass
class Shell:
    """Runs commands in ``cwd`` as a user's shell would, keeping ``export``-ed variables."""

    cwd: Path
    env: dict[str, str] = field(default_factory=dict)
    runner: CliRunner = field(default_factory=CliRunner)
    stdin: str = ""
    """What the user types when a command asks (``factdebate`` commands)."""

    def run(self, command: str, timeout: float = MODEL_GUARD_S) -> tuple[int, str]:
        """Exit status and output of one command line (``factdebate`` runs in-process)."""
        words = shlex.split(command)
        if words[0] == "export":
            self.env.update(word.split("=", 1) for word in words[1:])  # type: ignore[misc]
            return 0, ""
        env = dict(self.env)
        while re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
            name, _, value = words.pop(0).partition("=")
            env[name] = value
        if words[0] == "mkdir":
            for folder in (w for w in words[1:] if not w.startswith("-")):
                (self.cwd / folder).mkdir(parents=True, exist_ok=True)
            return 0, ""
        if words[0] == "factdebate":
            previous = Path.cwd()
            os.chdir(self.cwd)
            try:
                done = self.runner.invoke(
                    app, words[1:], input=self.stdin, env={"COLUMNS": "200", **env}
                )
            finally:
                os.chdir(previous)
            said = done.output
            if done.exception is not None and not isinstance(done.exception, SystemExit):
                said += f"\n{type(done.exception).__name__}: {done.exception}"
            return done.exit_code, said
        if words[0] in ("python", "python3", ".venv/bin/python"):
            child_env = {**os.environ, **env, "PYTHONPATH": str(self.cwd), "COLUMNS": "200"}
            done_child = run_bounded(
                [sys.executable, *words[1:]],
                what=command,
                guard_s=timeout,
                cwd=self.cwd,
                env=child_env,
                capture_output=True,
                text=True,
                check=False,
            )
            return done_child.returncode, done_child.stdout + done_child.stderr
        raise AssertionError(f"no way to run {command!r} here: run it or list it with a reason")


class HubServer:
    """Serves one file as the Hugging Face Hub does: ``HEAD``/``GET /REPO/resolve/REV/FILE``."""

    COMMIT = "0123456789abcdef0123456789abcdef01234567"

    def __init__(self, repo_id: str, filename: str, data: bytes) -> None:
        self.path = f"/{repo_id}/resolve/main/{filename}"
        self.data = data
        self.requests: list[tuple[str, str]] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def _head(self) -> bool:
                hub.requests.append((self.command, self.path))
                if self.path != hub.path:
                    self.send_error(404)
                    return False
                self.send_response(200)
                self.send_header("X-Repo-Commit", hub.COMMIT)
                self.send_header("ETag", f'"{hashlib.sha256(hub.data).hexdigest()}"')
                self.send_header("Content-Length", str(len(hub.data)))
                self.end_headers()
                return True

            def do_HEAD(self) -> None:
                self._head()

            def do_GET(self) -> None:
                if self._head():
                    self.wfile.write(hub.data)

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"


@contextmanager
def hub_serving(
    monkeypatch: pytest.MonkeyPatch, repo_id: str, filename: str, data: bytes
) -> Iterator[HubServer]:
    """``huggingface_hub`` pointed at a local server holding one file (its constants are read at
    import, so they are patched, as ``HF_ENDPOINT`` would set them in a new process)."""
    from huggingface_hub import constants

    hub = HubServer(repo_id, filename, data)
    monkeypatch.setattr(constants, "ENDPOINT", hub.url)
    template = hub.url + "/{repo_id}/resolve/{revision}/{filename}"
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", template)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    with serving_in_thread(hub.http):
        yield hub
