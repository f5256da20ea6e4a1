"""Tests of factdebate.prompts."""
