"""Chat models: loading by name, calling with budgets, the embedded local model."""
