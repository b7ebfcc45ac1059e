"""Shared fixtures: users in every role, a project per task type, API clients, KLUE data, a live worker.

The suite runs on the embedded default (SQLite, eager Celery) and, in CI, on PostgreSQL with a live
Celery worker for the tests marked ``worker``; tests needing what is absent skip with the reason.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import Permission
from django.utils import translation
from rest_framework.test import APIClient

from annotation import services
from annotation.models import Project, Role, User
from config.celery import app as celery_app
from tests.builders import api_client

ROOT = Path(__file__).resolve().parent.parent
TEST_QUEUE = f"goldset-test-{os.getpid()}"


def is_postgres() -> bool:
    return os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://"))


def pytest_configure(config: pytest.Config) -> None:
    from django.conf import settings

    # Argon2 is deliberately slow; tests create hundreds of users.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # Several test runs may share one PostgreSQL server and one Redis: give each run its own test
    # database and its own Celery queue so they never see each other's data or jobs.
    if is_postgres():
        settings.DATABASES["default"].setdefault("TEST", {})["NAME"] = f"test_goldset_{os.getpid()}"
    celery_app.conf.task_default_queue = TEST_QUEUE


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Say in the log which database, broker and KLUE files this run uses (CI shows it ran on PostgreSQL)."""
    from django.conf import settings

    db = settings.DATABASES["default"]
    broker = os.environ.get("CELERY_BROKER_URL")
    return [
        f"goldset: database {db['ENGINE'].rsplit('.', 1)[-1]}"
        f" (test database {db.get('TEST', {}).get('NAME') or 'default'})",
        f"goldset: celery {'live worker via ' + broker + ' for worker tests' if broker else 'eager (no broker)'}",
        f"goldset: KLUE_DATA_DIR={os.environ.get('KLUE_DATA_DIR') or 'unset (klue tests skip)'}",
    ]


LIVE_WORKER_SEEN: list[str] = []


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Close the log with where the ``worker`` and ``postgres`` tests actually ran."""
    from django.db import connection

    def count(marker: str) -> int:
        return sum(1 for r in terminalreporter.stats.get("passed", []) if r.when == "call" and marker in r.keywords)

    terminalreporter.write_line(
        f"goldset: ran on {connection.vendor}; {count('worker')} worker tests passed through a live Celery worker"
        f" ({'; '.join(LIVE_WORKER_SEEN) or 'none started'}), {count('postgres')} postgres tests passed")


@pytest.fixture(autouse=True)
def _eager_celery_unless_worker(request: pytest.FixtureRequest) -> Iterator[None]:
    """Most tests run jobs in-process; ``worker`` tests send them to the live worker."""
    eager = request.node.get_closest_marker("worker") is None
    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = eager
    yield
    celery_app.conf.task_always_eager = previous


@pytest.fixture(autouse=True)
def _default_language() -> Iterator[None]:
    """Each test starts in the default language: a request through LocaleMiddleware leaves its language
    active in the thread, which would otherwise leak into the next test's code that runs outside a request."""
    translation.activate(settings.LANGUAGE_CODE)
    yield
    translation.activate(settings.LANGUAGE_CODE)


@pytest.fixture
def klue_dir() -> Path:
    value = os.environ.get("KLUE_DATA_DIR")
    if not value:
        pytest.skip("KLUE_DATA_DIR not set: the real KLUE files are not available")
    path = Path(value)
    if not path.is_dir():
        pytest.skip(f"KLUE_DATA_DIR={value} is not a directory")
    return path


@pytest.fixture
def make_user(db: None) -> Callable[..., User]:
    counter = {"n": 0}

    def make(username: str | None = None, *, can_create: bool = False, **extra: Any) -> User:
        counter["n"] += 1
        user = User.objects.create_user(username or f"user{counter['n']}", password="pw-goldset-123", **extra)
        if can_create:
            user.user_permissions.add(Permission.objects.get(codename="add_project"))
        return user

    return make


@pytest.fixture
def make_project(make_user: Callable[..., User]) -> Callable[..., Project]:
    def make(task_type: str = "tc", *, k: int = 3, slug: str | None = None, manager: User | None = None) -> Project:
        manager = manager or make_user(can_create=True)
        return services.project_create(name=f"{task_type} project", slug=slug or f"{task_type}-{manager.pk}",
                                       task_type=task_type, created_by=manager, annotators_per_item=k)

    return make


@pytest.fixture
def api() -> Callable[[User | None], APIClient]:
    """An API client authenticated with the user's token (or anonymous)."""
    return api_client


@pytest.fixture
def add_member() -> Callable[[Project, User, str], User]:
    def add(project: Project, user: User, role: str = Role.ANNOTATOR) -> User:
        services.membership_set(project=project, user=user, role=role)
        return user

    return add


@pytest.fixture
def annotator_in(make_user: Callable[..., User], add_member: Callable) -> Callable[..., User]:
    """A new annotator in the project who has acknowledged its current guideline."""

    def make(project: Project, username: str | None = None) -> User:
        user = add_member(project, make_user(username), Role.ANNOTATOR)
        services.guideline_acknowledge(user=user, project=project)
        return user

    return make


@pytest.fixture
def media(settings: Any, tmp_path: Path) -> Path:
    """Uploads go to a fresh folder of the test's own."""
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def release_root(settings: Any, tmp_path: Path) -> Path:
    """Releases are written to a fresh folder of the test's own."""
    settings.GOLDSET_RELEASE_ROOT = str(tmp_path / "releases")
    return tmp_path / "releases"


# -- a live Celery worker on the test database ----------------------------------------------------


@pytest.fixture(scope="session")
def live_worker(django_db_setup: None, django_db_blocker: Any) -> Iterator[subprocess.Popen]:
    """Start ``celery -A config worker`` against the test database and wait until it answers."""
    broker = os.environ.get("CELERY_BROKER_URL")
    if not broker:
        pytest.skip("CELERY_BROKER_URL not set: no broker for a live worker")
    if not is_postgres():
        pytest.skip("a live worker needs a shared database (set DATABASE_URL to PostgreSQL)")
    from django.db import connection

    settings_dict = connection.settings_dict
    env = dict(os.environ)
    env["DATABASE_URL"] = (
        f"postgres://{settings_dict['USER'] or ''}@{settings_dict['HOST'] or ''}:{settings_dict['PORT'] or 5432}"
        f"/{settings_dict['NAME']}"
    )
    if settings_dict.get("PASSWORD"):
        env["DATABASE_URL"] = env["DATABASE_URL"].replace("@", f":{settings_dict['PASSWORD']}@", 1)
    # Every import on the live worker prepares its records in processes forked from the worker's own
    # (in production only large files do): the tests then cover that path where it really runs.
    env["GOLDSET_IMPORT_PARALLEL_MIN_MB"] = "0"
    # Webhook tests' receivers listen on 127.0.0.1, which the worker's delivery check refuses otherwise.
    env["GOLDSET_WEBHOOKS_ALLOW_PRIVATE"] = "1"
    # The jobs the worker queues itself (webhook deliveries) go to the queue it consumes.
    env["CELERY_TASK_DEFAULT_QUEUE"] = TEST_QUEUE
    celery = shutil.which("celery", path=str(Path(sys.executable).parent)) or "celery"
    worker_name = f"test-worker-{os.getpid()}@{socket.gethostname()}"
    log = open(ROOT / "celery-test-worker.log", "w")  # noqa: SIM115 - closed at teardown
    worker = subprocess.Popen(
        [celery, "-A", "config", "worker", "--loglevel=INFO", "--concurrency=2", "--without-mingle",
         "--without-gossip", "-Q", TEST_QUEUE, "-n", worker_name],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if worker.poll() is not None:
            raise RuntimeError(f"celery worker exited with {worker.returncode}; see celery-test-worker.log")
        if celery_app.control.ping(destination=[worker_name], timeout=1.0):
            break
    else:
        worker.kill()
        raise RuntimeError("celery worker did not answer a ping within 60 s")
    print(f"\n[live worker] pid {worker.pid} on database {settings_dict['NAME']} via {broker}")
    LIVE_WORKER_SEEN.append(f"pid {worker.pid} on database {settings_dict['NAME']} via {broker}")
    yield worker
    worker.terminate()
    try:
        worker.wait(timeout=20)
    except subprocess.TimeoutExpired:
        worker.kill()
    log.close()
