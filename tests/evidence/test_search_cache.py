"""The web search cache: a second run within the time to live pays no search, one after it does."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from factdebate.bench import run_bench
from factdebate.cli import app
from factdebate.nodes.context import Context
from factdebate.nodes.policy import operator_problem, served
from factdebate.tools.core.errors import SettingsError
from factdebate.tools.core.records import Evidence
from factdebate.tools.dispatch import override_tool
from factdebate.tools.websearch import cache
from factdebate.tools.websearch.cache import SearchCache, cached_search, search_key, tallying
from tests.bench.test_runner import make_data
from tests.bounded import COMMAND_GUARD_S, communicate_bounded
from tests.conftest import REPO, doc
from tests.fakes import ragas_rules
from tests.tools.websearch.test_backends import KEY, TAVILY_ANSWER, FakeSearchAPI

TTL_S = 3600.0


class Clock:
    """The cache's clock, moved by the test instead of sleeping."""

    def __init__(self) -> None:
        self.at = 1_800_000_000.0

    def __call__(self) -> float:
        return self.at


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch, data_home: Path) -> Clock:
    moved = Clock()
    monkeypatch.setattr(cache, "now", moved)
    return moved


class CountingSearch:
    """A paid-looking backend that counts its calls."""

    name = "tavily"

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        self.calls: list[str] = []
        self.options = {} if options is None else options

    def cache_options(self) -> dict[str, Any]:
        return self.options

    def search(self, query: str, k: int) -> list[Evidence]:
        self.calls.append(query)
        return [doc(f"web-{len(self.calls)}", f"Answer {len(self.calls)} to {query}.")][:k]


def tool_mad_model(scripted: Any) -> str:
    name, _ = scripted(
        [
            *ragas_rules(faithful=True, relevant_question="Claim number 0 about Paris."),
            ("inside square brackets", "[Paris landmarks]"),
            ("Decide whether the claim holds", "The documents place it in Paris.\n**SUPPORTS**"),
        ]
    )
    return str(name)


def test_a_second_run_within_the_ttl_makes_no_search_call_and_one_after_it_does(
    tmp_path: Path, clock: Clock, scripted: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tool-MAD on fever-mini against a fake Tavily: run 1 pays, run 2 reads the cache, run 3
    (the clock moved past the time to live) pays again; the rows read the same documents."""
    data = make_data(tmp_path / "data", "SR")
    model = tool_mad_model(scripted)
    override_tool("rag", lambda query, k: [doc("d1", "Paris is in France.", "Paris")][:k])
    try:
        with FakeSearchAPI(TAVILY_ANSWER, "Authorization") as tavily:
            monkeypatch.setenv("TAVILY_API_KEY", KEY)
            monkeypatch.setenv("TAVILY_BASE_URL", tavily.url)

            def bench(folder: str) -> dict[str, Any]:
                return run_bench(
                    "tool-mad",
                    "fever-mini",
                    tmp_path / folder,
                    data_dir=data,
                    limit=None,
                    seed=0,
                    concurrency=2,
                    context={
                        "model": model,
                        "max_rounds": 1,
                        "collection": "default",
                        "search_backend": "tavily",
                        "search_cache_ttl_s": TTL_S,
                    },
                    pages=False,
                )

            first = bench("first")
            paid = len(tavily.bodies)
            assert paid > 0
            clock.at += TTL_S - 1
            second = bench("second")
            assert len(tavily.bodies) == paid  # not one call within the time to live
            clock.at += 2
            third = bench("third")
            assert len(tavily.bodies) == 2 * paid  # expired: every search paid again
    finally:
        override_tool("rag", None)
    assert first["cost"]["web_search"] == {
        "hits": 0,
        "misses": paid,
        "live_calls": paid,
        "calls_saved": 0,
    }
    assert second["cost"]["web_search"]["hits"] == paid
    assert second["cost"]["web_search"]["calls_saved"] == paid
    assert second["cost"]["web_search"]["live_calls"] == 0
    assert third["cost"]["web_search"]["live_calls"] == paid
    report = (tmp_path / "second" / "report.md").read_text()
    assert f"0 live calls, {paid} answered from the search cache ({paid} paid calls saved)" in (
        report
    )

    def read(folder: str) -> list[list[str]]:
        rows = [json.loads(line) for line in (tmp_path / folder / "results.jsonl").open()]
        return sorted(
            [d["id"] for t in r["result"]["transcript"] for d in t.get("evidence") or []]
            for r in rows
        )

    assert read("second") == read("first")
    assert any("wikipedia.org" in i for ids in read("second") for i in ids)


def test_verify_says_how_many_searches_the_cache_answered(
    clock: Clock, scripted: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`factdebate verify` twice within the time to live: one line each on standard error."""
    model = tool_mad_model(scripted)
    override_tool("rag", lambda query, k: [doc("d1", "Paris is in France.", "Paris")][:k])
    args = ["verify", "Claim number 0 about Paris.", "--method", "tool-mad", "--model", model,
            "--rounds", "1", "--set", "search_backend=tavily", "--set", "search_cache_ttl_s=60",
            "--json"]  # fmt: skip
    try:
        with FakeSearchAPI(TAVILY_ANSWER, "Authorization") as tavily:
            monkeypatch.setenv("TAVILY_API_KEY", KEY)
            monkeypatch.setenv("TAVILY_BASE_URL", tavily.url)
            first = CliRunner().invoke(app, args)
            paid = len(tavily.bodies)
            second = CliRunner().invoke(app, args)
            assert len(tavily.bodies) == paid > 0
    finally:
        override_tool("rag", None)
    assert first.exit_code == 0 and second.exit_code == 0, first.output
    assert f"web searches: {paid} live calls, 0 answered from the search cache" in first.stderr
    assert f"web searches: 0 live calls, {paid} answered from the search cache" in second.stderr
    assert json.loads(second.stdout)["verdict"] == json.loads(first.stdout)["verdict"]


def test_ttl_zero_searches_live_and_writes_no_cache(clock: Clock) -> None:
    backend = CountingSearch()
    with tallying() as tally:
        for _ in range(2):
            docs, status = cached_search(backend, "eiffel", 3, ttl_s=0, max_mb=1)
            assert status == "off" and docs
    assert len(backend.calls) == 2
    assert tally.summary() == {"hits": 0, "misses": 0, "live_calls": 2, "calls_saved": 0}
    assert not cache.cache_path().exists()


def test_the_offline_stand_in_and_a_custom_summariser_are_never_cached(clock: Clock) -> None:
    offline = CountingSearch()
    offline.name = "bm25"
    cached_search(offline, "q", 3, ttl_s=TTL_S, max_mb=1)
    assert cached_search(offline, "q", 3, ttl_s=TTL_S, max_mb=1)[1] == "off"
    custom = CountingSearch()
    custom.cache_options = lambda: None  # type: ignore[assignment, return-value, method-assign]
    assert cached_search(custom, "q", 3, ttl_s=TTL_S, max_mb=1)[1] == "off"
    assert len(offline.calls) == 2 and len(custom.calls) == 1


def test_the_key_is_backend_normalised_query_k_and_options() -> None:
    base = search_key("tavily", "Eiffel  Tower\n", 3, {"url": "u"})
    assert search_key("tavily", "eiffel tower", 3, {"url": "u"}) == base
    assert search_key("serper", "eiffel tower", 3, {"url": "u"}) != base
    assert search_key("tavily", "eiffel tower", 4, {"url": "u"}) != base
    assert search_key("tavily", "eiffel tower", 3, {"url": "v"}) != base
    assert search_key("tavily", "eiffel towers", 3, {"url": "u"}) != base


def test_another_api_root_is_another_entry(clock: Clock) -> None:
    one, two = CountingSearch({"url": "https://a"}), CountingSearch({"url": "https://b"})
    for backend in (one, two, one, two):
        cached_search(backend, "q", 3, ttl_s=TTL_S, max_mb=1)
    assert len(one.calls) == 1 and len(two.calls) == 1


def test_entries_expire_and_the_least_recently_used_go_first_by_size(
    tmp_path: Path, clock: Clock
) -> None:
    docs = [doc("a", "x" * 900)]
    size = len(json.dumps(docs, ensure_ascii=False).encode())
    store = SearchCache(tmp_path / "c.sqlite", ttl_s=100, max_bytes=3 * size)
    for name in ("k1", "k2", "k3"):
        store.put(name, "tavily", name, 1, docs)
        clock.at += 1
    assert store.get("k1") == docs  # k1 is now the most recently used
    clock.at += 1
    store.put("k4", "tavily", "k4", 1, docs)  # over the bound: k2, the least recent, goes
    assert store.stats() == {"entries": 3, "bytes": 3 * size}
    assert store.get("k2") is None and store.get("k1") == docs and store.get("k4") == docs
    clock.at += 100
    assert store.get("k4") is None  # expired, and removed
    assert store.stats()["entries"] == 2
    store.put("huge", "tavily", "huge", 1, [doc("h", "y" * 4 * size)])  # larger than the cache
    assert store.get("huge") is None and store.stats()["entries"] == 2


def test_a_failed_search_is_not_stored(clock: Clock) -> None:
    class Failing(CountingSearch):
        def search(self, query: str, k: int) -> list[Evidence]:
            raise TimeoutError("no answer")

    with pytest.raises(TimeoutError):
        cached_search(Failing(), "q", 3, ttl_s=TTL_S, max_mb=1)
    backend = CountingSearch()
    assert cached_search(backend, "q", 3, ttl_s=TTL_S, max_mb=1)[1] == "miss"


def test_a_damaged_cache_file_searches_live_with_one_warning(
    clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    path = cache.cache_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"this is not a database" * 100)
    backend = CountingSearch()
    with caplog.at_level(logging.WARNING, logger=cache.__name__):
        for _ in range(3):
            docs, status = cached_search(backend, "q", 3, ttl_s=TTL_S, max_mb=1)
            assert docs and status == "miss"
    assert len(backend.calls) == 3
    warned = [r for r in caplog.records if "search cache" in r.getMessage()]
    assert len(warned) == 1 and str(path) in warned[0].getMessage()
    assert path.read_bytes().startswith(b"this is not")  # the user's file is left as it was


def test_two_processes_write_one_cache_at_once(tmp_path: Path) -> None:
    """Two writers sharing the file: every write lands or waits, none fails, the bound holds."""
    script = textwrap.dedent(
        """
        import sys
        from pathlib import Path
        from factdebate.tools.websearch.cache import SearchCache
        store = SearchCache(Path(sys.argv[1]), ttl_s=3600, max_bytes=60_000)
        doc = {"id": "u", "title": "", "text": "z" * 500, "source": "tavily", "score": 1.0}
        for i in range(150):
            store.put(f"{sys.argv[2]}-{i}", "tavily", "q", 1, [doc])
            assert store.get(f"{sys.argv[2]}-{i}") is not None
        """
    )
    target = tmp_path / "shared.sqlite"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(target), name],
            cwd=REPO,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b")
    ]
    for proc in procs:
        _, errors = communicate_bounded(proc, what="the cache child", guard_s=COMMAND_GUARD_S)
        assert proc.returncode == 0, errors
    stats = SearchCache(target, ttl_s=3600, max_bytes=60_000).stats()
    assert 0 < stats["bytes"] <= 60_000 and stats["entries"] >= 60_000 // 700


def test_the_settings_are_bounded_and_the_environment_sets_their_defaults(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert Context().search_cache_ttl_s == 0
    for bad in (
        {"search_cache_ttl_s": -1},
        {"search_cache_max_mb": 0},
        {"search_cache_ttl_s": "1"},
    ):
        with pytest.raises(SettingsError, match="search_cache"):
            Context(**bad)
    monkeypatch.setenv("FACTDEBATE_SEARCH_CACHE_TTL_S", "86400")
    monkeypatch.setenv("FACTDEBATE_SEARCH_CACHE_MAX_MB", "64")
    ctx = Context()
    assert (ctx.search_cache_ttl_s, ctx.search_cache_max_mb) == (86400, 64)
    assert Context(search_cache_ttl_s=5).search_cache_ttl_s == 5
    monkeypatch.setenv("FACTDEBATE_SEARCH_CACHE_TTL_S", "a day")
    with pytest.raises(SettingsError, match="FACTDEBATE_SEARCH_CACHE_TTL_S"):
        Context()
    monkeypatch.setenv("FACTDEBATE_SEARCH_CACHE_TTL_S", "-5")
    with pytest.raises(SettingsError, match="search_cache_ttl_s"):
        Context()


def test_a_server_client_cannot_change_the_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a server the cache is the operator's: a client may send only the default."""
    allowed = {"search_cache_ttl_s": 0.0, "search_cache_max_mb": 256}
    assert operator_problem(allowed, [Context]) is None
    for name, value in (("search_cache_ttl_s", 60), ("search_cache_max_mb", 1)):
        problem = operator_problem({name: value}, [Context])
        assert problem is not None and name in problem and "operator" in problem
    monkeypatch.setenv("FACTDEBATE_SEARCH_CACHE_TTL_S", "600")
    server_side = served(Context)
    assert server_side().search_cache_ttl_s == 600  # the operator's value
    assert server_side(search_cache_ttl_s=0).search_cache_ttl_s == 600  # the default: the same
    with pytest.raises(SettingsError, match="operator sets it"):
        server_side(search_cache_ttl_s=5)


def test_the_offline_stand_in_is_not_counted_as_a_web_search() -> None:
    class Offline:
        name = "bm25"

        def search(self, query: str, k: int) -> list[Evidence]:
            return [doc("o1", f"About {query}.")]

    class Web(Offline):
        name = "tavily"

    with tallying() as tally:
        cached_search(Offline(), "eiffel tower", 1, ttl_s=0, max_mb=1)
        assert tally.summary()["live_calls"] == 0  # no paid call, no "web searches" line
        cached_search(Web(), "eiffel tower", 1, ttl_s=0, max_mb=1)
        assert tally.summary()["live_calls"] == 1
