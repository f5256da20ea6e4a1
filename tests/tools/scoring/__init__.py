"""Tests of factdebate.tools.scoring: answer scores and weighted factuality."""
