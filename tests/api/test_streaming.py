"""Streamed state: each node's work shows up, in order, where `langgraph dev` lets it through.

`langgraph dev` (and Studio) filter every streamed chunk to the graph's output schema, in
``updates`` as in ``values`` mode; ``server_updates`` applies the same filter in process.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from factdebate.api import CONTRACT_KEYS, METHOD_KEYS, STREAM_ONLY_KEYS, contract, output_keys
from factdebate.graphs.madam_rag import graph as madam_graph
from factdebate.graphs.registry import METHODS, load_method
from factdebate.graphs.tool_mad import graph as tool_mad_graph
from factdebate.nodes.labelled import shown_label, without_label
from factdebate.nodes.madam_rag.context import MadamContext
from factdebate.nodes.tool_mad.context import ToolMADContext
from tests.conftest import doc
from tests.fakes import ragas_rules

CLAIM = "The Eiffel Tower is located in Paris."
QUESTION = "In which year was Michael Jordan born?"
NBA = doc("jordan-nba", "Michael Jeffrey Jordan, the basketball player, was born in 1963.")
PROF = doc("jordan-prof", "Michael Irwin Jordan, the Berkeley professor, was born in 1956.")


def tool_mad_rules(label_b: str = "REFUTES") -> list[Any]:
    return [
        *ragas_rules(faithful=True, relevant_question=CLAIM),
        ("You are the judge", "Both documents place the tower in Paris.\n\n**SUPPORTS**"),
        ("inside square brackets", "[Eiffel Tower location]"),
        (
            lambda p: "Decide whether the claim holds" in p and "local document collection" in p,
            "Document 1 says the tower is in Paris.\n**SUPPORTS**",
        ),
        ("Decide whether the claim holds", f"The search result is unclear.\n**{label_b}**"),
    ]


def madam_rules() -> list[Any]:
    def agent(answer: str) -> str:
        return json.dumps({"answer": answer, "explanation": "My document states it."})

    aggregate = json.dumps({"answers": ["1963", "1956"], "explanation": "Two people."})
    return [
        ("You combine the answers of several agents", aggregate),
        ("basketball player", agent("1963")),
        ("Berkeley professor", agent("1956")),
    ]


async def server_updates(
    graph: Any, payload: dict[str, Any], context: Any
) -> list[tuple[str, dict[str, Any]]]:
    """``(node, update)`` as `langgraph dev` streams them: keys outside the output schema cut."""
    keys = output_keys(graph.builder)
    seen = []
    async for chunk in graph.astream(payload, context=context, stream_mode="updates"):
        for node, update in chunk.items():
            seen.append((node, {k: v for k, v in (update or {}).items() if k in keys}))
    return seen


def first_index(events: list[tuple[str, dict[str, Any]]], has: Any) -> tuple[int, str]:
    """Index and node of the first streamed update for which ``has(update)`` holds."""
    for i, (node, update) in enumerate(events):
        if has(update):
            return i, node
    raise AssertionError("never streamed")


def draft(update: dict[str, Any], agent: str) -> dict[str, Any]:
    return dict((update.get("drafts") or {}).get(agent) or {})


async def test_tool_mad_streams_each_part_when_its_node_finishes(scripted, fake_tools):
    name, _ = scripted(tool_mad_rules())
    events = await server_updates(
        tool_mad_graph, {"claim": CLAIM}, ToolMADContext(model=name, max_rounds=1)
    )
    for agent in ("debater_a", "debater_b"):
        parts = [
            ("query", lambda u, a=agent: draft(u, a).get("query") == "Eiffel Tower location"),
            ("documents", lambda u, a=agent: bool(draft(u, a).get("evidence"))),
            ("answer", lambda u, a=agent: bool(draft(u, a).get("answer") and draft(u, a)["label"])),
            (
                "score",
                lambda u, a=agent: any(
                    t.get("agent") == a and t.get("faithfulness") is not None
                    for t in u.get("transcript", [])
                ),
            ),
        ]
        found = [first_index(events, has) for _, has in parts]
        # each part arrives with the update of the node that produced it, in debate order
        assert [node for _, node in found] == [
            f"query_{agent}",
            f"retrieve_{agent}",
            f"argue_{agent}",
            f"score_{agent}",
        ]
        assert [i for i, _ in found] == sorted(i for i, _ in found)
        # the score node moves the turn into the transcript and removes the draft
        score_update = events[found[-1][0]][1]
        assert score_update["drafts"] == {agent: None}
    verdict_at, node = first_index(events, lambda u: u.get("verdict") is not None)
    assert node == "judge" and verdict_at > max(
        first_index(events, lambda u: bool(u.get("transcript")))[0], 0
    )
    judged = events[verdict_at][1]
    assert judged["justification"] == "Both documents place the tower in Paris."
    assert judged["decided_by"]["agent"] == "judge"
    assert judged["decided_by"]["reason"] == "round_limit"
    assert "debater_b: REFUTES" in judged["decided_by"]["detail"]


async def test_tool_mad_values_mode_shows_progress_and_ends_with_a_clean_state(
    scripted, fake_tools
):
    name, _ = scripted(tool_mad_rules(label_b="SUPPORTS"))
    keys = output_keys(tool_mad_graph.builder)
    snapshots = [  # in process ``values`` carries every channel; the server cuts to ``keys``
        {k: v for k, v in values.items() if k in keys}
        async for values in tool_mad_graph.astream(
            {"claim": CLAIM}, context=ToolMADContext(model=name), stream_mode="values"
        )
    ]
    queried = next(i for i, s in enumerate(snapshots) if draft(s, "debater_a").get("query"))
    argued = next(i for i, s in enumerate(snapshots) if draft(s, "debater_a").get("answer"))
    scored = next(i for i, s in enumerate(snapshots) if s.get("transcript"))
    assert queried < argued < scored
    final = snapshots[-1]
    assert final["drafts"] == {} and final["stop_reason"] == "consensus"
    record = final["decided_by"]
    assert record["agent"] == "debaters" and record["round"] == 1
    assert set(record["scores"]) == {"debater_a", "debater_b"}
    assert record["scores"]["debater_a"]["faithfulness"] == pytest.approx(1.0)
    assert final["justification"] == "Document 1 says the tower is in Paris."


async def test_madam_rag_streams_documents_then_agents_then_the_aggregate(scripted):
    name, _ = scripted(madam_rules())
    events = await server_updates(
        madam_graph,
        {"question": QUESTION, "documents": [NBA, PROF]},
        MadamContext(model=name, max_rounds=2),
    )
    docs_at, node = first_index(events, lambda u: bool(u.get("documents")))
    assert node == "prepare"
    agent_turns = [
        i
        for i, (n, u) in enumerate(events)
        if n == "doc_agent" and any(t.get("answer") for t in u.get("transcript", []))
    ]
    verdict_at, node = first_index(events, lambda u: u.get("verdict") is not None)
    assert node == "aggregate"
    assert docs_at < min(agent_turns) and max(agent_turns[:2]) < verdict_at
    assert len(agent_turns) == 4  # two agents, two rounds: every answer streamed
    stop_at, node = first_index(events, lambda u: bool(u.get("stop_reason")))
    final = events[stop_at][1]
    assert node == "aggregate" and final["stop_reason"] == "answers_stable"
    assert final["decided_by"]["agent"] == "aggregator" and final["decided_by"]["round"] == 2
    for _, update in events:  # internal keys never reach the server's stream
        assert not {"run_key", "last_answers", "last_explanation"} & set(update)


async def test_madam_rag_result_has_only_documented_keys_and_no_unparsed_turns(scripted):
    from factdebate.api import averify

    name, _ = scripted(madam_rules())
    result = await averify(QUESTION, "madam-rag", [NBA, PROF], model=name, max_rounds=1)
    assert set(result) <= set(CONTRACT_KEYS) | set(METHOD_KEYS)
    assert {"answers", "documents", "decided_by"} <= set(result)
    assert result["errors"] == []
    assert all(shown_label(t, result["errors"]) != "UNPARSED" for t in result["transcript"])


async def test_tool_mad_contract_drops_drafts_and_adds_reasoning(scripted, fake_tools):
    from factdebate.api import averify

    name, _ = scripted(tool_mad_rules(label_b="SUPPORTS"))
    result = await averify(CLAIM, "tool-mad", model=name)
    assert "drafts" not in result and result["decided_by"]["reason"] == "consensus"
    for turn in result["transcript"]:
        assert "**" in turn["answer"] and "**" not in turn["reasoning"]
        assert turn["reasoning"] and turn["label"] not in turn["reasoning"]


def test_every_output_key_is_documented_or_stream_only():
    """A key a graph returns must be in the contract, a documented extra, or stream-only."""
    allowed = set(CONTRACT_KEYS) | set(METHOD_KEYS) | set(STREAM_ONLY_KEYS)
    for method in METHODS:
        graph, _ = load_method(method)
        extra = output_keys(graph.builder) - allowed
        assert not extra, f"{method} returns undocumented keys {sorted(extra)}"


@pytest.mark.parametrize("method", sorted(METHODS))
def test_studio_gets_the_input_and_output_schema_of_every_method(method: str):
    """`langgraph dev` serves these to Studio; a schema pydantic cannot build leaves it blank."""
    graph, _ = load_method(method)
    output = graph.get_output_jsonschema()
    assert {"verdict", "transcript", "decided_by"} <= set(output["properties"])
    assert graph.get_input_jsonschema()["properties"]


def test_contract_keeps_documented_keys_only():
    state = {
        "verdict": "1963",
        "justification": "j",
        "stop_reason": "round_limit",
        "rounds": 2,
        "answers": ["1963"],
        "run_key": "abc",
        "last_answers": ["1963"],
        "drafts": {},
        "round": 3,
    }
    out = contract(state)
    assert set(out) == {*CONTRACT_KEYS, "answers"}
    assert out["decided_by"] == {
        "agent": "",
        "round": 2,
        "reason": "round_limit",
        "detail": "stop reason round_limit",
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The tower is in Paris.\n**SUPPORTS**", "The tower is in Paris."),
        ("Reasoning here.\n\nVerdict: REFUTES.\n", "Reasoning here."),
        ("Line one.\nFinal answer: **Not enough info**", "Line one."),
        ("It says **SUPPORTS** twice.\nSo: the label is SUPPORTS", None),
        ("Weighed both.\nCONFLICTING EVIDENCE/CHERRY-PICKING", "Weighed both."),
        ("**NEI**", ""),
        ("The juror is sure.\nTRUE", "The juror is sure."),
        ("Nothing to strip here.", "Nothing to strip here."),
        ("Keep **bold words** as they are.\n**REFUTES**", "Keep **bold words** as they are."),
        ("", ""),
    ],
)
def test_without_label(text: str, expected: str | None):
    got = without_label(text)
    if expected is None:  # a last line that is a sentence stays; the bold label is unbolded
        assert got == "It says SUPPORTS twice.\nSo: the label is SUPPORTS"
    else:
        assert got == expected


def test_shown_label_tells_unreadable_from_free_text():
    turn = {"agent": "agent_1", "round": 1, "answer": "1963", "label": None}
    assert shown_label(turn, []) == ""
    assert shown_label({**turn, "label": "SUPPORTS"}, []) == "SUPPORTS"
    error = {"agent": "agent_1", "round": 1, "kind": "parse_error", "message": "m"}
    assert shown_label(turn, [error]) == "UNPARSED"
    assert shown_label(turn, [{**error, "round": 2}]) == ""


@pytest.mark.service
async def test_langgraph_dev_streams_drafts_in_updates_and_values(server: str):
    """Through a live `langgraph dev` (tests/server_graph.py): the SDK sees each part in order."""
    from langgraph_sdk import get_client

    client = get_client(url=server)
    events: list[tuple[str, dict[str, Any]]] = []
    snapshots: list[dict[str, Any]] = []
    async for part in client.runs.stream(
        None,
        "tool-mad",
        input={"claim": CLAIM},
        context={"model": "scripted-server"},
        stream_mode=["updates", "values"],
    ):
        if part.event == "updates":
            events += [(node, update or {}) for node, update in part.data.items()]
        elif part.event == "values":
            snapshots.append(part.data)
    agent = "debater_a"
    order = [
        first_index(events, lambda u: bool(draft(u, agent).get("query"))),
        first_index(events, lambda u: bool(draft(u, agent).get("evidence"))),
        first_index(events, lambda u: bool(draft(u, agent).get("answer"))),
        first_index(events, lambda u: any(t["agent"] == agent for t in u.get("transcript", []))),
        first_index(events, lambda u: u.get("verdict") is not None),
    ]
    assert [node for _, node in order] == [
        f"query_{agent}",
        f"retrieve_{agent}",
        f"argue_{agent}",
        f"score_{agent}",
        "consensus_check",
    ]
    assert [i for i, _ in order] == sorted(i for i, _ in order)
    assert any(draft(s, agent).get("query") for s in snapshots)  # values mode shows it too
    final = snapshots[-1]
    assert final["decided_by"]["agent"] == "debaters" and final["drafts"] == {}
    assert "**" not in final["justification"]


def test_terminal_shows_labels_plainly_and_free_text_turns_without_unparsed(
    tmp_path, data_home, scripted, fake_tools
):
    """`factdebate verify`: no raw **LABEL** markup; MADAM-RAG's free-text turns unlabelled."""
    from typer.testing import CliRunner

    from factdebate.cli import app

    runner = CliRunner()
    name, _ = scripted(tool_mad_rules())
    shown = runner.invoke(app, ["verify", CLAIM, "--model", name, "--rounds", "1"])
    assert shown.exit_code == 0, shown.output
    assert "**" not in shown.output
    assert "→ SUPPORTS" in shown.output and "→ REFUTES" in shown.output
    assert "decided by judge after round 1" in shown.output
    assert "Both documents place the tower in Paris." in shown.output

    docs = tmp_path / "docs.jsonl"
    docs.write_text("\n".join(json.dumps(d) for d in (NBA, PROF)) + "\n")
    name, _ = scripted(madam_rules())
    args = ["verify", QUESTION, "--method", "madam-rag", "--documents", str(docs)]
    madam = runner.invoke(app, [*args, "--model", name, "--rounds", "1"])
    assert madam.exit_code == 0, madam.output
    assert "UNPARSED" not in madam.output and "recorded errors: 0" in madam.output
    assert "answer: 1963" in madam.output and "decided by aggregator" in madam.output
    # an agent whose reply cannot be read is UNPARSED, and the run counts its error
    name, _ = scripted([("basketball player", "no JSON here"), *madam_rules()])
    broken = runner.invoke(app, [*args, "--model", name, "--rounds", "1"])
    assert broken.exit_code == 0, broken.output
    assert "UNPARSED" in broken.output and "recorded errors: 0" not in broken.output


async def test_mad_fact_streams_clerk_claims_then_each_juror_with_subgraphs(scripted, fake_tools):
    """MAD-Fact: the clerk's claims stream first; with subgraphs each juror's turn follows."""
    from factdebate.graphs.mad_fact import graph as mad_fact_graph
    from factdebate.nodes.mad_fact.context import MADFactContext

    claims = [CLAIM, "The Eiffel Tower was completed in 1889."]
    name, _ = scripted(
        [
            ("You are the clerk of a fact-checking jury", json.dumps({"claims": claims})),
            ("how confident are you", "I know this well.\nCONFIDENCE: 0.9"),
            ("Give your opinion on the claim", "Reasoned.\n**TRUE**"),
        ]
    )
    keys = output_keys(mad_fact_graph.builder)
    events: list[tuple[tuple[str, ...], str, dict[str, Any]]] = []
    async for namespace, chunk in mad_fact_graph.astream(
        {"question": "Tell me about the tower.", "answer": " ".join(claims)},
        context=MADFactContext(model=name, merge_method="text"),
        stream_mode="updates",
        subgraphs=True,
    ):
        for node, update in chunk.items():
            visible = {k: v for k, v in (update or {}).items() if not namespace and k in keys}
            events.append((namespace, node, visible if not namespace else update or {}))
    clerk_at = next(i for i, (ns, n, u) in enumerate(events) if n == "clerk")
    assert events[clerk_at][2]["claim_texts"] == claims  # streamed, not only kept inside
    juror_turns = [i for i, (ns, n, u) in enumerate(events) if ns and u.get("transcript")]
    pooled = [i for i, (ns, n, u) in enumerate(events) if not ns and n == "jury"]
    scored = next(i for i, (ns, n, u) in enumerate(events) if not ns and n == "score")
    assert clerk_at < min(juror_turns) and min(juror_turns) < min(pooled)
    assert len(pooled) == 2 and all(events[i][2]["claim_results"] for i in pooled)
    assert max(pooled) < scored and events[scored][2]["decided_by"]["agent"] == "jury"
    final = contract({**events[clerk_at][2], **events[scored][2]})
    assert "claim_texts" not in final and final["decided_by"]["reason"] == "scored"
