"""Tests of factdebate.bench: the runner, its reports, pages, exports and server mode."""
