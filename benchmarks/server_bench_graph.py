"""CoT served by `langgraph dev` for ``make bench-server``: a model that waits a fixed latency."""

from __future__ import annotations

import os

from benchmarks.speed import LatencyChatModel
from factdebate.graphs.cot import graph
from factdebate.tools.models.providers import register_model

MODEL = "fixed-latency"
LATENCY_ENV = "FACTDEBATE_BENCH_LATENCY_S"


def install(latency: float) -> None:
    """Register the fixed-latency model (every answer a SUPPORTS verdict) in this process."""
    model = LatencyChatModel(rules=[], latency=latency)
    model.default = "The claim matches what is known.\n**SUPPORTS**"
    register_model(MODEL, model)


install(float(os.environ.get(LATENCY_ENV, "0.5")))

__all__ = ["graph"]
