"""Gold labels: per-task rules (majority, mean, span majority, Dawid–Skene), adjudication and
gold / attention items. Writes live in ``services.py`` (``gold_compute`` refreshes a project's gold),
reads in ``selectors.py``."""
