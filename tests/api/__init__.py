"""Tests of factdebate.api: streamed state and the result contract."""
