"""Private: the wire protocol (SPEC §18): its engine, driver transport and reply comparison."""
