"""The method catalog and the graphs it names."""
