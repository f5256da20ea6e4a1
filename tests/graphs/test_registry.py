"""The method catalog: each entry names a graph served under its name, with its settings."""

from __future__ import annotations

import pytest

from factdebate import FactDebateError
from factdebate.graphs.registry import (
    METHODS,
    PAPERS,
    UnknownMethodError,
    context_class,
    load_method,
    resolve,
)


@pytest.mark.parametrize("name", sorted(METHODS))
def test_each_entry_names_a_graph_served_under_its_name(name: str) -> None:
    spec = METHODS[name]
    graph, settings = load_method(name)
    assert graph.name == name
    assert settings is context_class(name)  # the graph takes the class its entry names
    assert spec.family in PAPERS and METHODS[spec.family].role == "method"
    assert bool(spec.defaults) == (spec.role == "ablation")
    for key, value in spec.defaults.items():  # an ablation starts from its own defaults
        assert getattr(settings(), key) == value


def test_an_entry_is_its_own_resolution_and_a_typo_names_the_choices() -> None:
    spec = resolve("tool-mad")
    assert resolve(spec) is spec
    with pytest.raises(UnknownMethodError, match="choose one of: .*tool-mad") as raised:
        resolve("tool-madd")
    assert isinstance(raised.value, FactDebateError) and isinstance(raised.value, KeyError)
