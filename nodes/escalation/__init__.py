"""Escalation: a cheap screen of the evidence first, the method proper only where it is unsure."""
