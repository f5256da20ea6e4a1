"""Tests of factdebate.runs: checkpoint specs and durable runs on PostgreSQL."""
