"""Judging runs: scores, statistics, reports, pages, prices, estimates, matching, calibration."""
