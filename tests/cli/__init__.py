"""Tests of factdebate.cli: one module per command group."""
