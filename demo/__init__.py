"""The demo: seed users and one project per task type from the bundled corpus, then serve."""
