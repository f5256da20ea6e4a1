"""Grammar-held sampling for llama.cpp that checks the chosen token before the whole vocabulary."""

from __future__ import annotations

import ctypes
import math
from types import MethodType
from typing import Any

import llama_cpp


class CheckFirstSampler:
    """Samples without the grammar, then asks the grammar about that one token only.

    llama-cpp-python puts the grammar in the sampler chain, so every generated token checks
    all ~49k vocabulary entries against the grammar (about 6 ms per token for SmolLM2, most
    of a token's time). Most tokens a model picks are ones the grammar allows, so this
    sampler picks from the chain without the grammar and checks just that token; only when
    the grammar refuses it is the full chain (grammar included) run. Greedy decoding picks
    exactly the token the full chain would; temperature sampling draws from the same
    grammar-masked distribution (a refused draw is redrawn from the masked one). This is
    what llama.cpp's own command-line sampler does.
    """

    def __init__(self, free: Any, full: Any, checker: Any) -> None:
        self._free_checker = llama_cpp.llama_sampler_free  # still callable at interpreter exit
        self.free, self.full, self.checker = free, full, checker
        self._cell = llama_cpp.llama_token_data(id=0, logit=0.0, p=0.0)
        self._one = llama_cpp.llama_token_data_array(
            data=ctypes.pointer(self._cell), size=1, selected=-1, sorted=False
        )
        self.full_runs = 0
        """How many tokens needed the full chain (the grammar refused the free choice)."""

    def allows(self, token: int) -> bool:
        """Whether the grammar, in its current state, accepts ``token`` next."""
        self._cell.id = llama_cpp.llama_token(token)
        self._cell.logit = self._cell.p = 0.0
        self._one.size, self._one.selected = 1, -1
        llama_cpp.llama_sampler_apply(self.checker, ctypes.byref(self._one))
        return math.isfinite(self._cell.logit)

    def sample(self, ctx: Any, idx: int = -1) -> int:
        """The next token; every sampler's state (penalties, grammar) then records it."""
        token = int(self.free.sample(ctx, idx))  # also records it in the free chain
        if self.allows(token):
            self.full.accept(token)
        else:
            self.full_runs += 1
            token = int(self.full.sample(ctx, idx))
            self.free.accept(token)
        llama_cpp.llama_sampler_accept(self.checker, token)
        return token

    def close(self) -> None:
        """Free the grammar checker (the two chains free themselves)."""
        if self.checker is not None:
            self._free_checker(self.checker)
            self.checker = None

    def __del__(self) -> None:
        self.close()


def _check_first_init_sampler(llm: Any, **settings: Any) -> Any:
    """``Llama._init_sampler`` returning a ``CheckFirstSampler`` when a grammar is given."""
    library = type(llm)._init_sampler
    grammar = settings.get("grammar")
    if grammar is None or settings.get("logits_processor") is not None:
        return library(llm, **settings)
    checker = llama_cpp.llama_sampler_init_grammar(
        llm._model.vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8")
    )
    if not checker:
        return library(llm, **settings)  # let the library report the bad grammar its way
    free = library(llm, **{**settings, "grammar": None})
    return CheckFirstSampler(free, library(llm, **settings), checker)


def check_grammar_first(llm: Any) -> None:
    """Make the llama-cpp-python model ``llm`` sample grammar-held answers check-first."""
    llm._init_sampler = MethodType(_check_first_init_sampler, llm)
