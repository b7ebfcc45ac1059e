"""Fixtures of the release tests: projects with a release history (tests/exports/release_history.py)."""

from tests.exports.release_history import history, planted  # noqa: F401 (fixtures)
