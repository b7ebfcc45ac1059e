"""A web worker (gunicorn imports config.wsgi in each worker as it starts) has its URLconf and views loaded
before it serves: the first request a worker serves must not wait for, or take the CPU of, those imports."""

from __future__ import annotations

from tests.builders import fresh_python


def test_a_web_worker_imports_its_views_when_it_starts_not_in_its_first_request():
    code = ("import sys, config.wsgi; "
            "print(all(m in sys.modules for m in ('config.urls', 'datasets_build.api', 'annotation.api.views')))")
    assert fresh_python(code) == "True"


def test_a_web_worker_keeps_what_it_loaded_at_start_out_of_the_collectors_full_passes():
    # gunicorn runs the configuration's hook in each worker once it loaded config.wsgi: a full collection then
    # walks only what requests left behind, not the ~130,000 objects of the app.
    code = ("import gc, runpy, config.wsgi; before = gc.get_freeze_count(); "
            "runpy.run_path('config/gunicorn.conf.py')['post_worker_init'](None); print(before, gc.get_freeze_count())")
    before, after = map(int, fresh_python(code).split())
    assert before == 0 and after > 50_000


def test_a_web_worker_loads_the_brokers_client_when_it_starts_without_connecting(monkeypatch):
    """The first import (or release) request a worker serves queues a job: with a broker, the client it queues it
    with is loaded as the worker starts. Nothing listens at the broker's address: starting does not connect."""
    monkeypatch.setenv("CELERY_BROKER_URL", "redis://127.0.0.1:9/0")
    monkeypatch.delenv("CELERY_RESULT_BACKEND", raising=False)
    code = ("import sys, config.wsgi; "
            "print(all(m in sys.modules for m in ('kombu.transport.redis', 'celery.backends.redis')))")
    assert fresh_python(code) == "True"
