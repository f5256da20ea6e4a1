"""Check-first grammar sampling: the library's answers under greedy decoding, the grammar kept."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import llama_cpp
import pytest
from llama_cpp.llama_grammar import LlamaGrammar

from factdebate.prompts.labels import LABELS_3
from factdebate.tools.models.grammar_sampler import CheckFirstSampler, check_grammar_first
from factdebate.tools.models.local_llm import label_grammar, local_model_path

LABEL_PROMPT = (
    "<|im_start|>user\nIs the Eiffel Tower in Paris? One line of reasoning, then the label."
    "<|im_end|>\n<|im_start|>assistant\n"
)
JSON_PROMPT = (
    "<|im_start|>user\nList the statements of this answer as JSON: The tower was built in "
    "1889. It is 330 metres tall.<|im_end|>\n<|im_start|>assistant\n"
)
SCHEMA = {
    "type": "object",
    "properties": {"statements": {"type": "array", "items": {"type": "string"}}},
    "required": ["statements"],
}


@pytest.fixture(scope="module")
def models() -> Iterator[tuple[llama_cpp.Llama, llama_cpp.Llama]]:
    """The library's sampling and check-first sampling, on the shipped weights."""
    pair = [
        llama_cpp.Llama(model_path=str(local_model_path()), n_ctx=1024, seed=0, verbose=False)
        for _ in range(2)
    ]
    check_grammar_first(pair[1])
    yield pair[0], pair[1]
    for model in pair:
        model.close()


def _answer(
    model: llama_cpp.Llama, prompt: str, grammar: LlamaGrammar, temp: float, most: int = 60
) -> str:
    model.reset()
    out = model.create_completion(
        prompt, max_tokens=most, temperature=temp, grammar=grammar, repeat_penalty=1.2, seed=0
    )
    return str(out["choices"][0]["text"])  # type: ignore[index]


@pytest.mark.parametrize("which", ["label", "json"])
def test_greedy_answers_are_the_libraries(
    models: tuple[llama_cpp.Llama, llama_cpp.Llama], which: str
) -> None:
    library, check_first = models
    if which == "label":
        prompt, grammar = LABEL_PROMPT, label_grammar(LABELS_3)
    else:
        prompt = JSON_PROMPT
        grammar = LlamaGrammar.from_json_schema(json.dumps(SCHEMA), verbose=False)
    expected = _answer(library, prompt, grammar, 0.0)
    assert _answer(check_first, prompt, grammar, 0.0) == expected
    assert isinstance(check_first._sampler, CheckFirstSampler)


def test_a_refused_choice_falls_back_to_the_grammar(
    models: tuple[llama_cpp.Llama, llama_cpp.Llama],
) -> None:
    """A grammar the model would never follow by itself: every answer still matches it."""
    _, check_first = models
    grammar = LlamaGrammar.from_string('root ::= "QX" [0-9] [0-9] "!"', verbose=False)
    for temp in (0.0, 0.8):
        assert re.fullmatch(r"QX\d\d!", _answer(check_first, LABEL_PROMPT, grammar, temp))
        assert check_first._sampler.full_runs >= 1


def test_sampled_answers_keep_the_label_format(
    models: tuple[llama_cpp.Llama, llama_cpp.Llama],
) -> None:
    _, check_first = models
    text = _answer(check_first, LABEL_PROMPT, label_grammar(LABELS_3), 0.9, most=400)
    labels = "|".join(re.escape(label) for label in LABELS_3)
    assert re.fullmatch(rf"[^\n*]+\n\*\*({labels})\*\*", text), text


def test_without_a_grammar_the_library_sampler_is_used(
    models: tuple[llama_cpp.Llama, llama_cpp.Llama],
) -> None:
    _, check_first = models
    check_first.reset()
    check_first.create_completion("Hello", max_tokens=2)
    assert not isinstance(check_first._sampler, CheckFirstSampler)
