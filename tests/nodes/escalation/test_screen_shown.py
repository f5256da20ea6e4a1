"""The debate page and the printed result show the screen's answers, agreement and reason."""

from __future__ import annotations

from typing import Any

from factdebate.api import contract
from factdebate.graphs.escalate_tool_mad import EscalateToolMADContext
from factdebate.graphs.escalate_tool_mad import graph as escalate
from factdebate.pages.debate import render_debate_page
from tests.nodes.tool_mad.test_graph import CLAIM, debate_rules


async def escalated_result(scripted: Any, label_b: str) -> dict[str, Any]:
    name, _ = scripted(debate_rules(label_a="SUPPORTS", label_b=label_b))
    context = EscalateToolMADContext(model=name, max_rounds=1)
    return contract(await escalate.ainvoke({"claim": CLAIM}, context=context))


async def test_the_page_shows_a_settled_screen(scripted, fake_tools):
    result = await escalated_result(scripted, "SUPPORTS")
    page = render_debate_page(result, CLAIM, "escalate-tool-mad")
    screen = page[page.index('<div id="screen">') :].split("</div>", 1)[0]
    assert "agreement 100 % (the rule asks 100 %)" in screen
    assert "settled by the screen" in screen and "(agreed)" in screen
    assert screen.count(">SUPPORTS<") == 2  # both debaters, as label badges
    assert "no debate was needed" in page  # the stop reason in words


async def test_the_page_and_the_printed_result_show_an_escalated_screen(
    scripted, fake_tools, capsys
):
    from factdebate.cli.show import print_result

    result = await escalated_result(scripted, "REFUTES")
    page = render_debate_page(result, CLAIM, "escalate-tool-mad")
    screen = page[page.index('<div id="screen">') :].split("</div>", 1)[0]
    assert "agreement 50 %" in screen and "<b>escalated</b> (disagreed)" in screen
    print_result(result)
    printed = capsys.readouterr().out
    assert "screen: Screen labels: SUPPORTS, REFUTES (agreement 50%" in printed
    assert "so the method proper runs" in printed


def test_a_page_without_a_screen_has_no_screen_line():
    result = {"verdict": "SUPPORTS", "transcript": [], "cost": {}, "errors": []}
    assert 'id="screen"' not in render_debate_page(result, CLAIM, "tool-mad")
