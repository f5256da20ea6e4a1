"""Benchmarks: run a method over a dataset, score it, report and compare runs."""
