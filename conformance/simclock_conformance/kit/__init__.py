"""Private: what a backend author's factory meets (loading, rigs, horizons, limits, checks)."""
