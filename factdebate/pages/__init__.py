"""Self-contained HTML pages of debates."""
