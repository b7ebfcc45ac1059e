"""The Celery app of the fault tests' workers (``celery -A tests.faults.celery_app worker``): the project's app
with its settings (``CELERY_VISIBILITY_TIMEOUT`` included), but with its own Redis keys for unacknowledged
messages, so that its short visibility timeout never hands back a message of another worker sharing the
broker (another test run's live worker), and a killed test worker never holds up another's sweeps."""

from __future__ import annotations

import os

from config.celery import app

_own = os.environ["GOLDSET_FAULTS_QUEUE"]
app.conf.broker_transport_options = {
    **app.conf.broker_transport_options,
    "unacked_key": f"{_own}.unacked",
    "unacked_index_key": f"{_own}.unacked_index",
    "unacked_mutex_key": f"{_own}.unacked_mutex",
}
