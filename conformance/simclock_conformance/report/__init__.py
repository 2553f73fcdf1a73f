"""Private: reports, verdicts and their texts (root causes, explanations, HTML matrix)."""
