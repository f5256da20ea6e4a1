"""Ten Tool-MAD claims at once against a fixed-latency OpenAI-compatible server, beside one.

Run: ``python -m benchmarks.concurrent_claims`` (``make bench-concurrent``). The fake provider
(``tests/fake_provider.py``) runs in a child process, so its work is not counted as this
process's CPU; every request waits ``--latency`` seconds there and is answered from the
speed benchmark's Tool-MAD script (all three rounds and the judge). The calls go through the
real OpenAI client (``openai-compatible:MODEL@URL``), as a hosted model's do. Printed: the
wall time of one claim and of ``--claims`` claims started together, each over the 13-call
chain (13 x latency), and this process's CPU time per model call, for this code's client
(``LeanChatOpenAI``) and, alternated with it in the same run, LangChain's ``ChatOpenAI``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import sys
import threading
import time
from multiprocessing.connection import Connection
from typing import Any

from benchmarks.speed import TOOL_MAD_CRITICAL, TOOL_MAD_RULES, fake_embeddings, fake_retrieval

MAX_CLAIMS = 64


def scripted_answer(prompt: str, body: dict[str, Any]) -> str:
    """The Tool-MAD script's answer to one request (its schema's name counts as prompt text)."""
    text = f"{prompt}\n{json.dumps(body.get('response_format') or {})}"
    for key, value in TOOL_MAD_RULES:
        if key in text:
            return str(value(text) if callable(value) else value)
    return "I cannot tell.\n**NOT ENOUGH INFO**"


class Delayed:
    """``scripted_answer`` after ``latency`` seconds, waited once per request (not per choice).

    The fake provider serves each request on a thread of its own and asks for the ``n``
    choices of one request on that thread with the same body, so the first choice waits.
    """

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.local = threading.local()

    def __call__(self, prompt: str, body: dict[str, Any]) -> str:
        """The answer, after the request's one wait."""
        if getattr(self.local, "body", None) is not body:
            self.local.body = body
            time.sleep(self.latency)
        return scripted_answer(prompt, body)


def _serve(latency: float, conn: Connection) -> None:
    """Child process: a fake provider answering after ``latency`` s until told to stop."""
    from tests.fake_provider import fake_provider

    with fake_provider(Delayed(latency), honours_n=True) as provider:
        conn.send(provider.model("fake-capable"))
        conn.recv()  # any message (or the parent closing the pipe) stops it
    conn.close()


async def _claims(model: str, count: int) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds and model calls of ``count`` claims started together."""
    from benchmarks.speed import tool_mad_claim

    wall0, cpu0 = time.perf_counter(), time.process_time()
    outs = await asyncio.gather(*(tool_mad_claim(model) for _ in range(count)))
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    calls = sum(int(out["cost"].get("total", {}).get("llm_calls", 0)) for out in outs)
    return wall, cpu, calls


def plain_client(url: str) -> str:
    """LangChain's own ChatOpenAI on the same server, registered: the comparison column."""
    from langchain_openai import ChatOpenAI

    from factdebate.tools.models.providers import register_model

    model = ChatOpenAI(
        model="fake-capable",
        base_url=url,
        api_key="not-needed",  # type: ignore[arg-type]
        temperature=0.0,
        max_completion_tokens=512,
        max_retries=0,
        include_response_headers=True,
    )
    return register_model("bench-langchain-chatopenai", model)


async def measure(
    models: dict[str, str], latency: float, claims: int, repeats: int
) -> dict[str, Any]:
    """For each client: one claim, then ``claims`` at once, ``repeats`` times, alternated."""
    runs: dict[str, dict[str, list[tuple[float, float, int]]]] = {
        name: {"one": [], "many": []} for name in models
    }
    with fake_retrieval(), fake_embeddings():
        for model in models.values():
            await _claims(model, 1)  # warm-up: imports, the client, first schemas
        for _ in range(repeats):
            for name, model in models.items():
                runs[name]["one"].append(await _claims(model, 1))
                runs[name]["many"].append(await _claims(model, claims))
    chain = TOOL_MAD_CRITICAL * latency
    result: dict[str, Any] = {"latency_s": latency, "claims": claims, "chain_s": chain}
    for name, by_size in runs.items():
        result[name] = {}
        for size, rows in by_size.items():
            wall = min(r[0] for r in rows)  # the least disturbed run on a shared machine
            cpu, calls = sum(r[1] for r in rows), sum(r[2] for r in rows)
            result[name][size] = {
                "wall_s": [round(r[0], 3) for r in rows],
                "ratio": round(wall / chain, 3),
                "cpu_s": round(cpu / len(rows), 3),
                "calls": calls // len(rows),
                "cpu_ms_per_call": round(1000 * cpu / max(1, calls), 2),
            }
    return result


def render(result: dict[str, Any], models: dict[str, str]) -> str:
    """The result as a markdown table."""
    lines = [
        f"chain: {TOOL_MAD_CRITICAL} dependent calls x {result['latency_s']:g} s = "
        f"{result['chain_s']:.2f} s; 1-min load average now {os.getloadavg()[0]:.1f}",
        "",
        "| client | run | wall / chain (best) | wall s (each repeat) | model calls | CPU s | "
        "CPU ms per call |",
        "|---|---|---:|---|---:|---:|---:|",
    ]
    for name in models:
        for size, label in (("one", "1 claim"), ("many", f"{result['claims']} claims at once")):
            row = result[name][size]
            walls = ", ".join(f"{w:.2f}" for w in row["wall_s"])
            lines.append(
                f"| {name} | {label} | {row['ratio']:.2f} | {walls} | {row['calls']} | "
                f"{row['cpu_s']:.2f} | {row['cpu_ms_per_call']:.1f} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Start the fake provider, measure, print the table (and the JSON when asked)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per request")
    parser.add_argument("--claims", type=int, default=10, help="claims started together")
    parser.add_argument("--repeats", type=int, default=2, help="runs of each (the best counts)")
    parser.add_argument("--json", action="store_true", help="also print the result as JSON")
    parser.add_argument(
        "--skip-plain", action="store_true", help="without the LangChain ChatOpenAI column"
    )
    args = parser.parse_args(argv)
    if not 0 < args.latency <= 5 or not 1 <= args.claims <= MAX_CLAIMS:
        parser.error(f"need 0 < --latency <= 5 and 1 <= --claims <= {MAX_CLAIMS}")
    if not 1 <= args.repeats <= 10:
        parser.error("need 1 <= --repeats <= 10")
    parent, child = multiprocessing.get_context("spawn").Pipe()
    server = multiprocessing.get_context("spawn").Process(
        target=_serve, args=(args.latency, child), daemon=True
    )
    server.start()
    try:
        if not parent.poll(60):
            raise RuntimeError("the fake provider did not start within 60 s")
        model = parent.recv()
        models = {"this code": model}
        if not args.skip_plain:
            models["LangChain's ChatOpenAI"] = plain_client(model.partition("@")[2])
        result = asyncio.run(measure(models, args.latency, args.claims, args.repeats))
    finally:
        with contextlib.suppress(OSError):
            parent.send("stop")
        server.join(10)
        if server.is_alive():
            server.terminate()
    print(render(result, models))
    if args.json:
        print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
