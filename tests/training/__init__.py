"""Tests of factdebate.training: SynDeC export and moderator post-training."""
