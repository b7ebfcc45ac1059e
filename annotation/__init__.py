"""Projects, roles, guidelines, items, the assignment queue, annotations and flags."""
