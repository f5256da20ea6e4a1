"""Tests of factdebate.tools: one folder per room."""
