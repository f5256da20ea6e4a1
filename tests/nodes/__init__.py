"""Tests of factdebate.nodes: the shared parsers, and one folder per method room."""
