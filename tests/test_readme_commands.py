"""The README's `factdebate` commands, run as a newcomer would on a fresh clone, each doing what
the README says: models answered by the fake provider, `datasets get` served by a local server.

Left out: the commands that need a network or a service (an `hf:` download, a Milvus server)
and the 100-item `--suite` run (its members are tested in tests/bench/test_suite.py).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from factdebate.cli import app
from factdebate.datasets.sources import RELEASES
from tests.conftest import REPO
from tests.datasets.test_get import fixture_files, fixture_release, serving
from tests.fake_provider import fake_provider

NEEDS_MORE = ("hf:", "--milvus-uri", "--suite")


def readme_commands() -> list[list[str]]:
    """Every `factdebate ...` line of the README's bash blocks (continuations joined)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    commands, block, pending = [], False, ""
    for line in text.splitlines():
        if line.startswith("```"):
            block = line.startswith("```bash")
            continue
        if not block:
            continue
        line = pending + line.split("  #")[0].strip()
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        if line.startswith("factdebate ") and not any(part in line for part in NEEDS_MORE):
            commands.append(shlex.split(line)[1:])
    return commands


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


def test_every_readme_command_runs_on_a_fresh_clone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commands = readme_commands()
    assert len(commands) >= 10 and ["methods"] in commands
    monkeypatch.chdir(tmp_path)  # a clone's own folder: runs/ and the like land here
    for file in ("examples/docs.jsonl",):
        (tmp_path / file).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / file).write_bytes((REPO / file).read_bytes())
    monkeypatch.setenv("FACTDEBATE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("FACTDEBATE_DATASETS", raising=False)
    monkeypatch.setitem(RELEASES, "fever-mini", fixture_release())
    runner = CliRunner()
    with serving(fixture_files()) as files, fake_provider(answer) as provider:
        monkeypatch.setenv("FACTDEBATE_DATASETS_MIRROR", files.url)
        for args in commands:
            if args[0] in ("verify", "bench") and "--estimate" not in args:
                if "--model" in args:
                    args[args.index("--model") + 1] = provider.model()
                else:
                    args += ["--model", provider.model()]
            done = runner.invoke(app, args, env={"COLUMNS": "200"})
            assert done.exit_code == 0, (args, done.output[-2000:])
            said = done.output
            if args[0] == "methods":
                assert "tool-mad" in said and "madam-rag" in said
            elif args[0] == "settings":
                assert "max_rounds" in said
            elif args[0] == "index":
                assert "indexed 4 documents" in said
            elif args[0] == "datasets":
                assert "ready in" in said
            elif args[0] == "verify" and "--json" in args:
                result = json.loads(said.strip().splitlines()[-1])
                assert result["verdict"] or result.get("answers"), result
            elif args[0] == "verify":
                assert "Verdict" in said
            elif "--estimate" in args:
                assert "calls" in said.lower()
            else:  # the first bench
                out = tmp_path / args[args.index("--out") + 1]
                assert (out / "metrics.json").is_file() and (out / "report.html").is_file()
        assert provider.requests  # the runs went to the fake provider
    assert (tmp_path / "runs" / "debate.html").is_file()
