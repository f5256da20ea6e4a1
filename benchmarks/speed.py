"""Speed benchmark: critical paths, batch throughput, orchestration overhead, embedded model, index.

Run: ``python -m benchmarks.speed`` (``make bench-speed``). Model calls are fakes that wait a
fixed latency L; retrieval is instant fixed documents. Each ratio is printed next to a raw
LangGraph graph of the same shape measured in the same run, so a busy machine shows in both.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult

from benchmarks.raw_graphs import TOOL_MAD_CALLS_PER_ROUND, raw_madam, raw_tool_mad
from factdebate.tools import dispatch
from factdebate.tools.core.records import Evidence
from factdebate.tools.models.providers import register_model
from factdebate.tools.retrieval.embeddings import EMBEDDING_DIM, override_embeddings
from tests.fakes import ScriptedChatModel, ragas_rules

CLAIM = "The Eiffel Tower is located in Paris."
QUESTION = "In which year was Michael Jordan born?"
TOOL_MAD_ROUNDS = 3
TOOL_MAD_CRITICAL = TOOL_MAD_ROUNDS * TOOL_MAD_CALLS_PER_ROUND + 1  # + the judge
TAG = re.compile(r"\(claim \d+\)")
"""Marks a claim; answers and generated questions repeat it, so no two claims embed alike."""


def _tagged(template: str) -> Callable[[str], str]:
    def answer(prompt: str) -> str:
        found = TAG.search(prompt)
        return template.replace("{tag}", found.group(0) if found else "")

    return answer


TOOL_MAD_RULES: list[Any] = [
    # identical questions within an answer (as at temperature 0), new ones for each claim
    (
        "AnswerRelevanceOutput",
        _tagged('{"question": "Where is the tower {tag}?", "noncommittal": 0}'),
    ),
    # unfaithful answers never pass the stability score: all 3 rounds and the judge run
    *ragas_rules(faithful=False),
    ("You are the judge", "Both debaters place it in Paris.\n**SUPPORTS**"),
    ("inside square brackets", "[Eiffel Tower location]"),
    ("Decide whether the claim holds", _tagged("Document 1 puts it in Paris {tag}.\n**SUPPORTS**")),
]
_claims = itertools.count()
MADAM_RULES: list[Any] = [
    ("You combine the answers of several agents", '{"answers": ["1963"], "explanation": "x"}'),
    ("You are one of several agents", '{"answer": "1963", "explanation": "My document says."}'),
]


class LatencyChatModel(ScriptedChatModel):
    """A scripted model whose every call waits ``latency`` seconds without holding a thread."""

    latency: float = 0.0

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.latency > 0:
            await asyncio.sleep(self.latency)
        return self._generate(messages, stop=stop, **kwargs)


@dataclass
class Row:
    """One line of the report: a measured value, its raw-LangGraph twin and the target."""

    measure: str
    value: str
    raw: str
    target: str
    detail: dict[str, Any]


def _doc(ident: str, text: str) -> Evidence:
    return Evidence(id=ident, title=ident, text=text, source="bench", score=1.0)


def _fixed(found: list[Evidence]) -> dispatch.ToolFn:
    def tool(query: str, k: int) -> list[Evidence]:
        return found[:k]

    return tool


@contextmanager
def fake_retrieval() -> Iterator[None]:
    """Instant fixed documents behind the 'rag' and 'search' tools."""
    docs = {
        "rag": [_doc("rag-1", "The Eiffel Tower stands in Paris, France.")],
        "search": [_doc("web-1", "Paris is home to the Eiffel Tower, built in 1889.")],
    }
    for tool, found in docs.items():
        dispatch.override_tool(tool, _fixed(found))
    try:
        yield
    finally:
        for tool in docs:
            dispatch.override_tool(tool, None)


@contextmanager
def fake_embeddings(enabled: bool = True) -> Iterator[None]:
    """Hash embeddings instead of MiniLM (when ``enabled``)."""
    if enabled:
        override_embeddings(DeterministicFakeEmbedding(size=EMBEDDING_DIM))
    try:
        yield
    finally:
        override_embeddings(None)


def _model(rules: list[Any], latency: float) -> str:
    return register_model(
        f"bench-latency-{latency}", LatencyChatModel(rules=rules, latency=latency)
    )


async def _timed(work: Awaitable[Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = await work
    return time.perf_counter() - t0, out


async def tool_mad_claim(model: str) -> dict[str, Any]:
    """A new Tool-MAD claim on ``model`` (all roles), checked to run every round and the judge."""
    from factdebate.graphs.tool_mad import graph
    from factdebate.nodes.tool_mad.context import ToolMADContext

    out: dict[str, Any] = await graph.ainvoke(
        {"claim": f"{CLAIM} (claim {next(_claims)})"},
        context=ToolMADContext(model=model, max_rounds=TOOL_MAD_ROUNDS),
    )
    if out["rounds"] != TOOL_MAD_ROUNDS or out["errors"]:
        raise RuntimeError(f"benchmark claim went off script: {out['stop_reason']} {out['errors']}")
    return out


async def critical_tool_mad(latency: float, repeats: int) -> Row:
    """Wall time of one 3-round Tool-MAD claim over the 13 dependent calls it needs."""
    model = _model(TOOL_MAD_RULES, latency)
    raw_graph = raw_tool_mad(latency, TOOL_MAD_ROUNDS)
    ideal = TOOL_MAD_CRITICAL * latency
    await tool_mad_claim(_model(TOOL_MAD_RULES, 0.0))  # warm-up: imports and first loads
    walls, raws = [], []
    for _ in range(repeats):
        walls.append((await _timed(tool_mad_claim(model)))[0])
        raws.append((await _timed(raw_graph.ainvoke({"round": 0})))[0])
    wall, raw = statistics.median(walls), statistics.median(raws)
    return Row(
        f"Tool-MAD critical path, L = {latency:g} s: wall / ({TOOL_MAD_CRITICAL} L)",
        f"{wall / ideal:.2f} (~{wall / latency:.0f} dependent calls)",
        f"{raw / ideal:.2f}",
        "<= 1.10",
        {"wall_s": walls, "raw_s": raws, "ideal_s": ideal},
    )


async def critical_madam(latency: float, repeats: int, documents: int = 5) -> Row:
    """Wall time of MADAM-RAG on ``documents`` documents over 2 calls (agents, aggregator)/round."""
    from factdebate.graphs.madam_rag import graph
    from factdebate.nodes.madam_rag.context import MadamContext

    model = _model(MADAM_RULES, latency)
    docs = [
        _doc(f"doc-{i}", f"Michael Jordan was born in 1963 (source {i}).") for i in range(documents)
    ]
    walls, raws, rounds = [], [], 0
    for _ in range(repeats):
        wall, out = await _timed(
            graph.ainvoke(
                {"question": QUESTION, "documents": docs}, context=MadamContext(model=model)
            )
        )
        rounds = int(out["rounds"])
        walls.append(wall)
        raw_graph = raw_madam(latency, documents, rounds)
        raws.append((await _timed(raw_graph.ainvoke({"round": 0})))[0])
    ideal = 2 * rounds * latency
    wall, raw = statistics.median(walls), statistics.median(raws)
    return Row(
        f"MADAM-RAG, {documents} documents, {rounds} rounds: wall / ({2 * rounds} L)",
        f"{wall / ideal:.2f}",
        f"{raw / ideal:.2f}",
        "<= 1.10",
        {"wall_s": walls, "raw_s": raws, "ideal_s": ideal, "rounds": rounds},
    )


async def batch_throughput(latency: float, claims: int, dataset: str) -> Row:
    """``claims`` Tool-MAD claims through ``arun_bench`` at concurrency ``claims`` vs ideal."""
    from factdebate.bench import arun_bench
    from factdebate.datasets import DatasetError

    model = _model(TOOL_MAD_RULES, latency)
    marks: list[float] = []

    def progress(done: int, total: int, *_: float) -> None:
        if done in (0, total):
            marks.append(time.perf_counter())

    ideal = TOOL_MAD_CRITICAL * latency
    raw_graph = raw_tool_mad(latency, TOOL_MAD_ROUNDS)
    raw, _ = await _timed(
        raw_graph.abatch([{"round": 0}] * claims, config={"max_concurrency": claims})
    )
    with tempfile.TemporaryDirectory() as out_dir:
        try:
            await arun_bench(
                "tool-mad",
                dataset,
                Path(out_dir),
                limit=claims,
                concurrency=claims,
                context={"model": model, "collection": "bench_speed_unused"},
                progress=progress,
            )
        except DatasetError as exc:
            return Row(
                f"{claims}-claim batch",
                "skipped",
                f"{ideal / raw:.2f}",
                ">= 0.90",
                {"skipped": str(exc)},
            )
    wall = marks[-1] - marks[0]
    return Row(
        f"{claims} Tool-MAD claims at once (arun_bench, concurrency {claims}), L = {latency:g} s: "
        "share of ideal",
        f"{ideal / wall:.2f}",
        f"{ideal / raw:.2f} (abatch)",
        ">= 0.90",
        {"wall_s": wall, "raw_s": raw, "ideal_s": ideal},
    )


async def overhead(claims: int, minilm: bool) -> Row:
    """Milliseconds per Tool-MAD claim with an instant model and tools (after one warm-up)."""
    model = _model(TOOL_MAD_RULES, 0.0)
    raw_graph = raw_tool_mad(0.0, TOOL_MAD_ROUNDS)
    with fake_embeddings(enabled=not minilm):
        await tool_mad_claim(model)  # warm-up: imports, model and embedding loads
        wall, _ = await _timed(_sequential(claims, lambda: tool_mad_claim(model)))
    raw, _ = await _timed(_sequential(claims, lambda: raw_graph.ainvoke({"round": 0})))
    return Row(
        "orchestration overhead per Tool-MAD claim (instant fakes"
        + (", real MiniLM)" if minilm else ")"),
        f"{1000 * wall / claims:.1f} ms",
        f"{1000 * raw / claims:.1f} ms",
        "<= 60 ms" if minilm else "<= 25 ms",
        {"claims": claims, "wall_s": wall, "raw_s": raw},
    )


async def _sequential(n: int, run: Callable[[], Awaitable[Any]]) -> None:
    for _ in range(n):
        await run()


def embedded_claim() -> list[Row]:
    """The default collection's build, llama.cpp's token rates and one real Tool-MAD claim."""
    import llama_cpp

    from factdebate.api import averify
    from factdebate.prompts.labels import LABELS_3
    from factdebate.tools.models.local_llm import evaluated_tokens, llama_threads, token_rates
    from factdebate.tools.models.providers import resolve_model
    from factdebate.tools.retrieval.corpus import DEFAULT_COLLECTION
    from factdebate.tools.retrieval.embeddings import default_embeddings
    from factdebate.tools.retrieval.index import ensure_index

    build_s, _ = _clock(lambda: ensure_index(DEFAULT_COLLECTION))
    # Both models load once per process (as the index is built once): timed apart.
    load_s, model = _clock(lambda: resolve_model("local"))
    minilm_s, _ = _clock(lambda: default_embeddings().embed_query(CLAIM))
    rates = {**token_rates(model, LABELS_3), "threads": llama_threads()}
    openmp = "OPENMP = 1" in llama_cpp.llama_print_system_info().decode("utf-8", "replace")
    with evaluated_tokens() as counts:
        wall, out = _clock(lambda: asyncio.run(averify(CLAIM, "tool-mad")))
    total = out["cost"].get("total", {})
    evaluated = sum(counts)  # prompt tokens after prefix reuse, plus generated ones
    return [
        Row(
            "embedded default: default collection ready (set-up step; built only when missing)",
            f"{build_s:.1f} s",
            "",
            "at set-up",
            {"build_s": build_s},
        ),
        Row(
            f"embedded default: llama.cpp prefill / generation / grammar sampling "
            f"({rates['threads']:.0f} threads, OpenMP {'on' if openmp else 'off'})",
            f"{rates['prefill_tps']:.0f} / {rates['generate_tps']:.0f} tokens/s; grammar "
            f"{rates['grammar_ms_per_token']:.1f} ms/token",
            "",
            "(tells a slow machine from a slow pipeline)",
            {**rates, "openmp": openmp, "load_s": load_s, "minilm_load_s": minilm_s},
        ),
        Row(
            "embedded default: one Tool-MAD claim (index built, models loaded)",
            f"{wall:.1f} s ({out['rounds']} rounds, {total.get('llm_calls', 0)} calls, "
            f"{total.get('input_tokens', 0)} in / {total.get('output_tokens', 0)} out tokens; "
            f"llama.cpp evaluated {evaluated} tokens after prefix reuse; loaded once per "
            f"process before it: llama.cpp {load_s:.1f} s, MiniLM {minilm_s:.1f} s)",
            "",
            "<= 30 s",
            {"wall_s": wall, "stop_reason": out["stop_reason"], "evaluated": evaluated, **total},
        ),
    ]


def index_build(dataset: str) -> Row:
    """SciFact corpus indexed afresh (dense + BM25) with its retrieval recall."""
    from factdebate.bench.running.retrieval import ENGINES, run_retrieval_bench

    with tempfile.TemporaryDirectory() as out_dir:
        result = run_retrieval_bench(dataset, None, None, Path(out_dir), rebuild=True)
    recall = {name: result["engines"][name]["recall@3"] for name in ENGINES}
    build = sum(result["build_s"].values())  # manifest times per engine: dense, bm25
    return Row(
        f"index build, {dataset} ({result['documents']} documents)",
        f"{build:.0f} s; R@3 " + ", ".join(f"{name} {r:.3f}" for name, r in recall.items()),
        "",
        "<= 120 s, same recall",
        {"build_s": result["build_s"], "recall@3": recall},
    )


def _clock(run: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = run()
    return time.perf_counter() - t0, out


async def fast_rows(latency: float, repeats: int, claims: int, dataset: str) -> list[Row]:
    """The rows that need no real model: critical paths, batch, overhead."""
    with fake_retrieval(), fake_embeddings():
        rows = [
            await critical_tool_mad(latency, repeats),
            await critical_madam(latency, repeats),
            await batch_throughput(latency / 2, claims, dataset),
        ]
    with fake_retrieval():
        rows.append(await overhead(claims, minilm=False))
        rows.append(await overhead(claims, minilm=True))
    return rows


def render(rows: list[Row]) -> str:
    """The rows as a markdown table."""
    lines = ["| measure | this code | raw LangGraph, same run | target |", "|---|---|---|---|"]
    lines += [f"| {r.measure} | {r.value} | {r.raw} | {r.target} |" for r in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Measure and print every row; optionally write them as JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency", type=float, default=0.2, help="fake model latency L (s)")
    parser.add_argument("--repeats", type=int, default=3, help="repetitions per ratio")
    parser.add_argument("--claims", type=int, default=20, help="batch size (batch L = L / 2)")
    parser.add_argument("--dataset", default="fever-mini", help="claims for the batch row")
    parser.add_argument("--index-dataset", default="scifact", help="corpus for the index row")
    parser.add_argument("--skip-embedded", action="store_true", help="no llama.cpp rows")
    parser.add_argument("--skip-index", action="store_true", help="no index-build row")
    parser.add_argument("--json", type=Path, help="also write the rows to this file")
    args = parser.parse_args(argv)
    if not 0 < args.latency <= 5 or not 1 <= args.repeats <= 20 or not 1 <= args.claims <= 200:
        parser.error("need 0 < --latency <= 5, 1 <= --repeats <= 20, 1 <= --claims <= 200")
    rows = asyncio.run(fast_rows(args.latency, args.repeats, args.claims, args.dataset))
    phases: list[Callable[[], list[Row]]] = []
    if not args.skip_embedded:
        phases.append(embedded_claim)
    if not args.skip_index:
        phases.append(lambda: [index_build(args.index_dataset)])
    while True:  # print (and save) the rows so far after each phase: a crash keeps them
        print(render(rows), flush=True)
        if args.json:
            args.json.write_text(json.dumps([asdict(r) for r in rows], indent=2) + "\n")
        if not phases:
            break
        rows += phases.pop(0)()
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
