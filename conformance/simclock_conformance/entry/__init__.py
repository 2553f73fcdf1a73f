"""Private: the entry points (in-process run, pytest plugin, wire run and its CLI, vectors)."""
