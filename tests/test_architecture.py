"""The house rules: one import name, imports point one way, rooms keep apart, graphs only wire."""

from __future__ import annotations

import ast
import copy
from functools import cache
from pathlib import Path
from typing import Any

import grimp
import pytest
from importlinter import configuration
from importlinter.application.use_cases import lint_imports, read_user_options
from importlinter.contracts.acyclic_siblings import AcyclicSiblingsContract
from importlinter.contracts.independence import IndependenceContract
from importlinter.contracts.layers import LayersContract

ROOT = Path(__file__).resolve().parent.parent
LINKED = ("graphs", "nodes", "tools", "prompts")
"""Top-level folders installed as ``factdebate.<name>`` (through the links in factdebate/)."""
MAX_LINES = 700
MAX_TOP_MODULES = 12
CONTRACT_TYPES = {
    "layers": LayersContract,
    "independence": IndependenceContract,
    "acyclic_siblings": AcyclicSiblingsContract,
}


@cache
def user_options() -> Any:
    configuration.configure()  # what `lint-imports` does before it reads its options
    return read_user_options(str(ROOT / "pyproject.toml"))


@cache
def import_graph() -> grimp.ImportGraph:
    return grimp.build_graph("factdebate", cache_dir=None)


def contract(contract_id: str) -> Any:
    """The contract of that id from pyproject.toml, ready to check a graph."""
    options = next(c for c in user_options().contracts_options if c["id"] == contract_id)
    cls = CONTRACT_TYPES[options["type"]]
    return cls(
        name=options["name"],
        session_options=user_options().session_options,
        contract_options=options,
    )


def test_import_contracts_hold(capsys: pytest.CaptureFixture[str]) -> None:
    """What `lint-imports` (in `make lint`) checks: every contract of pyproject.toml is kept."""
    user_options()  # configures import-linter as its command does
    kept = lint_imports(str(ROOT / "pyproject.toml"), cache_dir=None, no_logo=True)
    assert kept, capsys.readouterr().out


@pytest.mark.parametrize(
    ("importer", "imported", "contract_id"),
    [
        ("factdebate.tools.models.llm", "factdebate.graphs.registry", "layers"),
        ("factdebate.nodes.common", "factdebate.cli", "layers"),
        ("factdebate.graphs.tool_mad", "factdebate.api", "layers"),
        ("factdebate.tools.models.llm", "factdebate.prompts.labels", "layers"),
        ("factdebate.api", "factdebate.bench.running.runner", "layers"),
        ("factdebate.bench.judging.report", "factdebate.bench.running.runner", "bench"),
        ("factdebate.bench.judging.stats", "factdebate.bench.running.items", "bench"),
        ("factdebate.nodes.tool_mad.judge", "factdebate.nodes.debate_cv.moderator", "rooms"),
        ("factdebate.tools.core.files", "factdebate.tools.retrieval.corpus", "tools"),
        ("factdebate.tools.retrieval.milvus", "factdebate.tools.retrieval.vectorstore", "acyclic"),
    ],
)
def test_the_contracts_catch_each_kind_of_violation(
    importer: str, imported: str, contract_id: str
) -> None:
    graph = copy.deepcopy(import_graph())
    assert contract(contract_id).check(graph, verbose=False).kept
    graph.add_import(importer=importer, imported=imported, line_number=1, line_contents="x")
    assert not contract(contract_id).check(graph, verbose=False).kept


def source_files() -> list[Path]:
    """Every Python file of the repository (each linked folder once, through its own path)."""
    skip = {".venv", ".milvus-venv", "site", "build", "runs"}  # top-level folders, not code
    return [
        path
        for path in sorted(ROOT.rglob("*.py"))
        if path.relative_to(ROOT).parts[0] not in skip
        and "__pycache__" not in path.parts
        and not any(path.relative_to(ROOT).parts[:2] == ("factdebate", name) for name in LINKED)
    ]


def test_code_imports_only_the_one_installed_name() -> None:
    """``tools``, ``nodes``, ``graphs`` and ``prompts`` exist only as ``factdebate.<name>``."""
    found = []
    for path in source_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            found += [
                f"{path.relative_to(ROOT)}:{node.lineno} {name}"
                for name in names
                if name.split(".")[0] in LINKED
            ]
    assert found == []


def test_linked_folders_are_the_packages() -> None:
    for name in LINKED:
        link = ROOT / "factdebate" / name
        assert link.is_symlink() and link.resolve() == (ROOT / name).resolve(), name


def test_modules_stay_small_and_tops_stay_few() -> None:
    long = [
        f"{path.relative_to(ROOT)}: {n} lines"
        for path in source_files()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    ]
    assert long == []
    for top in (ROOT / "factdebate", ROOT / "tools"):
        modules = [p.name for p in top.glob("*.py")]
        assert len(modules) <= MAX_TOP_MODULES, (top.name, modules)


def test_bench_is_a_front_and_two_rooms() -> None:
    """factdebate/bench/ holds its lazy front and the running and judging rooms, nothing else."""
    bench = ROOT / "factdebate" / "bench"
    assert sorted(p.name for p in bench.glob("*.py")) == ["__init__.py"]
    rooms = sorted(p.name for p in bench.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert rooms == ["judging", "running"]


def test_graph_modules_only_wire() -> None:
    """A graph module defines no node bodies, states or settings: only builders and graphs."""
    allowed_defs = {"make_builder", "_compile"}
    for path in sorted((ROOT / "graphs").glob("*.py")):
        if path.name in ("__init__.py", "registry.py"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.AsyncFunctionDef | ast.ClassDef):
                pytest.fail(f"{path.name}: {node.name} belongs in nodes/")
            if isinstance(node, ast.FunctionDef):
                assert node.name in allowed_defs, f"{path.name}: {node.name} belongs in nodes/"


def test_every_error_class_derives_from_the_one_root() -> None:
    """Each exception class the project defines is a FactDebateError (the CLI catches that)."""
    import importlib
    import inspect
    import pkgutil

    import factdebate
    from factdebate import FactDebateError

    errors = {}
    for info in pkgutil.walk_packages(factdebate.__path__, "factdebate."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if (
                inspect.isclass(obj)
                and issubclass(obj, BaseException)
                and obj.__module__ == info.name
            ):
                errors[f"{info.name}.{name}"] = obj
    assert len(errors) >= 20  # every module was walked, through the linked folders too
    assert [name for name, cls in errors.items() if not issubclass(cls, FactDebateError)] == []
