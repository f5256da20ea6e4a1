"""With the model's seed fixed, every sampled call repeats: two Tool-MAD runs of one claim give
the same result, answer-relevance questions included, each question with a seed of its own."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from factdebate.graphs.tool_mad import graph
from factdebate.nodes.tool_mad.context import ToolMADContext
from factdebate.tools.models.providers import register_model
from factdebate.tools.scoring.ragas_metrics import question_model
from tests.fakes import ScriptedChatModel, ragas_rules

CLAIM = "The Eiffel Tower is located in Paris."


class SeededModel(ScriptedChatModel):
    """A scripted model that samples as a provider with a seed does: its relevance question
    depends on the seed it is called with; the seeds used are recorded."""

    seed: int | None = None
    temperature: float = 0.0
    seeds: list[int | None] = []

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
        prompt = "\n".join(str(m.content) for m in messages)
        if "AnswerRelevanceOutput" not in prompt:
            return super()._generate(messages, stop, run_manager, **kw)
        self.seeds.append(self.seed)
        question = {"question": f"Where is the tower? (sample {self.seed})", "noncommittal": 0}
        message = AIMessage(json.dumps(question))
        return ChatResult(generations=[ChatGeneration(message=message)])


RULES: list[Any] = [
    *ragas_rules()[:2],
    ("inside square brackets", "[Eiffel Tower location]"),
    ("Decide whether the claim holds", "Document 1 places it in Paris [1].\n**SUPPORTS**"),
    ("You are the judge", "It is in Paris.\n**SUPPORTS**"),
]


def without_times(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: without_times(v)
            for k, v in value.items()
            if not any(t in k for t in ("latency", "seconds", "elapsed", "time"))
        }
    if isinstance(value, list):
        return [without_times(v) for v in value]
    return value


async def run_once(fake_tools: Any) -> tuple[dict[str, Any], list[int | None]]:
    model = SeededModel(rules=RULES, seeds=[])
    name = register_model(f"seeded-{id(model)}", model)
    out = await graph.ainvoke(
        {"claim": CLAIM}, context=ToolMADContext(model=name, sampling_seed=7, max_rounds=1)
    )
    return out, list(model.seeds)  # copies made for other seeds share the list


async def test_two_runs_with_a_fixed_seed_give_the_same_result(
    fake_tools: dict[str, list[str]],
) -> None:
    first, seeds = await run_once(fake_tools)
    second, seeds_again = await run_once(fake_tools)
    assert json.dumps(without_times(first), sort_keys=True, default=str) == json.dumps(
        without_times(second), sort_keys=True, default=str
    )
    assert sorted(seeds) == sorted(seeds_again) == [7, 7, 8, 8, 9, 9]  # 3 questions x 2 debaters
    assert first["transcript"][0]["answer_relevance"] is not None


def test_each_question_has_a_seed_of_its_own_and_no_seed_stays_none() -> None:
    seeded = SeededModel(seed=3)
    assert [question_model(seeded, i).seed for i in range(3)] == [3, 4, 5]
    unseeded = SeededModel()
    assert question_model(unseeded, 2) is unseeded
    plain: Callable[..., Any] = ScriptedChatModel
    model = plain()
    assert question_model(model, 1) is model
