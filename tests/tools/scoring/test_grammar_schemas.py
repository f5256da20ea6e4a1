"""A grammar-held model (the embedded SmolLM2) is asked RAGAS's faithfulness steps with lists
that cannot be empty and verdicts of 0 or 1, so faithfulness is computed on it."""

from __future__ import annotations

import asyncio
import json
from typing import Any, ClassVar

from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from factdebate.tools.models.llm import CallSite
from factdebate.tools.scoring.ragas_metrics import ragas_scores
from tests.fakes import ScriptedChatModel


class GrammarModel(ScriptedChatModel):
    """Answers as a small model under a JSON grammar would: the shortest JSON the schema lets
    through (an empty list where one is allowed); records the schemas it was held to."""

    structured_output_mode: ClassVar[str] = "grammar"
    schemas: list[dict[str, Any]] = []

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
        schema = (kw.get("response_format") or {}).get("schema") or {}
        self.schemas.append(schema)
        props = schema.get("properties", {})
        statements = props.get("statements", {})
        if "question" in props:
            reply: dict[str, Any] = {"question": "Where is the tower?", "noncommittal": 0}
        elif statements.get("minItems", 0) < 1:
            reply = {"statements": []}  # what the small model wrote, allowed by the grammar
        elif statements.get("items", {}).get("type") == "string":
            reply = {"statements": ["The tower stands in Paris."]}
        else:
            verdict = {"statement": "The tower stands in Paris.", "reason": "doc 1", "verdict": 1}
            reply = {"statements": [verdict]}
        message = AIMessage(json.dumps(reply))
        return ChatResult(generations=[ChatGeneration(message=message)])


class Flat(Embeddings):
    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]

    def embed_query(self, text: str) -> list[float]:
        return [1.0, 0.0]


def test_faithfulness_is_computed_on_a_grammar_held_model() -> None:
    model = GrammarModel(schemas=[])
    scores = asyncio.run(
        ragas_scores(
            claim="The Eiffel Tower is in Paris.",
            answer="The tower stands in Paris [1].",
            contexts=["The Eiffel Tower stands in Paris."],
            model=model,
            embeddings=Flat(),
            site=CallSite(role="scorer", agent="a", stage="score"),
            strictness=1,
        )
    )
    assert scores.faithfulness == 1.0, scores.errors
    lists = [s for s in model.schemas if "statements" in s.get("properties", {})]
    assert len(lists) == 2  # the statement step and the verdict step
    for schema in lists:
        assert schema["properties"]["statements"]["minItems"] == 1
    verdicts = json.dumps(lists[1])
    assert '"enum": [0, 1]' in verdicts or '"const"' in verdicts
