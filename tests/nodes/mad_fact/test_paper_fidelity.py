"""MAD-Fact paper fidelity: long clerk outputs, model claim merging, claim pool, ablations."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from typing import Any

import pytest

from factdebate.bench.running.long_form import ascore_answer
from factdebate.graphs.jury import graph as jury_graph
from factdebate.nodes.mad_fact.clerk import split_parts
from factdebate.nodes.mad_fact.context import MADFactContext
from tests.fakes import ScriptedChatModel

CLERK = "You are the clerk of a fact-checking jury"
CONF = "how confident are you"
QUERY = "Write one new web search query"
OPINION = "Give your opinion on the claim"
MERGE = "You compare factual claims"
EXPERT = "Answer the question below"


def clerk_numbered(prompt: str) -> str:
    """A clerk that turns every sentence 'Fact N.' of its part into one claim."""
    part = prompt.split("<answer>")[1].split("</answer>")[0]
    return json.dumps(
        {"claims": [f"Fact number {n} holds." for n in re.findall(r"Fact (\d+)\.", part)]}
    )


def sentences(n: int) -> str:
    return " ".join(f"Fact {i}." + " padding" * 8 for i in range(1, n + 1))


# --------------------------------------------------------------------------- clerk


async def test_a_longfact_length_answer_yields_every_claim_in_order(scripted, fake_tools):
    name, model = scripted([(CLERK, clerk_numbered), (OPINION, "Known.\n**TRUE**")])
    answer = sentences(70)  # ~4,900 characters, 70 claims
    out = await ascore_answer(
        answer, model=name, merge_method="text", max_rounds=1, n_evaluators=1, debate_rule=2
    )
    assert [c["claim"] for c in out["claims"]] == [f"Fact number {i} holds." for i in range(1, 71)]
    assert not [e for e in out["errors"] if e["kind"] == "truncated"]
    assert model.calls_with(CLERK) == 2  # split into two parts, merged in order


def test_clerk_and_experts_get_a_long_output_budget():
    ctx = MADFactContext()
    assert ctx.max_claims >= 80 and ctx.clerk_max_output_tokens >= 2048
    assert ctx.output_cap("debater") == ctx.max_output_tokens < ctx.clerk_max_output_tokens


async def test_clerk_and_expert_calls_carry_the_long_cap(monkeypatch, scripted):
    seen: list[tuple[str, int | None]] = []
    from factdebate.tools.models import llm

    real = llm._call

    async def spy(runnable: Any, messages: Any, site: llm.CallSite, *args: Any, **kw: Any) -> Any:
        seen.append((site.role, site.max_tokens))
        return await real(runnable, messages, site, *args, **kw)

    monkeypatch.setattr(llm, "_call", spy)
    expert, _ = scripted([(EXPERT, "Fact 1. Fact 2.")])
    name, _ = scripted([(CLERK, clerk_numbered), (OPINION, "Known.\n**TRUE**")])
    await ascore_answer(
        "Fact 1.",
        "Q?",
        model=name,
        merge_method="text",
        expert_models=[expert],
        max_rounds=1,
        n_evaluators=1,
        debate_rule=2,
    )
    assert ("expert", 4096) in seen and ("clerk", 4096) in seen and ("debater", 1024) in seen


def test_split_parts_keeps_order_and_size():
    text = "First paragraph. It has two sentences.\n\nSecond one." + " More words here." * 40
    parts = split_parts(text, 200)
    assert all(len(p) <= 200 for p in parts)
    assert " ".join(" ".join(parts).split()) == " ".join(text.split())
    assert split_parts("short", 200) == ["short"]


# --------------------------------------------------------------------------- merging

PARAPHRASES = [
    ["The Eiffel Tower was completed in 1889.", "The tower is 330 metres tall."],
    ["Construction of the Eiffel Tower finished in 1889.", "Gustave Eiffel's firm built it."],
    ["The Eiffel Tower's construction ended in 1889.", "The tower stands 330 m high."],
]


def merger(prompt: str) -> str:
    """A model merger: claims about the year 1889, the 330 m height are the same fact."""
    known = re.findall(r"^(\d+)\. (.*)$", prompt.split("New claims:")[0], re.M)
    new = re.findall(r"^\d+\. (.*)$", prompt.split("New claims:")[1], re.M)

    def topic(claim: str) -> str:
        return "1889" if "1889" in claim else "330" if "330" in claim else claim

    out = []
    for claim in new:
        hit = next((int(n) for n, k in known if topic(k) == topic(claim)), 0)
        out.append(hit)
    return json.dumps({"matches": out})


def reference_clerk(prompt: str) -> str:
    for i, claims in enumerate(PARAPHRASES, 1):
        if f"Reference {i}." in prompt:
            return json.dumps({"claims": claims})
    return json.dumps({"claims": ["The Eiffel Tower was finished in 1889."]})


async def test_paraphrased_reference_claims_merge_by_model(scripted, fake_tools):
    name, model = scripted(
        [(MERGE, merger), (CLERK, reference_clerk), (OPINION, "Known.\n**TRUE**")]
    )
    out = await ascore_answer(
        "It was finished in 1889.",
        "Tell me about the Eiffel Tower.",
        ["Reference 1.", "Reference 2.", "Reference 3."],
        model=name,
        max_rounds=1,
        n_evaluators=1,
        debate_rule=2,
    )
    golden = {g["text"]: (g["frequency"], g["weight"]) for g in out["golden"]}
    assert golden == {
        "The Eiffel Tower was completed in 1889.": (3, 4),
        "The tower is 330 metres tall.": (2, 3),
        "Gustave Eiffel's firm built it.": (1, 2),
    }
    assert out["scores"]["weights"] == [4]  # the answer's paraphrase takes the top weight
    assert model.calls_with(MERGE) == 3  # references 2 and 3, then the answer
    assert out["cost"]["merger"]["llm_calls"] == 3


async def test_unreadable_merge_output_is_recorded_and_merges_nothing(scripted, fake_tools):
    name, _ = scripted(
        [(MERGE, '{"matches": [7, 7, 7]}'), (CLERK, reference_clerk), (OPINION, "Ok.\n**TRUE**")]
    )
    out = await ascore_answer(
        "It was finished in 1889.",
        "Q?",
        ["Reference 1.", "Reference 2."],
        model=name,
        max_rounds=1,
        n_evaluators=1,
        debate_rule=2,
    )
    assert [g["frequency"] for g in out["golden"]] == [1, 1, 1, 1]
    assert any(e["stage"] == "merge" and e["kind"] == "parse_error" for e in out["errors"])


# --------------------------------------------------------------------------- claim pool


async def test_claims_run_in_a_rolling_pool_not_in_waves(scripted, fake_tools):
    """One slow claim must not hold back the claims queued behind the fast ones."""
    started: dict[str, float] = {}
    lock = threading.Lock()
    t0 = time.monotonic()

    def opinion(prompt: str) -> str:
        claim = re.search(r"Claim \(to check\): (Fact number \d+)", prompt).group(1)  # type: ignore[union-attr]
        with lock:
            started.setdefault(claim, time.monotonic() - t0)
        time.sleep(0.9 if claim == "Fact number 1" else 0.1)
        return "Known.\n**TRUE**"

    name, _ = scripted([(CLERK, clerk_numbered), (OPINION, opinion)])
    out = await ascore_answer(
        sentences(4),
        model=name,
        merge_method="text",
        max_rounds=1,
        n_evaluators=1,
        debate_rule=2,
        search=False,
        claim_concurrency=2,
    )
    assert len(out["claims"]) == 4
    # claims 3 and 4 start while the slow claim 1 is still running (waves would wait for it)
    assert started["Fact number 4"] < started["Fact number 1"] + 0.7


# --------------------------------------------------------------------------- ablations


async def run_jury(model: str, **settings: Any) -> dict[str, Any]:
    ctx = MADFactContext(model=model, merge_method="text", **settings)
    return await jury_graph.ainvoke({"claim": "The Eiffel Tower is in Paris."}, context=ctx)


async def test_without_role_play_every_juror_has_the_same_profile(scripted, fake_tools):
    name, model = scripted([(CONF, "CONFIDENCE: 0.9"), (OPINION, "Ok.\n**TRUE**")])
    out = await run_jury(name, role_play=False, max_rounds=1)
    opinions = [p for p in model.prompts if OPINION in p]
    assert len(opinions) == 3
    assert all("You are the Juror on a jury" in p for p in opinions)
    assert [t["agent"] for t in out["transcript"]] == ["juror_1", "juror_2", "juror_3"]


async def test_without_debate_one_round_of_statements(scripted, fake_tools):
    name, model = scripted([(CONF, "CONFIDENCE: 0.9"), (OPINION, "Ok.\n**TRUE**")])
    out = await run_jury(name, debate=False, max_rounds=2)
    assert out["claim_results"][0]["rounds"] == 1
    assert model.calls_with(OPINION) == 3


async def test_without_search_nobody_searches(scripted, fake_tools):
    name, model = scripted([(CONF, "CONFIDENCE: 0.1"), (OPINION, "Ok.\n**TRUE**")])
    out = await run_jury(name, search=False, debate_rule=2)
    assert fake_tools["search"] == [] and model.calls_with(QUERY) == 0
    assert model.calls_with(CONF) == 0
    assert out["claim_results"][0]["verdict"] == "TRUE"


async def test_mixed_model_jury_one_model_per_juror(scripted, fake_tools):
    models: list[ScriptedChatModel] = []
    names = []
    for label in ("TRUE", "FALSE", "FALSE"):
        name, model = scripted([(CONF, "CONFIDENCE: 0.9"), (OPINION, f"Ok.\n**{label}**")])
        names.append(name)
        models.append(model)
    base, base_model = scripted([], default="unused")
    out = await run_jury(base, juror_models=names, max_rounds=1)
    assert [m.calls_with(OPINION) for m in models] == [1, 1, 1]
    assert base_model.prompts == []
    assert out["claim_results"][0]["verdict"] == "FALSE"
    with pytest.raises(ValueError, match="one model per juror"):
        MADFactContext(juror_models=names[:2])


def test_ablation_settings_are_in_the_studio_form():
    names = {f for f in MADFactContext.__dataclass_fields__}
    assert {"role_play", "debate", "search", "juror_models"} <= names
    assert asyncio.iscoroutinefunction(ascore_answer)
