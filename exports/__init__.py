"""Releases: immutable versioned snapshots, writers, dataset card, checksums, metrics and baselines."""
