"""Private: the clause table and the clause programs (data)."""
