"""Passwords inside model and checkpoint URLs, whatever characters they hold, are never shown."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from factdebate.cli import app
from factdebate.runs.checkpoints import shown
from factdebate.tools.core.secrets import REDACTED, redact
from factdebate.tools.core.terminal import SafeConsole
from tests.bounded import COMMAND_GUARD_S, run_bounded
from tests.fake_provider import fake_provider
from tests.reliability.bench_cli import bench_args, fever_mini, one_line_error, runner

SECRET = "SECRET-5150"
PASSWORDS = {  # what the URL standard lets a password hold, raw or percent-encoded
    "bracket": f"pa]{SECRET}",
    "at-sign": f"p@{SECRET}",
    "encoded-at-sign": f"p%40{SECRET}",
    "colon-and-brackets": f"p:[{SECRET}]",
}


def with_password(url: str, password: str) -> str:
    return url.replace("http://", f"http://user:{password}@", 1)


@pytest.mark.parametrize(
    "text",
    [
        *(f"openai-compatible:m@http://user:{p}@host:8000/v1" for p in PASSWORDS.values()),
        f"openai-compatible:m@http://user:pa#{SECRET}@host/v1",
        f"postgresql://me:x]{SECRET}@db:5432/runs?sslmode=disable",
        f"postgres://me:a@b#{SECRET}@db/x",
        f"error: 'http://user:{SECRET}@h/v1' refused, and https://{SECRET}@git.example/x too",
        f"two URLs http://u:{SECRET}@h,http://v:{SECRET}@k/v1",
    ],
)
def test_the_userinfo_of_every_url_is_redacted(text: str) -> None:
    cleaned = redact(text)
    assert SECRET not in cleaned
    assert REDACTED in cleaned
    assert redact(cleaned) == cleaned  # redacting twice changes nothing


@pytest.mark.parametrize(
    "text",
    [
        "https://medium.com/@writer/a-post",
        "http://[::1]:8080/v1 and http://127.0.0.1:8000/v1",
        "see http://h/a?email=x@y.example, or mail me at a@b.example",
    ],
)
def test_urls_without_credentials_are_left_as_they_are(text: str) -> None:
    assert redact(text) == text


def test_checkpoint_messages_and_the_console_use_the_one_redaction() -> None:
    spec = f"postgresql://me:p@{SECRET}@db:5432/x"
    assert shown(spec) == redact(spec) == "postgresql://me:[redacted]@db:5432/x"
    for markup in (True, False):
        buffer = io.StringIO()
        console = SafeConsole(file=buffer, width=300, highlight=False)
        console.print(f"finish it with --checkpoint {spec}", markup=markup)
        printed = buffer.getvalue()
        assert SECRET not in printed and "me:[redacted]@db:5432/x" in printed, printed


def test_the_review_hint_shows_no_checkpoint_password(capsys: pytest.CaptureFixture[str]) -> None:
    from factdebate.cli.review import later_hint

    later_hint("The sky is blue.", "t-1", f"postgresql://me:x]{SECRET}@db/runs", "cot")
    printed = capsys.readouterr().out
    assert SECRET not in printed and "--checkpoint postgresql://me:[redacted]@db/runs" in printed


@pytest.mark.usefixtures("data_home")
@pytest.mark.parametrize("password", PASSWORDS.values(), ids=PASSWORDS.keys())
def test_a_bench_with_a_password_in_its_model_url_writes_and_shows_none_of_it(
    password: str, tmp_path: Path
) -> None:
    """Terminal, run.json, metrics.json, results, report.md, report.html and item pages."""
    with fake_provider(lambda prompt, body: "Reasoned.\n**SUPPORTS**") as provider:
        model = with_password(provider.model("m"), password)
        out = tmp_path / "run"
        args = bench_args(out, fever_mini(tmp_path / "data"), model, "--pages")
        result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert len(provider.requests) == 4  # the probe and 3 items reached the provider
    assert SECRET not in result.output
    written = [
        p for p in out.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl", ".md", ".html")
    ]
    names = {p.name for p in written}
    assert {"run.json", "metrics.json", "results.jsonl", "report.md", "report.html"} <= names
    assert any(p.parent != out and p.suffix == ".html" for p in written), names  # item pages
    for path in written:
        assert SECRET not in path.read_text(encoding="utf-8"), path
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert "user:[redacted]@127.0.0.1" in run["context"]["model"]


@pytest.mark.usefixtures("data_home")
def test_a_hash_inside_a_password_is_refused_before_any_call(tmp_path: Path) -> None:
    """Unencoded, ``#`` ends the host part: the URL is refused in one line, nothing sent."""
    with fake_provider(lambda prompt, body: "Reasoned.\n**SUPPORTS**") as provider:
        model = with_password(provider.model("m"), f"pa#{SECRET}")
        page = tmp_path / "debate.html"
        verify = ["verify", "The sky is blue.", "--method", "cot", "--model", model]
        refused = runner.invoke(app, [*verify, "--html", str(page)])
        bench = runner.invoke(app, bench_args(tmp_path / "run", fever_mini(tmp_path / "d"), model))
    for result in (refused, bench):
        one_line_error(result, "host or port does not parse")
        assert SECRET not in result.output and "pa#" not in result.output
    assert provider.requests == [] and not page.exists() and not (tmp_path / "run").exists()


@pytest.mark.usefixtures("data_home")
def test_verify_shows_and_writes_no_password_with_brackets_or_at_signs(tmp_path: Path) -> None:
    with fake_provider(lambda prompt, body: "Reasoned.\n**SUPPORTS**") as provider:
        for password in PASSWORDS.values():
            page = tmp_path / "debate.html"
            model = with_password(provider.model("m"), password)
            args = ["verify", "The sky is blue.", "--method", "cot", "--model", model]
            result = runner.invoke(app, [*args, "--html", str(page)])
            assert result.exit_code == 0, result.output
            assert SECRET not in result.output and SECRET not in page.read_text(encoding="utf-8")
            as_json = runner.invoke(app, [*args, "--json"])
            assert as_json.exit_code == 0 and SECRET not in as_json.output


@pytest.mark.service
@pytest.mark.usefixtures("data_home")
def test_verify_review_on_postgres_shows_its_password_nowhere(scripted) -> None:
    """The paused run's "finish it with" hint and every line name the database, redacted."""
    from tests.pg_server import postgres_or_skip

    server = postgres_or_skip()
    pg = next(server)
    try:
        import psycopg

        password = f"pa]{SECRET}@x#y"  # the role's password; the URL percent-encodes @ and #
        with psycopg.connect(pg.url(), autocommit=True) as conn:
            conn.execute(f"CREATE ROLE reviewer LOGIN PASSWORD '{password}'")
            conn.execute('CREATE DATABASE "hints" OWNER reviewer')
        spec = f"postgresql://reviewer:pa]{SECRET}%40x%23y@127.0.0.1:{pg.port}/hints"
        name, _ = scripted([], default="Reasoned.\n**SUPPORTS**")
        args = ["verify", "The sky is blue.", "--method", "cot", "--model", name, "--review"]
        result = runner.invoke(app, [*args, "--checkpoint", spec, "--thread", "t-hint"])
        assert result.exit_code == 0, result.output
        assert "Finish it with" in result.output
        assert SECRET not in result.output, result.output
        assert "--checkpoint postgresql://reviewer:[redacted]@127.0.0.1" in result.output
    finally:
        server.close()


def test_a_bug_s_traceback_from_the_cli_is_redacted_too() -> None:
    import sys

    from tests.conftest import REPO

    crash = (
        "from factdebate.tools.core.secrets import install_redacted_tracebacks\n"
        "install_redacted_tracebacks()\n"
        f"raise RuntimeError('cannot reach http://user:p@{SECRET}@host/v1')\n"
    )
    done = run_bounded(
        [sys.executable, "-c", crash],
        cwd=REPO,
        capture_output=True,
        text=True,
        what="the crashing child",
        guard_s=COMMAND_GUARD_S,
    )
    assert done.returncode == 1 and "Traceback" in done.stderr
    assert SECRET not in done.stderr and "http://user:[redacted]@host/v1" in done.stderr


@pytest.mark.usefixtures("data_home")
@pytest.mark.parametrize("password", [f"p@{SECRET}", f"a]{SECRET}", f"a#{SECRET}"])
def test_a_checkpoint_url_is_refused_or_reported_without_its_password(
    password: str, scripted
) -> None:
    """Raw ``@`` (libpq would read ``SECRET@host`` as the host) is refused before connecting;
    the others reach a closed port and fail, and neither line shows the password."""
    name, model = scripted([], default="Reasoned.\n**SUPPORTS**")
    spec = f"postgresql://me:{password}@127.0.0.1:1/runs"
    args = ["verify", "The sky is blue.", "--method", "cot", "--model", name]
    result = runner.invoke(app, [*args, "--checkpoint", spec, "--thread", "t-1"])
    expected = "write '@' inside a user name or password as %40" if "@" in password else "port 1"
    one_line_error(result, expected)
    assert SECRET not in result.output and "me:[redacted]@127.0.0.1:1/runs" in result.output
    assert model.prompts == []
