"""The database restarted while annotators work (issue 9, faults).

The shared PostgreSQL server is not touched: a gunicorn server reaches it through a TCP proxy run by the test,
and "restarting the database" means the proxy drops every connection and refuses new ones for a few seconds.
Annotators run next → submit through the HTTP API meanwhile. Requests during the outage get a JSON 503 with
Retry-After (never a 500); the clients retry; afterwards the server reconnects by itself. In the end every
acknowledged submission is stored exactly once and no item has more than k annotations.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import requests
from django.db import InterfaceError, OperationalError, connection
from django.db.models import Count
from gunicorn.config import Config as GunicornConfig
from rest_framework.authtoken.models import Token

from annotation import selectors, services
from annotation.models import Annotation, Assignment, AssignmentStatus, QueueSlot
from tests.conftest import ROOT, is_postgres
from tests.faults.helpers import database_url, subprocess_env, wait_until

ITEMS = 40
K = 2
ANNOTATORS = 3
OUTAGE_SECONDS = 3.0
PAYLOAD = {"label": "사회"}


class Proxy:
    """A TCP proxy to PostgreSQL that can drop every connection and refuse new ones (a database restart)."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.sockets: set[socket.socket] = set()
        self.lock = threading.Lock()
        self.listener = self._listen(0)
        self.port: int = self.listener.getsockname()[1]
        self._start_accepting()

    def _listen(self, port: int) -> socket.socket:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(64)
        listener.settimeout(0.1)
        return listener

    def _start_accepting(self) -> None:
        self.accepting = True
        threading.Thread(target=self._accept, args=(self.listener,), daemon=True).start()

    def _accept(self, listener: socket.socket) -> None:
        while self.accepting:
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            client.settimeout(None)
            server = socket.create_connection(self.upstream)
            with self.lock:
                self.sockets |= {client, server}
            threading.Thread(target=self._pump, args=(client, server), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client), daemon=True).start()
        listener.close()

    def _pump(self, source: socket.socket, target: socket.socket) -> None:
        with suppress(OSError):
            while data := source.recv(65536):
                target.sendall(data)
        self._drop(source, target)

    def _drop(self, *sockets: socket.socket) -> None:
        for sock in sockets:
            with self.lock:
                self.sockets.discard(sock)
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def stop_database(self) -> None:
        """Refuse new connections (nothing listens on the port) and cut every open one."""
        self.accepting = False
        time.sleep(0.3)  # the accept loop notices within its 0.1 s timeout and closes the listener
        with self.lock:
            open_sockets = list(self.sockets)
        self._drop(*open_sockets)

    def start_database(self) -> None:
        self.listener = self._listen(self.port)
        self._start_accepting()


@pytest.fixture
def proxy() -> Iterator[Proxy]:
    if not is_postgres():
        pytest.skip("the server subprocess needs a shared database (set DATABASE_URL to PostgreSQL)")
    settings = connection.settings_dict
    proxy = Proxy((settings["HOST"] or "127.0.0.1", int(settings["PORT"] or 5432)))
    yield proxy
    proxy.stop_database()


@pytest.fixture
def server(proxy: Proxy) -> Iterator[str]:
    """gunicorn as README.md runs it (config/gunicorn.conf.py: threaded workers, kept database connections; two
    workers here) on the test database through the proxy."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    gunicorn = shutil.which("gunicorn", path=str(Path(sys.executable).parent)) or "gunicorn"
    log = (ROOT / "gunicorn-faults.log").open("wb")
    # Recent gunicorns open a control socket at one default path shared by every gunicorn on the machine.
    quiet = ["--no-control-socket"] if "control_socket_disable" in GunicornConfig().settings else []
    process = subprocess.Popen(
        [gunicorn, "-c", "config/gunicorn.conf.py", "config.wsgi:application", "--bind", f"127.0.0.1:{port}",
         "--timeout", "60", *quiet],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
        env=subprocess_env(DATABASE_URL=database_url(host="127.0.0.1", port=proxy.port), DEBUG="0",
                           DB_CONN_MAX_AGE="600", WEB_WORKERS="2"),
    )
    base = f"http://127.0.0.1:{port}"

    def up() -> bool:
        assert process.poll() is None, "gunicorn exited; see gunicorn-faults.log"
        try:
            return requests.get(f"{base}/api/task-types/", timeout=30).status_code == 401
        except requests.ConnectionError:  # not listening yet
            return False

    wait_until(up, 60, "gunicorn to answer", every=0.2)
    yield base
    process.terminate()
    process.wait(timeout=30)
    log.close()


class Annotator(threading.Thread):
    """next → submit until the queue is empty, retrying a step that got a 503 after a short pause."""

    def __init__(self, base: str, project_id: int, token: str) -> None:
        super().__init__(daemon=True)
        self.base = f"{base}/api/projects/{project_id}"
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Token {token}"
        self.acknowledged: list[tuple[int, int]] = []  # (item, annotation id) of each 200/201 submission
        self.unavailable: list[requests.Response] = []
        self.unexpected: list[str] = []

    def call(self, method: str, url: str, **kwargs: Any) -> requests.Response:
        while True:
            response = self.session.request(method, url, timeout=60, **kwargs)
            if response.status_code != 503:
                return response
            self.unavailable.append(response)
            time.sleep(0.2)  # the server says Retry-After: 5; a test need not wait that long

    def run(self) -> None:
        try:
            while True:
                offered = self.call("GET", f"{self.base}/next/")
                if offered.status_code == 204:
                    return
                if offered.status_code != 200:
                    self.unexpected.append(f"next: {offered.status_code} {offered.text[:300]}")
                    return
                item = offered.json()["item"]["id"]
                submitted = self.call("POST", f"{self.base}/annotations/", json={"item": item, "payload": PAYLOAD})
                if submitted.status_code not in (200, 201):
                    self.unexpected.append(f"submit: {submitted.status_code} {submitted.text[:300]}")
                    return
                self.acknowledged.append((item, submitted.json()["id"]))
        except Exception as error:  # reported by the test, with the rest
            self.unexpected.append(f"{type(error).__name__}: {error}")


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_database_restart_during_annotation_gives_503_then_recovers_without_loss_or_duplicates(
        proxy, server, make_project, annotator_in):
    project = make_project("tc", k=K)
    for i in range(ITEMS):
        services.item_create(project=project, payload={"title": f"재시작 시험 기사 {i}번"}, external_id=f"r-{i}")
    annotators = [annotator_in(project) for _ in range(ANNOTATORS)]
    clients = [Annotator(server, project.pk, Token.objects.create(user=user).key) for user in annotators]
    for client in clients:
        client.start()

    wait_until(lambda: sum(len(c.acknowledged) for c in clients) >= 15, 120, "annotators to get going")
    proxy.stop_database()
    time.sleep(OUTAGE_SECONDS)
    proxy.start_database()
    acknowledged_before_restart = sum(len(c.acknowledged) for c in clients)
    for client in clients:
        client.join(timeout=300)
        assert not client.is_alive(), "an annotator never finished"

    assert [problem for c in clients for problem in c.unexpected] == []
    refused = [response for c in clients for response in c.unavailable]
    assert refused, "no request reached the server during the outage"
    for response in refused:
        assert response.headers["Content-Type"] == "application/json"
        assert response.headers["Retry-After"] == "5"
        assert response.json()["code"] == "database_unavailable"
        assert "database is unavailable" in response.json()["detail"]
    assert acknowledged_before_restart < ITEMS * K  # the rest was submitted after the database came back

    # Every acknowledged submission is stored, once; nothing else is; no item has more than k.
    acknowledged = {(item, annotation) for c in clients for item, annotation in c.acknowledged}
    stored = Annotation.objects.filter(item__project=project)
    assert stored.count() == ITEMS * K == len(acknowledged)
    assert set(stored.values_list("item_id", "id")) == acknowledged
    for client, user in zip(clients, annotators, strict=True):
        items = [item for item, _ in client.acknowledged]
        assert set(stored.filter(annotator=user).values_list("item_id", flat=True)) == set(items)
    per_item = Counter(dict(stored.values("item").annotate(n=Count("id")).values_list("item", "n")))
    assert set(per_item.values()) == {K}
    held = Assignment.objects.filter(item__project=project, status__in=[AssignmentStatus.LEASED,
                                                                        AssignmentStatus.SUBMITTED])
    assert max(held.values("item").annotate(n=Count("id")).values_list("n", flat=True)) == K
    assert set(QueueSlot.objects.filter(project=project).values_list("live", flat=True)) == {K}


@pytest.mark.django_db
@pytest.mark.parametrize("error", [OperationalError("server closed the connection unexpectedly"),
                                   InterfaceError("connection already closed")])
def test_a_lost_database_is_a_503_for_the_api_and_for_pages(error, api, client, make_project, annotator_in):
    project = make_project("tc")
    annotator = annotator_in(project)
    client.force_login(annotator)
    with mock.patch.object(services, "assignment_next", side_effect=error), \
            mock.patch.object(selectors, "projects_with_roles", side_effect=error):
        from_api = api(annotator).get(f"/api/projects/{project.pk}/next/")
        page = client.get("/")
    assert from_api.status_code == 503 and from_api["Retry-After"] == "5"
    assert from_api.json()["code"] == "database_unavailable"
    assert page.status_code == 503 and page["Retry-After"] == "5" and page["Content-Type"].startswith("text/plain")
    assert "database is unavailable" in page.content.decode()
