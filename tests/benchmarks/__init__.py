"""Tests of the benchmarks/ scripts: they run, and their figures come from the script."""
