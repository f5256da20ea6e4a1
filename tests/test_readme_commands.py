"""Every shell command of the README, run as a newcomer would on a fresh clone with no folder
beside it, each doing what the README says: models answered by the fake provider, `datasets
get` served by a local server, the `hf:` model by a local Hub, the Milvus lines against a
Milvus server (a `service` test). `NOT_RUN` lists the few it does not run, each with why.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from factdebate.datasets.sources import RELEASES
from tests.conftest import REPO
from tests.datasets.test_get import fixture_files, fixture_release, serving
from tests.doc_commands import (
    Shell,
    answer,
    fresh_clone,
    hide_folder_beside,
    hub_serving,
    page_commands,
)
from tests.fake_provider import FakeProvider, fake_provider

README = REPO / "README.md"
NOT_RUN = {
    "make demo": "the embedded 135M model end to end, minutes on 2 cores (every other line "
    "runs on the fake provider)",
    "make test": "the whole lint and test suite, this test included: what CI runs",
    "source .venv/bin/activate": "a shell's set-up: the test calls the installed command",
    "make milvus-server": "installs PyPI's Milvus 2.3.5 into .milvus-venv, which the service "
    "test below uses when it is there",
    "make bench-scale": "the scale measurements: 100,000 and 1,000,000 passages on a Milvus "
    "server, tens of minutes at the least",
    "make docs": "the strict site build, run by tests/test_docs.py",
}
"""README commands this file does not run (by their start), and why."""
MILVUS = ("PORT=", ".milvus-venv/bin/milvus-server", "factdebate index wiki-pages/")
"""The Milvus server lines, run by `test_milvus_lines_index_wiki_pages_into_a_server`."""
HF = "HF_HUB_OFFLINE=0 factdebate verify"
"""The `hf:` model line, run by `test_hf_model_line_downloads_the_file_once_and_runs_it`."""
PAID = "openai:gpt-4o-mini"
"""A hosted model in the README's lines: the fake provider answers for it (`--estimate` keeps
it, as its price is what the estimate reads)."""


def readme_commands() -> list[str]:
    return page_commands(README)


def fake_model(command: str, provider: FakeProvider) -> str:
    """``command`` with the README's hosted model answered by the fake provider."""
    return command if "--estimate" in command else command.replace(PAID, provider.model())


@pytest.fixture
def clone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh clone, nothing beside it, an empty factdebate home, fever-mini's fixture release."""
    clone = fresh_clone(tmp_path / "factdebate")
    hide_folder_beside(monkeypatch, clone)
    monkeypatch.chdir(clone)
    monkeypatch.setenv("FACTDEBATE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("FACTDEBATE_DATASETS", raising=False)
    monkeypatch.delenv("FACTDEBATE_MODEL", raising=False)
    monkeypatch.setitem(RELEASES, "fever-mini", fixture_release())
    return clone


def test_every_readme_command_runs_or_is_listed() -> None:
    commands = readme_commands()
    assert len(commands) >= 20 and "factdebate methods" in commands
    for command in commands:
        assert command.startswith((*NOT_RUN, *MILVUS, HF, "factdebate ", "export ")), command
    for start in (*NOT_RUN, *MILVUS, HF):
        assert any(c.startswith(start) for c in commands), f"{start!r} is no longer in the README"


def test_every_readme_command_runs_on_a_fresh_clone(clone: Path) -> None:
    commands = [c for c in readme_commands() if not c.startswith((*NOT_RUN, *MILVUS, HF))]
    assert any("--suite" in c for c in commands)
    shell = Shell(clone)
    with serving(fixture_files()) as files, fake_provider(answer) as provider:
        shell.env["FACTDEBATE_DATASETS_MIRROR"] = files.url
        shell.env["FACTDEBATE_MODEL"] = provider.model()  # the embedded default's stand-in
        for command in commands:
            status, said = shell.run(fake_model(command, provider))
            assert status == 0, (command, said[-2000:])
            args = shlex.split(command)
            if args[0] == "export":
                continue
            kind = args[1]
            if kind == "methods":
                assert "tool-mad" in said and "madam-rag" in said
            elif kind == "settings":
                assert "max_rounds" in said
            elif kind == "index":
                assert "indexed 4 documents" in said
            elif kind == "datasets":
                assert "ready in" in said
            elif kind == "verify" and "--json" in args:
                result = json.loads(said.strip().splitlines()[-1])
                assert result["verdict"] or result.get("answers"), result
            elif kind == "verify":
                assert "Verdict" in said
                if "--html" in args:
                    assert (clone / args[args.index("--html") + 1]).is_file()
            elif "--estimate" in args:
                assert "calls" in said.lower()
            elif "--suite" in args:
                suite_did_what_the_readme_says(clone / args[args.index("--out") + 1])
            else:  # the first bench
                out = clone / args[args.index("--out") + 1]
                assert (out / "metrics.json").is_file() and (out / "report.html").is_file()
                assert (out / "results.jsonl").is_file() and (out / "report.md").is_file()
        assert provider.requests  # the runs went to the fake provider
        assert not any(r["model"] == PAID for r in provider.requests)


def suite_did_what_the_readme_says(out: Path) -> None:
    """Tool-MAD, its paper's baselines and self-consistency, each run, in one comparison."""
    members = {
        json.loads((folder / "run.json").read_text())["method"]: folder
        for folder in out.iterdir()
        if (folder / "run.json").is_file()
    }
    assert {"tool-mad", "cot", "self-consistency"} <= set(members), members
    table = (out / "comparison.md").read_text(encoding="utf-8")
    for method, folder in members.items():
        assert method in table, method
        assert (folder / "repeat-5").is_dir(), folder  # --repeats 5


def test_hf_model_line_downloads_the_file_once_and_runs_it(
    clone: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The `hf:` line fetches its GGUF from the Hub into the Hugging Face cache and hands that
    file to the llama.cpp loader; a second run finds it offline. The loader is replaced by the
    fake provider (a 3B model is no test's to load) and the Hub by a local one."""
    from factdebate.tools.models import local_llm, providers

    (command,) = [c for c in readme_commands() if c.startswith(HF)]
    spec = next(word for word in shlex.split(command) if word.startswith("hf:"))
    repo_id, filename = spec.removeprefix("hf:").rsplit("/", 1)
    weights = b"GGUF stand-in weights"
    loaded: list[Path] = []
    monkeypatch.setenv("HF_HUB_CACHE", str(clone.parent / "hub-cache"))
    monkeypatch.setattr(providers, "_cache", {})
    with (
        fake_provider(answer) as provider,
        hub_serving(monkeypatch, repo_id, filename, weights) as hub,
    ):
        stand_in = providers.resolve_model(provider.model())  # built outside resolve's lock

        def load(**settings: object) -> object:
            loaded.append(Path(str(settings["path"])))
            return stand_in

        monkeypatch.setattr(local_llm, "load_local_model", load)
        shell = Shell(clone)
        status, said = shell.run(command)
        assert status == 0, said[-2000:]
        assert ("GET", f"/{repo_id}/resolve/main/{filename}") in hub.requests
        assert loaded and loaded[0].name == filename and loaded[0].read_bytes() == weights
        assert f"models--{repo_id.replace('/', '--')}" in str(loaded[0])
        assert "Verdict" in said and (clone / "runs" / "debate.html").is_file()
        assert provider.requests
        asked = len(hub.requests)
        monkeypatch.setattr(providers, "_cache", {})
        status, said = shell.run(command.replace("HF_HUB_OFFLINE=0 ", ""))  # offline: cached
        assert status == 0, said[-2000:]
        assert len(hub.requests) == asked


def wiki_pages(folder: Path) -> None:
    """A FEVER ``wiki-pages`` folder: JSONL shards of pages, sentences as numbered lines."""
    folder.mkdir()
    pages = {
        "Nikolaj_Coster-Waldau": [
            "Nikolaj William Coster-Waldau -LRB- born 27 July 1970 -RRB- is a Danish actor .",
            "He graduated from the Danish National School of Theatre in Copenhagen in 1993 .",
        ],
        "Eiffel_Tower": ["The Eiffel Tower is a wrought-iron lattice tower in Paris ."],
        "Berlin_Wall": ["The Berlin Wall fell on 9 November 1989 ."],
    }
    lines = [
        json.dumps(
            {
                "id": page,
                "text": " ".join(s),
                "lines": "\n".join(f"{i}\t{sentence}" for i, sentence in enumerate(s)),
            }
        )
        for page, s in pages.items()
    ]
    (folder / "wiki-001.jsonl").write_text(json.dumps({"id": "", "text": "", "lines": ""}) + "\n")
    (folder / "wiki-002.jsonl").write_text("\n".join(lines) + "\n")


@pytest.mark.service
def test_milvus_lines_index_wiki_pages_into_a_server(clone: Path) -> None:
    """The README's Milvus lines, then those of docs/scale.md, against one Milvus server."""
    from tests.milvus_server import MilvusServer, MilvusUnavailable
    from tests.services import running

    lines = [c for c in readme_commands() if c.startswith(MILVUS)]
    scale = [
        c
        for c in page_commands(REPO / "docs" / "scale.md")
        if c.startswith("factdebate") and c not in lines
    ]
    assert len(lines) == 3 and len(scale) == 1
    index = lines[2]
    wiki_pages(clone / "wiki-pages")
    (clone.parent / "milvus").mkdir()
    try:
        server = MilvusServer(clone.parent / "milvus")
    except MilvusUnavailable as exc:
        pytest.skip(f"no Milvus server: {exc}")
    port = {"$PORT": str(server.port)}  # the README's free port: the helper picked one
    try:
        with running(server), fake_provider(answer) as provider:
            shell = Shell(clone, env={"FACTDEBATE_MODEL": provider.model()})
            for command in [index, *scale]:
                for name, value in port.items():
                    command = command.replace(name, value)
                status, said = shell.run(command)
                assert status == 0, (command, said[-2000:])
                if " index " in f" {command} ":
                    assert "indexed 3 documents" in said, said
                else:
                    assert "Verdict" in said
            assert provider.requests
    except MilvusUnavailable as exc:
        pytest.skip(f"no Milvus server: {exc}")
