"""Shared fixtures: offline environment, scripted models, fake retrieval tools, a live server."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
os.environ.setdefault("LANGGRAPH_CLI_NO_ANALYTICS", "1")
os.environ.setdefault("LANGGRAPH_NO_VERSION_CHECK", "true")
os.environ.pop("TAVILY_API_KEY", None)
os.environ.pop("SERPER_API_KEY", None)
os.environ.pop("LANGSMITH_TRACING", None)

from factdebate.datasets import DatasetError  # noqa: E402
from factdebate.tools import dispatch  # noqa: E402
from factdebate.tools.core.records import Evidence  # noqa: E402
from factdebate.tools.models.providers import register_model  # noqa: E402
from tests.fakes import ScriptedChatModel  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
T = TypeVar("T")


def data_or_skip(read: Callable[[], T], name: str) -> T:
    """``read()``, or a skip naming the dataset when ../shared does not hold it."""
    try:
        return read()
    except DatasetError as exc:
        pytest.skip(f"{name} not available: {exc}")


def doc(ident: str, text: str, title: str = "") -> Evidence:
    return Evidence(id=ident, title=title or ident, text=text, source="fake", score=1.0)


@pytest.fixture
def scripted() -> Callable[..., tuple[str, ScriptedChatModel]]:
    """Make a scripted model and register it under a unique name usable in settings."""
    counter = iter(range(10**6))

    def make(rules: list[object], default: str | None = None) -> tuple[str, ScriptedChatModel]:
        model = ScriptedChatModel(rules=rules)
        if default is not None:
            model.default = default
        name = register_model(f"scripted-{id(model)}-{next(counter)}", model)
        return name, model

    return make


@pytest.fixture
def fake_tools() -> Iterator[dict[str, list[str]]]:
    """Replace rag and search with fixed documents; record the queries each received."""
    seen: dict[str, list[str]] = {"rag": [], "search": []}

    def rag(query: str, k: int) -> list[Evidence]:
        seen["rag"].append(query)
        return [doc("rag-1", "The Eiffel Tower stands in Paris, France.", "Eiffel Tower")][:k]

    def search(query: str, k: int) -> list[Evidence]:
        seen["search"].append(query)
        return [doc("web-1", "Paris is home to the Eiffel Tower, built in 1889.", "Paris")][:k]

    dispatch.override_tool("rag", rag)
    dispatch.override_tool("search", search)
    yield seen
    dispatch.override_tool("rag", None)
    dispatch.override_tool("search", None)


@pytest.fixture
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty FACTDEBATE_HOME for index files."""
    home = tmp_path / "home"
    monkeypatch.setenv("FACTDEBATE_HOME", str(home))
    return home


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """`langgraph dev` serving Tool-MAD on the scripted model (tests/langgraph_server.py)."""
    from tests.langgraph_server import LanggraphDev

    graph = str(REPO / "tests" / "server_graph.py") + ":graph"
    dev = LanggraphDev(tmp_path, {"tool-mad": graph})
    dev.start()
    try:
        yield dev.url
    finally:
        dev.stop()
