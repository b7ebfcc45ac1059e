"""Fixtures of the PII tests (their shared helpers are in ``leaks.py``)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from django.db import connection

from tests.datasets_build.pii.leaks import Collect


@pytest.fixture
def every_log() -> Iterator[Collect]:
    """Every logger at DEBUG into one handler (loggers that do not propagate get it too), SQL included."""
    handler = Collect()
    loggers = [logging.getLogger()] + [logging.getLogger(name) for name in list(logging.root.manager.loggerDict)]
    saved = [(lg, lg.level, lg.disabled) for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.DEBUG)
        lg.disabled = False
        if lg is logging.getLogger() or not lg.propagate:
            lg.addHandler(handler)
    forced = connection.force_debug_cursor
    connection.force_debug_cursor = True
    yield handler
    connection.force_debug_cursor = forced
    for lg, level, disabled in saved:
        lg.setLevel(level)
        lg.disabled = disabled
        lg.removeHandler(handler)
