"""Running a benchmark: items, invokers, the runner, repeats, suites, review queue, tracing."""
