"""Every shell command of the docs pages, run page by page, in order, as a newcomer would on a
fresh clone with no folder beside it: models answered by the fake provider, the datasets the
pages read prepared first (`PREPARED`), placeholders filled in (`FILLED`). A command runs, or is
listed in `NOT_RUN` with why; a new command that is neither fails the test.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest

from factdebate.datasets.sources import RELEASES
from tests.conftest import REPO
from tests.datasets.test_get import fixture_files, fixture_release, serving
from tests.doc_commands import Shell, answer, fresh_clone, hide_folder_beside, page_commands
from tests.fake_provider import FakeProvider, fake_provider
from tests.test_readme_commands import HF, MILVUS, readme_commands
from tests.test_readme_commands import NOT_RUN as README_NOT_RUN
from tests.tools.websearch.test_backends import TAVILY_ANSWER, FakeSearchAPI

DOCS = REPO / "docs"
PAGES = sorted(DOCS.glob("*.md")) + sorted((DOCS / "methods").glob("*.md"))
PREPARED = {
    "fever-mini": "`factdebate datasets get fever-mini`, its fixture release served on 127.0.0.1",
    "scifact": "put in the home by hand, as 'Getting a dataset' says (2 claims, 3 abstracts)",
    "averitec": "dev.json put where `factdebate datasets get averitec` puts it (4 claims)",
}
"""The datasets the pages read, in the factdebate home before any page runs."""

CLAIM = "The Berlin Wall fell in 1991."
REVIEW_RUN = "runs/review-queue"
MAKE_REVIEW_RUN = (
    f"factdebate bench --method mad --dataset fever-mini --limit 2 --review --out {REVIEW_RUN}"
)
FILLED = {
    '"..."': f'"{CLAIM}"',  # "your claim"
    "$MODEL": "the fake provider's model",
    "openai:gpt-4o-mini": "the fake provider's model (kept by --estimate: its price is read)",
    "http://127.0.0.1:PORT": "the fake Tavily's URL (docs/evidence.md)",
    "notes/": "a folder holding one Markdown note, written by the test",
    "RUN_DIR": f"{REVIEW_RUN}, made by `factdebate bench ... --review` as the page says; "
    "asked item by item, the user answers `a` (approve)",
}
"""Placeholders and hosted models in the pages, and what the test puts in their place."""

SERVICE = "needs a service this test does not start"
POSTGRES = "run against a PostgreSQL server by test_deployment_postgres_lines (a service test)"
DATABASE = "postgresql://factdebate:SECRET@db.internal:5432/factdebate"
"""The pages' database, replaced by the test server's."""
RECORDED = "reads the runs the line above writes from ../shared/recorded, absent on a clone"
NOT_RUN: dict[str, dict[str, str]] = {
    "deployment.md": {
        'factdebate verify "The Eiffel Tower is in Paris." --thread t-1 --checkpoint '
        "postgresql://": POSTGRES,
        "factdebate bench --method tool-mad --dataset scifact --limit 200 --out runs/tm-scifact "
        "--checkpoint postgresql://": POSTGRES,
        "factdebate bench --method tool-mad --dataset scifact --limit 200 --concurrency 8 --out "
        "runs/tm-server --server": f"{SERVICE}: langgraph dev (tests/server/)",
        "langgraph up ": "Docker containers (Postgres, Redis)",
        "langgraph build ": "Docker",
        "docker run ": "Docker and a LangGraph licence key",
        "python3 -m venv /opt/lg-pg": "root, and LangGraph's Postgres runtime from PyPI",
        "printf ": "writes into /opt/lg-pg (root)",
        "apt-get install ": "root",
        "/opt/lg-pg/bin/python -c": "the self-hosted server of /opt/lg-pg (root)",
        "FACTDEBATE_LANGGRAPH_PG_PYTHON=": "a test of the suite, on /opt/lg-pg",
    },
    "evidence.md": {
        "factdebate bench --method debate-cv --dataset averitec --limit 50 --out ks-dcv "
        "--evidence-from output_dev": "AVeriTeC's knowledge store (GBs, fetched by hand)",
        "factdebate bench --method tool-mad --dataset averitec --limit 50 --out ks-toolmad "
        "--evidence-from output_dev": "AVeriTeC's knowledge store (GBs, fetched by hand)",
    },
    "index.md": {
        "make demo": README_NOT_RUN["make demo"],
        "make test": README_NOT_RUN["make test"],
    },
    "models.md": {
        HF: "the README's hf: line with another page name: tests/test_readme_commands.py runs "
        "it against a local Hub",
    },
    "pages.md": {
        "FACTDEBATE_SCREENSHOTS=docs/img": "the suite's Chromium tests, writing the docs' images",
    },
    "review-ui.md": {
        "FACTDEBATE_MODEL=openai:gpt-4o-mini langgraph dev": f"{SERVICE}: langgraph dev "
        "(tests/review/test_review_on_server.py)",
        "git clone https://github.com/langchain-ai/agent-inbox": "the internet",
        "npx ": "npm packages from the internet",
        "FACTDEBATE_AGENT_INBOX=$PWD": "the Agent Inbox build above and Chromium",
        "factdebate review --server http://127.0.0.1:2024": f"{SERVICE}: langgraph dev with a "
        "paused bench (tests/review/test_review_on_server.py)",
    },
    "scale.md": {
        "make milvus-server": README_NOT_RUN["make milvus-server"],
        **dict.fromkeys(
            MILVUS,
            "the README's Milvus lines: tests/test_readme_commands.py runs "
            "them against a Milvus server",
        ),
        'factdebate verify "Nikolaj Coster-Waldau': "run with the README's Milvus lines "
        "(tests/test_readme_commands.py, a service test)",
    },
    "search-and-encoders.md": {
        "export SERPER_API_KEY=": "a Serper key: a paid web search API",
        'factdebate verify "The Eiffel Tower is in Paris." --set search_backend=serper': "the "
        "web (tests/tools/websearch/test_backends.py runs Serper against a local fake)",
        "factdebate bench --method tool-mad --dataset fever-mini --out runs/a --set "
        "search_backend=tavily": "the web (docs/evidence.md's lines run it on a fake Tavily)",
        "FACTDEBATE_EMBED_MODEL=intfloat/e5-small-v2": "e5 weights from the Hugging Face Hub",
        'factdebate verify "..." --set collection=mine_e5': "the e5 index above",
        'factdebate verify "..." --set rerank_model=': "a reranker from the Hugging Face Hub",
        ".venv/bin/python -m pytest ": "the suite's own tests",
    },
    "tool-mad.md": {
        "factdebate calibrate-gate runs/replay-gate/": RECORDED,
    },
    "worth-it.md": {
        "factdebate bench --compare runs/dvv-paper/": RECORDED,
    },
    "debate-cv.md": {
        "pytest -m slow tests/training/test_moderator.py": "trains SmolLM2 on CPU (slow)",
        "S=runs/smoke/": "names the slow test's folder",
        "OMP_NUM_THREADS=1 factdebate train-moderator": "trains SmolLM2 on CPU (slow)",
        "factdebate bench --method debate-cv --dataset averitec --limit 2 --set judge_model="
        "hf-local:runs/moderator-smol": "the moderator the training above writes",
        "factdebate bench --compare runs/dcv-zero runs/dcv-trained": "the run above",
        "LLAMA=": "the paper's setting: a served Llama-3.1-8B",
        "factdebate syndec --split train --data-dir DATA": "the paper's setting: a served 8B "
        "judge and AVeriTeC's train split",
        "factdebate train-moderator --sft runs/syndec-train/": "trains an 8B model (a GPU)",
        "for row in ": "the paper's setting: the trained 8B moderators",
        "factdebate bench --method debate-cv --dataset averitec --out runs/dcv-${row": "the loop",
        "done": "the loop",
        "factdebate bench --compare runs/dcv-zero runs/dcv-dsft": "the loop's runs",
    },
}
"""Commands of each page (by their start) that this test does not run, and why."""

REFUSED = {
    "cli.md": ('factdebate verify "A claim" --', "factdebate bench --"),
}
"""Commands a page shows failing: they must fail with a one-line error, as the page shows."""
NEEDS_RECORDINGS = (".venv/bin/python -m benchmarks.",)
"""Scripts that replay ../shared/recorded: on a clone they end with one line saying it is
missing, no traceback."""


def scifact(folder: Path) -> None:
    abstracts = [
        (11, "Aspirin", ["Aspirin lowers the risk of heart attack.", "It thins the blood."]),
        (12, "Vitamin C", ["Vitamin C does not prevent the common cold."]),
        (13, "Coffee", ["Coffee contains caffeine."]),
    ]
    claims = [
        (1, "Aspirin lowers heart attack risk.", 11, "SUPPORT"),
        (2, "Vitamin C prevents colds.", 12, "CONTRADICT"),
    ]
    folder.mkdir(parents=True)
    corpus = [{"doc_id": d, "title": t, "abstract": a} for d, t, a in abstracts]
    rows = [
        {"id": i, "claim": c, "cited_doc_ids": [d], "label": label,
         "evidence": {str(d): [{"sentences": [0], "label": label}]}}
        for i, c, d, label in claims
    ]  # fmt: skip
    for name, records in (("corpus", corpus), ("claims_dev", rows), ("claims_train", rows)):
        text = "".join(json.dumps(r) + "\n" for r in records)
        (folder / f"{name}.jsonl").write_text(text, encoding="utf-8")


def averitec(folder: Path) -> None:
    labels = ("Supported", "Refuted", "Not Enough Evidence", "Conflicting Evidence/Cherrypicking")
    records = [
        {
            "claim": f"The bridge in town {i} opened in 19{i}0.",
            "label": label,
            "questions": [{"question": f"When did bridge {i} open?", "answers": [
                {"answer": f"Records say 19{i}0."}]}],
        }
        for i, label in enumerate(labels)
    ]  # fmt: skip
    folder.mkdir(parents=True)
    (folder / "dev.json").write_text(json.dumps(records), encoding="utf-8")


class User:
    """One newcomer's machine: a factdebate home kept across pages, the fake services."""

    def __init__(self, root: Path, provider: FakeProvider, tavily: FakeSearchAPI) -> None:
        self.root = root
        self.provider = provider
        self.tavily = tavily
        self.pages = 0

    def shell(self) -> Shell:
        """A fresh clone for the next page, its shell pointed at the fake provider."""
        self.pages += 1
        clone = fresh_clone(self.root / f"clone-{self.pages}" / "factdebate")
        return Shell(clone, env={"FACTDEBATE_MODEL": self.provider.model()})

    def fill(self, command: str, shell: Shell) -> str:
        """``command`` with its placeholders filled in (`FILLED`)."""
        if "notes/" in command:
            (shell.cwd / "notes").mkdir(exist_ok=True)
            note = "# Hamlet\n\nWilliam Shakespeare wrote Hamlet around 1600.\n"
            (shell.cwd / "notes" / "hamlet.md").write_text(note, encoding="utf-8")
        if "RUN_DIR" in command and not (shell.cwd / REVIEW_RUN).exists():
            status, said = shell.run(MAKE_REVIEW_RUN)
            assert status == 0 and "review" in said, said[-2000:]
            shell.stdin = "a\n" * 4
        command = command.replace("RUN_DIR", REVIEW_RUN)
        command = command.replace('"..."', f'"{CLAIM}"').replace("$MODEL", self.provider.model())
        command = command.replace("http://127.0.0.1:PORT", self.tavily.url)
        if "--estimate" not in command:
            command = command.replace("openai:gpt-4o-mini", self.provider.model())
        return command


@pytest.fixture(scope="module")
def user(tmp_path_factory: pytest.TempPathFactory) -> Iterator[User]:
    root = tmp_path_factory.mktemp("newcomer")
    with pytest.MonkeyPatch.context() as patch:
        hide_folder_beside(patch, root / "clone-0" / "factdebate")
        patch.setenv("FACTDEBATE_HOME", str(root / "home"))
        patch.delenv("FACTDEBATE_DATASETS", raising=False)
        patch.delenv("FACTDEBATE_MODEL", raising=False)
        patch.setitem(RELEASES, "fever-mini", fixture_release())
        with (
            fake_provider(answer) as provider,
            FakeSearchAPI(TAVILY_ANSWER, "Authorization") as tavily,
            serving(fixture_files()) as files,
        ):
            me = User(root, provider, tavily)
            shell = me.shell()
            shell.env["FACTDEBATE_DATASETS_MIRROR"] = files.url
            status, said = shell.run("factdebate datasets get fever-mini")
            assert status == 0, said
            scifact(root / "home" / "datasets" / "scifact")
            averitec(root / "home" / "datasets" / "averitec")
            yield me


def not_run(page: Path, command: str) -> str | None:
    """Why ``command`` of ``page`` is not run here, or None."""
    listed = NOT_RUN.get(page.name, {})
    return next((why for start, why in listed.items() if command.startswith(start)), None)


def test_every_listed_command_is_on_its_page() -> None:
    """An entry of `NOT_RUN` whose command left its page is stale."""
    for name, listed in NOT_RUN.items():
        (page,) = [p for p in PAGES if p.name == name]
        commands = page_commands(page)
        for start in listed:
            assert any(c.startswith(start) for c in commands), (name, start)
    assert sum(len(page_commands(p)) for p in PAGES) >= 100


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_page_commands_run_on_a_fresh_clone(page: Path, user: User) -> None:
    commands = page_commands(page)
    shell = user.shell()
    readme = [c for c in readme_commands() if not c.startswith((*README_NOT_RUN, *MILVUS, HF))]
    for command in commands:
        if not_run(page, command) or command in readme:  # the README's test runs those
            continue
        filled = user.fill(command, shell)
        status, said = shell.run(filled)
        if command.startswith(REFUSED.get(page.name, ())):
            assert status != 0 and said.strip().startswith("error:"), (command, said[-2000:])
            assert "Traceback" not in said and len(said.strip().splitlines()) <= 2, said
            shown = page.read_text(encoding="utf-8").split(f"$ {command}\n", 1)[1]
            assert said.strip().splitlines()[0] == shown.splitlines()[0], said  # as the page shows
            continue
        if command.startswith(NEEDS_RECORDINGS):
            assert status != 0 and "Traceback" not in said, (command, said[-2000:])
            last = said.strip().splitlines()[-1]  # after at most a title line
            assert last.startswith("cannot run") and "recorded" in last, said
            continue
        assert status == 0, (command, said[-3000:])
        words = shlex.split(filled)
        if words[1] == "review":  # each item was asked and approved
            rows = (shell.cwd / words[2] / "results.jsonl").read_text().splitlines()
            assert [json.loads(r)["review"]["status"] for r in rows] == ["approved"] * 2, rows
        for flag in ("--out", "--html"):
            if flag in words:
                made = shell.cwd / words[words.index(flag) + 1]
                assert made.exists(), (command, flag, said[-2000:])


@pytest.mark.service
def test_deployment_postgres_lines(user: User) -> None:
    """docs/deployment.md's `--checkpoint postgresql://` lines against a PostgreSQL server: the
    verify line run twice re-shows its finished thread, the bench line writes its run."""
    from tests.pg_server import postgres_or_skip

    commands = [c for c in page_commands(DOCS / "deployment.md") if DATABASE in c]
    assert len(commands) == 2
    servers = postgres_or_skip()
    server = next(servers)
    try:
        url = server.create_database("factdebate")
        shell = user.shell()
        for command in [commands[0], *commands]:
            filled = user.fill(command.replace(DATABASE, url), shell)
            status, said = shell.run(filled)
            assert status == 0, (command, said[-3000:])
            assert "Verdict" in said or (shell.cwd / "runs/tm-scifact/metrics.json").is_file()
        import psycopg

        with psycopg.connect(url) as conn:
            threads = {r[0] for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")}
        assert "t-1" in threads and len(threads) >= 3, threads  # the claim, and each item
    finally:
        servers.close()
