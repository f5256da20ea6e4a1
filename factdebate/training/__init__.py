"""DebateCV post-training: SynDeC data and moderator D-SFT / D-DPO."""
