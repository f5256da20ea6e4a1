"""Tool-MAD's query step: a query that copies the prompt's example, or misses the claim, is
replaced by the claim, and the run's errors say so."""

from __future__ import annotations

import pytest

from factdebate.graphs.tool_mad import graph
from factdebate.nodes.tool_mad.context import ToolMADContext
from factdebate.nodes.tool_mad.query import unusable_query
from factdebate.prompts.tool_mad import FIRST_QUERY, NEXT_QUERY, QUERY_EXAMPLE
from tests.fakes import ragas_rules

CLAIM = "The Berlin Wall fell in 1989."


@pytest.mark.parametrize(
    ("query", "why"),
    [
        ("Mount Everest location", "copies the prompt's example"),
        ("mount  everest LOCATION", "copies the prompt's example"),
        ("history of volcanoes", "shares no word"),
        ("when did it happen", "shares no word"),  # only filler words
        ("fall of the Berlin Wall", None),
        ("events of 1989", None),
    ],
)
def test_unusable_queries_are_named(query: str, why: str | None) -> None:
    found = unusable_query(query, CLAIM)
    assert (found is None) if why is None else (found is not None and why in found)


def test_the_example_is_usable_for_a_claim_about_its_subject() -> None:
    assert unusable_query(QUERY_EXAMPLE, "Mount Everest is in Nepal.") is None
    located = "The Eiffel Tower is located in Paris."  # shares "location" with the example
    assert "copies the prompt's example" in str(unusable_query(QUERY_EXAMPLE, located))
    assert unusable_query("Eiffel Tower location", "The Eiffel Tower is located in Paris.") is None


def test_both_query_prompts_show_the_example_they_are_checked_against() -> None:
    for prompt in (FIRST_QUERY, NEXT_QUERY):
        assert f"[{QUERY_EXAMPLE}]" in prompt


async def test_a_debater_that_copies_the_example_searches_the_claim(scripted, fake_tools):
    rules = [
        *ragas_rules(relevant_question=CLAIM),
        ("inside square brackets", f"[{QUERY_EXAMPLE}]"),
        ("Decide whether the claim holds", "The wall fell in 1989 [1].\n**SUPPORTS**"),
    ]
    name, model = scripted(rules)
    out = await graph.ainvoke({"claim": CLAIM}, context=ToolMADContext(model=name, max_rounds=1))
    assert model.calls_with("inside square brackets") == 2  # both debaters asked
    assert fake_tools == {"rag": [CLAIM], "search": [CLAIM]}  # never the example
    assert {t["query"] for t in out["transcript"]} == {CLAIM}
    replaced = [e for e in out["errors"] if e["kind"] == "query_replaced"]
    assert sorted(e["agent"] for e in replaced) == ["debater_a", "debater_b"]
    for error in replaced:
        assert error["stage"] == "query" and error["raw"] == QUERY_EXAMPLE
        assert "copies the prompt's example; searched the claim" in error["message"]
