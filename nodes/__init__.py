"""Node functions by role, shared across methods."""
