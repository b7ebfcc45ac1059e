"""Gold labels: per-task rules (majority, mean, span majority, Dawid–Skene), adjudication and
gold / attention items. The release builder reads them through :func:`annotation.gold.selectors.gold_labels`."""
