"""Prompt templates, one module per method, in the project's own words."""
