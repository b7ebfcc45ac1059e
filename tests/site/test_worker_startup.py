"""A Celery worker process has the agreement report's modules loaded when it starts: every release computes an
agreement report, and loading them took time from the first release a worker built. The web app does not load
them."""

from __future__ import annotations

from tests.builders import fresh_python

REPORT = "annotation.agreement.report"


def test_a_worker_process_loads_the_agreement_report_when_it_starts():
    # What a worker does: the app's tasks are loaded, then each pool process, once forked, is told it started.
    code = ("import sys, django; django.setup(); from config.celery import app; "
            f"app.loader.import_default_modules(); before = {REPORT!r} in sys.modules; "
            "from celery.signals import worker_process_init; worker_process_init.send(sender=None); "
            f"print(before, {REPORT!r} in sys.modules)")
    assert fresh_python(code) == "False True"


def test_the_web_app_does_not_load_it():
    assert fresh_python(f"import sys, config.wsgi; print({REPORT!r} in sys.modules)") == "False"
