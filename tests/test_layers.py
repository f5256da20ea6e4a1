"""The house rules: imports point one way, rooms keep to themselves, graphs only wire."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = {"factdebate": 3, "graphs": 2, "nodes": 1, "tools": 0, "prompts": 0}
"""Higher layers may import lower ones, never the reverse."""
ROOMS = ("tool_mad", "madam_rag", "debate_cv", "mad_fact", "baselines")


def first_party_imports(source: str) -> list[tuple[int, str]]:
    """Every first-party module an module imports (at top level or inside functions)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
            if node.module in LAYERS:  # `from nodes import common` names the submodule
                names = [f"{node.module}.{alias.name}" for alias in node.names]
            found += [(node.lineno, name) for name in names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return [(line, name) for line, name in found if name.split(".")[0] in LAYERS]


def violations(module: str, source: str) -> list[str]:
    """What breaks the house rules in ``source``, the text of ``module`` (dotted name)."""
    package = module.split(".")[0]
    problems = []
    for line, target in first_party_imports(source):
        top = target.split(".")[0]
        if LAYERS[top] > LAYERS[package]:
            problems.append(f"{module}:{line} imports {target} from a higher layer")
        elif top != package and LAYERS[top] == LAYERS[package]:
            problems.append(f"{module}:{line} imports {target} from a sibling layer")
        parts, target_parts = module.split("."), target.split(".")
        if package == top == "nodes" and len(parts) > 2 and len(target_parts) > 2:
            here, there = parts[1], target_parts[1]
            if here in ROOMS and there in ROOMS and here != there:
                problems.append(f"{module}:{line} reaches into another method's room: {target}")
    return problems


def project_modules() -> list[tuple[str, Path]]:
    """Every module of the five packages, as (dotted name, path)."""
    modules = []
    for package in LAYERS:
        for path in sorted((ROOT / package).rglob("*.py")):
            dotted = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            modules.append((dotted.removesuffix(".__init__"), path))
    return modules


def test_imports_point_one_way_and_rooms_stay_apart() -> None:
    problems = [
        problem
        for module, path in project_modules()
        for problem in violations(module, path.read_text(encoding="utf-8"))
    ]
    assert problems == []


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("tools.llm", "from graphs.registry import METHODS\n", "higher layer"),
        ("tools.llm", "def f():\n    from nodes.state import Turn\n", "higher layer"),
        ("nodes.common", "import factdebate.cli\n", "higher layer"),
        ("graphs.tool_mad", "from factdebate import api\n", "higher layer"),
        ("tools.llm", "from prompts.labels import LABELS_3\n", "sibling layer"),
        ("nodes.tool_mad.judge", "from nodes.debate_cv.moderator import route\n", "room"),
    ],
)
def test_the_check_catches_each_kind_of_violation(module: str, source: str, expected: str) -> None:
    problems = violations(module, source)
    assert len(problems) == 1 and expected in problems[0]


def test_downward_and_shared_imports_are_allowed() -> None:
    source = (
        "from nodes.common import settings\nfrom nodes.tool_mad.state import ToolMADState\n"
        "from tools.llm import ask\nfrom prompts import tool_mad\n"
    )
    assert violations("nodes.tool_mad.judge", source) == []
    assert violations("graphs.tool_mad", "from nodes.tool_mad.judge import judge\n") == []


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
