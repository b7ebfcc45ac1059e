"""Inter-annotator agreement: reliability data from the database, the coefficients, per-task measures,
annotator quality, per-item disagreement and the report (see docs/agreement.md)."""
