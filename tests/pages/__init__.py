"""Tests of factdebate.pages: the debate page."""
