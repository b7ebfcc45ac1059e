"""From raw corpora to screened items: sources and licences, importers, PII, screening, dedup, splits."""
