"""Where runs are kept: checkpointed threads and run folders."""
