"""Decode-step cost of the embedded model against the number of parallel sequences.

Run: ``python -m benchmarks.parallel_decode``. Tells whether sampling several answers to one
prompt as parallel sequences of one llama.cpp batch (RAGAS's ``strictness`` questions, say)
would beat sampling them one after another on this machine: one step that advances ``n``
sequences by a token is timed against one step of a single sequence, alternating the sizes.
Sequences share the prompt's KV cells (``kv_unified``); no sampling is timed, only decoding.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from typing import Any

PROMPT = "Write one question that the following answer replies to. " * 12
MAX_SEQUENCES = 8


def load(sequences: int) -> Any:
    """The embedded model as ``verify`` loads it, in a context holding ``sequences`` at once."""
    from llama_cpp._internals import LlamaContext

    from factdebate.tools.models.local_llm import load_local_model

    llm = load_local_model().client
    params = llm.context_params  # llama-cpp-python builds its context for one sequence
    params.n_seq_max, params.kv_unified = sequences, True
    old = llm._ctx
    llm._ctx = llm._stack.enter_context(
        contextlib.closing(LlamaContext(model=llm._model, params=params, verbose=False))
    )
    old.close()
    llm.reset()
    return llm


def step_seconds(llm: Any, n: int, steps: int) -> list[float]:
    """Seconds of each of ``steps`` decode steps advancing ``n`` copies of the prompt."""
    import llama_cpp
    from llama_cpp._internals import LlamaBatch

    tokens = llm.tokenize(PROMPT.encode("utf-8"))
    llm.reset()
    llm.eval(tokens)
    memory = llama_cpp.llama_get_memory(llm._ctx.ctx)
    for seq in range(1, n):
        llama_cpp.llama_memory_seq_cp(memory, 0, seq, -1, -1)
    batch = LlamaBatch(n_tokens=n, embd=0, n_seq_max=1, verbose=False)
    raw, token = batch.batch, tokens[-1]
    out = []
    try:
        for step in range(steps):
            raw.n_tokens = n
            for seq in range(n):
                raw.token[seq], raw.pos[seq] = token, len(tokens) + step
                raw.seq_id[seq][0], raw.n_seq_id[seq], raw.logits[seq] = seq, 1, True
            t0 = time.perf_counter()
            llm._ctx.decode(batch)
            out.append(time.perf_counter() - t0)
    finally:
        batch.close()  # type: ignore[no-untyped-call]
        for seq in range(n):
            llama_cpp.llama_memory_seq_rm(memory, seq, -1, -1)
    return out


def measure(sizes: list[int], steps: int, repeats: int) -> dict[int, float]:
    """Median step milliseconds for each number of sequences, sizes alternated ``repeats`` times."""
    llm = load(max(sizes))
    try:
        times: dict[int, list[float]] = {n: [] for n in sizes}
        for _ in range(repeats):
            for n in sizes:
                times[n] += step_seconds(llm, n, steps)
    finally:
        llm.close()
    return {n: 1000 * statistics.median(t) for n, t in times.items()}


def render(medians: dict[int, float]) -> str:
    """A Markdown table: step ms, ms per token, and the step against n single steps."""
    one = medians.get(1)
    lines = ["| sequences | one step | per token | step / (n x one-sequence step) |"]
    lines.append("|---:|---:|---:|---:|")
    for n, ms in medians.items():
        ratio = f"{ms / (n * one):.2f}" if one else "-"
        lines.append(f"| {n} | {ms:.1f} ms | {ms / n:.1f} ms | {ratio} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Print the table; exit code 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,2,3,4,8", help="sequence counts, comma-separated")
    parser.add_argument("--steps", type=int, default=40, help="decode steps per size and repeat")
    parser.add_argument("--repeats", type=int, default=3, help="times each size is run")
    args = parser.parse_args(argv)
    try:
        sizes = [int(s) for s in args.sizes.split(",")]
    except ValueError:
        parser.error(f"--sizes: whole numbers separated by commas, got {args.sizes!r}")
    if not sizes or not all(1 <= n <= MAX_SEQUENCES for n in sizes):
        parser.error(f"--sizes: each 1..{MAX_SEQUENCES}")
    if not 1 <= args.steps <= 1000 or not 1 <= args.repeats <= 20:
        parser.error("--steps must be 1..1000 and --repeats 1..20")
    print(render(measure(sizes, args.steps, args.repeats)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
