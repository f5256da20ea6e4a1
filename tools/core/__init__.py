"""The small core every tool shares: records, errors, files, secrets, terminal text."""
