"""Tests of factdebate.review: human review, resume and replay."""
