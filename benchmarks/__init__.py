"""Benchmarks run by make targets (not by the test suite): speed and its raw baselines."""
