"""The small core every tool shares."""
