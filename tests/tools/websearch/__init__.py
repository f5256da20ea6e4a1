"""Tests of factdebate.tools.websearch: the search backends."""
