"""Tests of factdebate.tools.models: chat models, structured output, the embedded model."""
