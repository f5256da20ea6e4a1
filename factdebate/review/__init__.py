"""Human review of paused runs, run history and replay."""
