"""The embedded llama.cpp model: a build that cannot run here is a clear error, not a crash."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import llama_cpp
import numpy as np
import pytest

from factdebate.tools.core import cpu
from factdebate.tools.core.records import ModelConfigError
from factdebate.tools.models import local_llm
from tests.bounded import MODEL_GUARD_S, run_bounded

AMX_INFO = b"CPU : AVX2 = 1 | AVX512 = 1 | AMX_INT8 = 1 | OPENMP = 1 | "
SEGFAULT = "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n"


def test_installed_build_generates_a_token_on_this_machine():
    """Run in a child process so a crashing build fails this test instead of killing pytest."""
    path = str(local_llm.local_model_path())
    probe = run_bounded(
        [sys.executable, "-c", local_llm.BUILD_PROBE, path],
        capture_output=True,
        what="the llama.cpp build probe",
        guard_s=MODEL_GUARD_S,
        check=False,
    )
    assert probe.returncode == 0, (
        f"llama.cpp died with {probe.returncode}: {probe.stderr.decode()[-500:]}; "
        f"rebuild with {local_llm.PORTABLE_REBUILD}"
    )


def test_amx_build_that_crashes_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(llama_cpp, "llama_print_system_info", lambda: AMX_INFO)
    monkeypatch.setattr(local_llm, "BUILD_PROBE", SEGFAULT)
    with pytest.raises(ModelConfigError) as caught:
        local_llm.check_llama_build(local_llm.local_model_path())
    message = str(caught.value)
    assert "signal 11" in message and "-DGGML_NATIVE=OFF" in message and "\n" not in message


def test_amx_build_that_runs_is_accepted(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(llama_cpp, "llama_print_system_info", lambda: AMX_INFO)
    monkeypatch.setattr(local_llm, "BUILD_PROBE", "pass\n")
    local_llm.check_llama_build(local_llm.local_model_path())


def test_builds_without_amx_are_not_probed(monkeypatch: pytest.MonkeyPatch):
    def no_probe(*args: object, **kwargs: object) -> None:
        raise AssertionError("a build without AMX must not be probed")

    monkeypatch.setattr(llama_cpp, "llama_print_system_info", lambda: b"CPU : AVX2 = 1 | ")
    monkeypatch.setattr(local_llm.subprocess, "run", no_probe)
    local_llm.check_llama_build(local_llm.local_model_path())


def test_thread_count_follows_the_setting(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(local_llm.THREADS_ENV, "3")
    assert local_llm.llama_threads() == 3
    for bad in ("0", "two", "-1", str(cpu.MAX_THREADS + 1)):
        monkeypatch.setenv(local_llm.THREADS_ENV, bad)
        with pytest.raises(ModelConfigError, match=local_llm.THREADS_ENV):
            local_llm.llama_threads()


def test_thread_count_follows_the_free_cores_by_default(monkeypatch: pytest.MonkeyPatch):
    for raw in ("", "idle", " IDLE "):
        monkeypatch.setenv(local_llm.THREADS_ENV, raw)
        assert local_llm.fixed_threads() is None
    monkeypatch.setenv(local_llm.THREADS_ENV, "2")
    assert local_llm.fixed_threads() == 2


class FakeLlama:
    """Stands in for llama_cpp.Llama: records what each evaluation ran with."""

    def __init__(self) -> None:
        self._ctx = type("Ctx", (), {"ctx": object()})()
        self.evaluated: list[tuple[int, list[int]]] = []
        self.threads = 0

    def eval(self, tokens: list[int]) -> None:
        self.evaluated.append((self.threads, list(tokens)))


def test_each_evaluation_runs_on_the_cores_free_then(monkeypatch: pytest.MonkeyPatch):
    llm = FakeLlama()
    counts = iter([2, 2, 1, 1, 2])
    cores = type("Cores", (), {"count": lambda self: next(counts)})()
    calls: list[tuple[int, int]] = []

    def set_threads(ctx: object, n: int, n_batch: int) -> None:
        assert ctx is llm._ctx.ctx
        calls.append((n, n_batch))
        llm.threads = n

    monkeypatch.setattr(llama_cpp, "llama_set_n_threads", set_threads)
    local_llm.follow_free_cores(llm, cores)  # type: ignore[arg-type]
    for token in range(5):
        llm.eval([token])
    assert llm.evaluated == [(2, [0]), (2, [1]), (1, [2]), (1, [3]), (2, [4])]
    assert calls == [(2, 2), (1, 1), (2, 2)]  # set only when the count changes


def logits_by_threads(flash_attn: bool) -> list[Any]:
    """The last prompt token's and 3 greedy tokens' logits with 1 and with 2 threads.

    The prompt is about 430 tokens: with flash attention, generated tokens' logits differ
    by the thread count from a few hundred tokens of context on (equal at 100).
    """
    llm = llama_cpp.Llama(
        model_path=str(local_llm.embedded_weights()),
        n_ctx=1024,
        n_threads=1,
        flash_attn=flash_attn,
        logits_all=True,
        verbose=False,
    )
    prompt = " ".join(f"Sentence {i} says the tower stands in Paris." for i in range(40))
    runs = []
    try:
        tokens = llm.tokenize(prompt.encode())
        for threads in (1, 2):
            llama_cpp.llama_set_n_threads(llm._ctx.ctx, threads, threads)
            llm.reset()
            llm.eval(tokens)
            rows = [np.array(llm.scores[llm.n_tokens - 1])]
            for _ in range(3):
                llm.eval([int(np.argmax(rows[-1]))])
                rows.append(np.array(llm.scores[llm.n_tokens - 1]))
            runs.append(np.stack(rows))
    finally:
        llm.close()
    return runs


def test_answers_do_not_depend_on_the_thread_count():
    """Plain attention (the embedded default's): every logit equal to the bit."""
    one, two = logits_by_threads(flash_attn=False)
    assert np.array_equal(one, two)


def test_flash_attention_answers_depend_on_the_thread_count():
    """Why the default is plain attention: flash attention's generated logits move."""
    one, two = logits_by_threads(flash_attn=True)
    assert np.array_equal(one[0], two[0])  # the prompt's (batched) logits still agree
    assert not np.array_equal(one[1:], two[1:])


def test_thread_count_leaves_busy_cores_alone(monkeypatch: pytest.MonkeyPatch):
    import psutil

    monkeypatch.setenv(local_llm.THREADS_ENV, "idle")
    monkeypatch.setattr(cpu.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(psutil, "cpu_count", lambda: 2)
    # The load average counts this process's own earlier work; the sample does not.
    monkeypatch.setattr(cpu.os, "getloadavg", lambda: (1.2, 0.0, 0.0))
    for busy_percent, threads in ((5.0, 2), (55.0, 1), (100.0, 1)):
        monkeypatch.setattr(psutil, "cpu_percent", lambda interval, b=busy_percent: b)
        assert local_llm.llama_threads() == threads, busy_percent


def test_thread_count_falls_back_to_the_load_average(monkeypatch: pytest.MonkeyPatch):
    import psutil

    def unavailable(interval: float) -> float:
        raise OSError("no /proc/stat")

    monkeypatch.setenv(local_llm.THREADS_ENV, "idle")
    monkeypatch.setattr(cpu.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(psutil, "cpu_percent", unavailable)
    monkeypatch.setattr(cpu.os, "getloadavg", lambda: (0.2, 0.0, 0.0))
    assert local_llm.llama_threads() == 2
    monkeypatch.setattr(cpu.os, "getloadavg", lambda: (1.2, 0.0, 0.0))
    assert local_llm.llama_threads() == 1
    monkeypatch.setattr(cpu.os, "getloadavg", lambda: (9.0, 0.0, 0.0))
    assert local_llm.llama_threads() == 1


@pytest.mark.slow
def test_token_rates_are_measured_on_the_loaded_model():
    from factdebate.prompts.labels import LABELS_3
    from factdebate.tools.models.providers import resolve_model

    model = resolve_model("local")
    assert isinstance(model, local_llm.LocalChatModel)
    rates = local_llm.token_rates(model, LABELS_3)
    assert rates["prefill_tps"] > 0 and rates["generate_tps"] > 0
    assert rates["grammar_ms_per_token"] > 0


def test_prefix_cache_setting_is_bounded(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(local_llm.CACHE_ENV, raising=False)
    assert local_llm.prefix_cache_mb() == local_llm.CACHE_MB
    monkeypatch.setenv(local_llm.CACHE_ENV, "0")
    assert local_llm.prefix_cache_mb() == 0
    for bad in ("-1", "lots", "1.5", str(local_llm.MAX_CACHE_MB + 1)):
        monkeypatch.setenv(local_llm.CACHE_ENV, bad)
        with pytest.raises(ModelConfigError, match=local_llm.CACHE_ENV):
            local_llm.prefix_cache_mb()


@pytest.mark.parametrize("cache_mb", [0, 64])
def test_prefix_cache_resumes_a_shared_prefix_after_another_prompt(cache_mb: int):
    """Prompt A, an unrelated prompt B, then A's prefix again: only the cache skips it.

    The resumed answer is the one a fresh context gives, and a saved state holds no logits.
    """
    llm = llama_cpp.Llama(
        model_path=str(local_llm.local_model_path()), n_ctx=512, n_threads=1, verbose=False
    )
    local_llm.use_prefix_cache(llm, cache_mb)
    shared = " ".join(f"Rule {i}: answer in one short sentence." for i in range(12))
    prefix = len(llm.tokenize(shared.encode()))
    second = f"{shared}\nQuestion: Where is Rome?"
    try:
        llm.create_completion(f"{shared}\nQuestion: Where is Paris?", max_tokens=1)
        llm.create_completion("A different prompt about lighthouses.", max_tokens=1)
        original = llama_cpp.Llama.eval
        with local_llm.evaluated_tokens() as evaluated:
            resumed = llm.create_completion(second, max_tokens=12, temperature=0.0)
        assert llama_cpp.Llama.eval is original  # the counter is taken off again
        resumed_evals = evaluated[0]
        assert len(evaluated) > 1  # then one call per generated token
        llm.reset()
        llm.set_cache(None)
        fresh = llm.create_completion(second, max_tokens=12, temperature=0.0)
    finally:
        llm.close()
    assert resumed["choices"][0]["text"] == fresh["choices"][0]["text"]  # type: ignore[index]
    if cache_mb:
        assert resumed_evals < 20 < prefix  # only the new question was evaluated
    else:
        assert resumed_evals > prefix  # the shared prefix was evaluated again


def test_saved_states_hold_the_context_but_not_the_logits():
    llm = llama_cpp.Llama(
        model_path=str(local_llm.local_model_path()), n_ctx=512, n_threads=1, verbose=False
    )
    local_llm.use_prefix_cache(llm, 64)
    try:
        llm.create_completion("Name a colour.", max_tokens=2)
        state = llm.save_state()
    finally:
        llm.close()
    assert state.scores.size == 0  # the library copies n_batch x vocabulary floats here
    assert state.n_tokens > 0 and state.llama_state_size > 0


def test_q8_copy_is_made_once_atomically_and_reused(tmp_path: Path):
    shipped = local_llm.local_model_path()
    made = local_llm.requantized(shipped, tmp_path)
    assert made.parent == tmp_path and made.name.endswith(".Q8_0.gguf")
    assert [p.name for p in tmp_path.iterdir()] == [made.name]  # no temp file left behind
    reader = llama_cpp.Llama(model_path=str(made), vocab_only=True, verbose=False)
    assert reader.metadata["general.file_type"] == str(llama_cpp.LLAMA_FTYPE_MOSTLY_Q8_0)
    reader.close()
    stamp = made.stat().st_mtime_ns
    assert local_llm.requantized(shipped, tmp_path) == made
    assert made.stat().st_mtime_ns == stamp  # reused, not converted again


def test_failed_conversion_is_a_clear_error_and_leaves_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(llama_cpp, "llama_model_quantize", lambda *args: 1)
    with pytest.raises(ModelConfigError) as caught:
        local_llm.requantized(local_llm.local_model_path(), tmp_path)
    assert local_llm.WEIGHTS_ENV in str(caught.value) and "shipped" in str(caught.value)
    assert list(tmp_path.iterdir()) == []


def test_weights_setting_chooses_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("FACTDEBATE_HOME", str(tmp_path))
    monkeypatch.delenv(local_llm.WEIGHTS_ENV, raising=False)
    default = local_llm.embedded_weights()
    assert default.parent == tmp_path / "weights" and default.name.endswith("Q8_0.gguf")
    monkeypatch.setenv(local_llm.WEIGHTS_ENV, "shipped")
    assert local_llm.embedded_weights() == local_llm.local_model_path()
    monkeypatch.setenv(local_llm.WEIGHTS_ENV, "q2")
    with pytest.raises(ModelConfigError, match=local_llm.WEIGHTS_ENV):
        local_llm.embedded_weights()


AGREEMENT_PROMPTS = [
    "<|im_start|>user\nIs the Eiffel Tower in Paris? Answer SUPPORTS or REFUTES.<|im_end|>\n"
    "<|im_start|>assistant\n",
    "<|im_start|>user\nDocument: Fleming discovered penicillin in 1928. Claim: it was "
    "discovered in 1945. Is the claim supported?<|im_end|>\n<|im_start|>assistant\n",
]


def agreement(reference: dict[str, Any], other: dict[str, Any]) -> tuple[int, int]:
    """Next-token choices of two llama.cpp set-ups, teacher-forced over the first's greedy answers.

    Returns how many of the answers' tokens both set-ups would choose, and how many there are.
    """
    common = {"n_ctx": 512, "logits_all": True, "n_threads": 2, "verbose": False}
    models = [llama_cpp.Llama(**{**common, **kwargs}) for kwargs in (reference, other)]
    agree = total = 0
    try:
        for prompt in AGREEMENT_PROMPTS:
            text = models[0].create_completion(prompt, max_tokens=40, temperature=0.0)
            tokens = models[0].tokenize(prompt.encode(), special=True)
            answer = models[0].tokenize(
                text["choices"][0]["text"].encode(),  # type: ignore[index]
                add_bos=False,
                special=True,
            )
            choices = []
            for model in models:
                model.reset()
                model.eval(tokens + answer)
                rows = np.asarray(model.scores[len(tokens) - 1 : len(tokens) + len(answer) - 1])
                assert rows.shape[0] == len(answer)  # `scores` holds n_batch rows, not n_tokens
                choices.append(rows.argmax(axis=1))
            agree += int((choices[0] == choices[1]).sum())
            total += len(answer)
    finally:
        for model in models:
            model.close()
    return agree, total


def test_q8_copy_predicts_like_the_shipped_weights(tmp_path: Path):
    shipped = str(local_llm.local_model_path())
    q8 = str(local_llm.requantized(local_llm.local_model_path(), tmp_path))
    agree, total = agreement({"model_path": shipped}, {"model_path": q8})
    print(f"Q8_0 agreement {agree}/{total}")
    assert total > 20 and agree / total >= 0.9  # measured 0.98; a Q4_0 copy gives 0.86


def test_flash_attention_predicts_like_plain_attention():
    path = str(local_llm.embedded_weights())
    agree, total = agreement(
        {"model_path": path, "flash_attn": False}, {"model_path": path, "flash_attn": True}
    )
    print(f"flash attention agreement {agree}/{total}")
    assert total > 20 and agree / total >= 0.9


async def test_a_cut_answer_names_the_embedded_models_own_cap():
    """The embedded model keeps its own cap (512 by default), whatever the site asks for."""
    from factdebate.tools.models.llm import CallSite, ask
    from factdebate.tools.models.providers import resolve_model

    model = resolve_model("local", max_tokens=12)
    site = CallSite(role="debater", agent="a", stage="argue", max_tokens=1024)
    reply = await ask(model, "Write a long story about a lighthouse keeper.", site)
    assert reply.truncated and reply.text
    cut = [e for e in reply.errors if e["kind"] == "truncated"]
    assert len(cut) == 1 and "12-token" in cut[0]["message"], cut


def test_a_sampled_answer_depends_on_its_prompt_not_on_earlier_calls():
    """Two loads of the model: the same prompt, asked first or after another, samples alike.

    llama-cpp-python drew each call's seed from the previous call's, so a temperature-0.8
    answer (RAGAS's relevance questions) changed with the calls before it (issue 44, item 7).
    """
    prompt = [("human", "Write five random words, comma separated.")]
    first = local_llm.load_local_model(temperature=0.8, max_tokens=24)
    second = local_llm.load_local_model(temperature=0.8, max_tokens=24)
    try:
        alone = first.invoke(prompt).content
        again = first.invoke(prompt).content  # the same prompt asked again: the next sample
        second.invoke([("human", "Name a city in France.")])
        after_another = second.invoke(prompt).content
        reseeded = local_llm.LocalChatModel.model_copy(second, update={"seed": 7})
        other_seed = reseeded.invoke(prompt).content
    finally:
        first.client.close()
        second.client.close()
    assert after_another == alone
    assert again != alone and other_seed != alone
