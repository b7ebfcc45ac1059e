"""Annotation throughput under concurrency: ``python -m bench.annotate [--size small|full]``.

gunicorn serves the API (as in production: DEBUG off, persistent database connections); 16 client
threads, each an annotator with its own token, loop ``GET /api/projects/{id}/next/`` → ``POST
/api/projects/{id}/annotations/`` on a topic-classification project with k = 3 until the queue is empty
or the time budget ends. Afterwards the database is checked: no item has more than k annotations (or
live assignments) per stage, and no (item, annotator, stage) appears twice.

Runs on the configured database (PostgreSQL when ``DATABASE_URL`` is set: ``--workers`` gunicorn gthread
workers × ``--threads`` threads; else a throw-away SQLite file served by one single-threaded worker, because
SQLite has a single writer) in a database created for the run. Creating the project and its items is not
timed. The first ``WARMUP_SUBMISSIONS`` submissions of every client are a warm-up and not counted; the
timed part is split into three equal windows and the median window's rate is reported next to the overall
rate. ``cpu_seconds`` splits the CPU the run used between the client threads (this process), gunicorn (its
reaped workers) and the PostgreSQL backends serving them (read from ``/proc`` before they close), since the
clients share the machine with the server.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
SIZES = {"small": 2_000, "full": 20_000}
#: Wall-clock budget of the timed part; the run also ends when every client's queue is empty.
BUDGET_SECONDS = {"small": 45.0, "full": 150.0}
CLIENTS = 16
K = 3
WARMUP_SUBMISSIONS = 3
TARGET_SUBMISSIONS_PER_SECOND = 150
TARGET_P99_MS = 200.0
LABELS = ["정치", "경제", "사회", "생활문화", "세계", "IT과학", "스포츠"]
WORDS = ["정부", "국회", "시장", "금리", "주가", "선수", "경기", "날씨", "여행", "반도체", "인공지능", "대통령",
         "환율", "수출", "축구", "야구", "드라마", "영화", "교육", "병원"]


def _setup() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def _peak_rss_mb() -> float:
    """This process's peak plus the largest reaped child's (gunicorn's workers, once they have exited)."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round((own + children) / 1024, 1)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _database_url(settings_dict: dict[str, Any]) -> str:
    if settings_dict["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{settings_dict['NAME']}"
    auth = settings_dict["USER"] or ""
    if settings_dict.get("PASSWORD"):
        auth += f":{settings_dict['PASSWORD']}"
    host = f"{settings_dict['HOST'] or '127.0.0.1'}:{settings_dict['PORT'] or 5432}"
    return f"postgres://{auth}@{host}/{settings_dict['NAME']}"


def create_project(n: int) -> tuple[int, list[str]]:
    """A tc project with n items and k = 3, and 16 annotators who acknowledged its guideline; their tokens."""
    from rest_framework.authtoken.models import Token

    from annotation import services
    from annotation.models import Membership, Role, User

    manager = User.objects.create(username="bench-manager")
    project = services.project_create(name="bench annotate", slug="bench-annotate", task_type="tc",
                                      created_by=manager, annotators_per_item=K)
    for start in range(0, n, 2000):
        services.items_create(project=project, items=[
            {"payload": {"title": " ".join(WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(6)) + f" {i}"},
             "external_id": f"bench-{i:06d}"} for i in range(start, min(n, start + 2000))])
    services.queue_slots_ensure(project, "label")  # what the first take would do, outside the timed part
    annotators = User.objects.bulk_create([User(username=f"bench-annotator-{i:02d}", password="!")
                                           for i in range(CLIENTS)])
    Membership.objects.bulk_create([Membership(project=project, user=u, role=Role.ANNOTATOR) for u in annotators])
    tokens = []
    for user in annotators:
        services.guideline_acknowledge(user=user, project=project)
        tokens.append(Token.objects.create(user=user).key)
    return project.pk, tokens


@dataclass
class ClientStats:
    submissions: list[float] = field(default_factory=list)  # finish times of timed submissions
    latencies_ms: list[float] = field(default_factory=list)  # every timed request (next and submit)
    errors: list[str] = field(default_factory=list)
    warmed_up: threading.Event = field(default_factory=threading.Event)


def client_loop(port: int, project_id: int, token: str, index: int, start: threading.Event, stop_at: list[float],
                stats: ClientStats) -> None:
    """One annotator: next → submit until 204 or the deadline; the first submissions are a warm-up.

    One persistent HTTP/1.1 connection per client, bodies encoded with orjson: the clients run on the same
    two cores as the server, so every CPU cycle they spend is taken from it. Each latency is measured from
    sending the request to having read the whole response.
    """
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json", "Accept": "application/json"}

    def request(method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, bytes, float]:
        started = time.perf_counter()
        conn.request(method, path, body=orjson.dumps(body) if body is not None else None, headers=headers)
        response = conn.getresponse()
        data = response.read()
        return response.status, data, (time.perf_counter() - started) * 1000

    done = 0
    try:
        while True:
            if done == WARMUP_SUBMISSIONS:
                stats.warmed_up.set()
                start.wait()
                conn.close()  # the server may have dropped the idle keep-alive connection while we waited
            timed = done >= WARMUP_SUBMISSIONS
            if timed and time.monotonic() >= stop_at[0]:
                break
            status, data, ms = request("GET", f"/api/projects/{project_id}/next/")
            if timed:
                stats.latencies_ms.append(ms)
            if status == 204:
                break
            if status != 200:
                stats.errors.append(f"next {status}: {data[:200]!r}")
                break
            item = orjson.loads(data)["item"]
            label = LABELS[(item["id"] + index) % len(LABELS)]
            status, data, ms = request("POST", f"/api/projects/{project_id}/annotations/",
                                       {"item": item["id"], "payload": {"label": label}, "seconds_spent": 3.0})
            if status not in (200, 201):
                stats.errors.append(f"submit {status}: {data[:200]!r}")
                break
            if timed:
                stats.latencies_ms.append(ms)
                stats.submissions.append(time.monotonic())
            done += 1
    except (OSError, http.client.HTTPException) as error:
        stats.errors.append(f"{type(error).__name__}: {error}")
    finally:
        stats.warmed_up.set()
        conn.close()


def start_gunicorn(port: int, database_url: str, vendor: str, workers: int, threads: int) -> subprocess.Popen:
    if vendor == "sqlite":
        workers, threads = 1, 1
    # Connections outlive the run, so a thread never reconnects mid-run and the PostgreSQL backends whose
    # CPU is read at the end are the ones that served it.
    env = {**os.environ, "DATABASE_URL": database_url, "DEBUG": "0", "DB_CONN_MAX_AGE": "600",
           "DJANGO_SETTINGS_MODULE": "config.settings"}
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", str(workers),
         # gthread keeps each client's connection alive between requests (the sync worker closes it).
         "--threads", str(threads), "--worker-class", "gthread", "--log-level", "warning",
         "--timeout", "120", "--keep-alive", "30"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {server.returncode}: {server.stderr.read().decode()[-500:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return server
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise RuntimeError("gunicorn did not listen within 60 s")


def _proc_cpu(pids: list[int]) -> dict[int, float]:
    """CPU seconds (user + system) each live process has used so far, from ``/proc``."""
    seconds = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # already gone
            continue
        seconds[pid] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return seconds


def _gunicorn_pids(master: int) -> list[int]:
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    return [master, *map(int, children)]


def _postgres_pids(database: str) -> list[int]:
    """The PostgreSQL backends connected to the run's database (the server runs on this machine)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()", [database])
        return [row[0] for row in cursor.fetchall()]


def _cpu_used(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU between two samples; a process that started in between counts from zero."""
    return sum(seconds - before.get(pid, 0.0) for pid, seconds in after.items())


def verify(project_id: int) -> dict[str, int]:
    """Invariants after the run: at most k annotations and live assignments per item and stage, no duplicates."""
    from django.db.models import Count

    from annotation.models import Annotation, Assignment, AssignmentStatus

    annotations = Annotation.objects.filter(item__project_id=project_id)
    over_k = (annotations.values("item_id", "stage").annotate(n=Count("id")).filter(n__gt=K).count())
    duplicates = (annotations.values("item_id", "annotator_id", "stage").annotate(n=Count("id"))
                  .filter(n__gt=1).count())
    live_over_k = (Assignment.objects.filter(item__project_id=project_id, status__in=[
        AssignmentStatus.SUBMITTED, AssignmentStatus.LEASED]).values("item_id", "stage").annotate(n=Count("id"))
        .filter(n__gt=K).count())
    return {"annotations": annotations.count(), "items_over_k": over_k, "duplicate_item_annotator": duplicates,
            "items_over_k_live_assignments": live_over_k}


def run_workload(size: str, workers: int = 3, threads: int = 6) -> dict[str, Any]:
    _setup()
    from django.db import connection

    n = SIZES[size]
    work = Path(tempfile.mkdtemp(prefix="goldset-bench-annotate-"))
    test_settings = connection.settings_dict.setdefault("TEST", {})
    test_settings["NAME"] = (str(work / "bench.sqlite3") if connection.vendor == "sqlite"
                             else f"test_goldset_bench_annotate_{os.getpid()}")
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    server: subprocess.Popen | None = None
    try:
        project_id, tokens = create_project(n)
        vendor = connection.vendor
        connection.close()  # SQLite: leave the single writer lock to the server
        port = _free_port()
        server = start_gunicorn(port, _database_url(connection.settings_dict), vendor, workers, threads)
        start = threading.Event()
        stop_at = [float("inf")]
        stats = [ClientStats() for _ in tokens]
        clients = [threading.Thread(target=client_loop, args=(port, project_id, token, i, start, stop_at, stats[i]))
                   for i, token in enumerate(tokens)]
        for thread in clients:
            thread.start()
        for s in stats:
            s.warmed_up.wait()
        database = connection.settings_dict["NAME"]

        def postgres_pids() -> list[int]:
            return _postgres_pids(database) if vendor == "postgresql" else []

        cpu_before = {"client": time.process_time(), "gunicorn": _proc_cpu(_gunicorn_pids(server.pid)),
                      "postgres": _proc_cpu(postgres_pids())}
        started = time.monotonic()
        stop_at[0] = started + BUDGET_SECONDS[size]
        start.set()
        for thread in clients:
            thread.join()
        seconds = time.monotonic() - started
        cpu = {"client": time.process_time() - cpu_before["client"],
               "gunicorn": _cpu_used(cpu_before["gunicorn"], _proc_cpu(_gunicorn_pids(server.pid))),
               "postgres": _cpu_used(cpu_before["postgres"], _proc_cpu(postgres_pids()))}
        load_average = os.getloadavg()[0]
        server.terminate()
        server.wait(timeout=30)
        server = None
        finishes = sorted(t for s in stats for t in s.submissions)
        latencies = sorted(ms for s in stats for ms in s.latencies_ms)
        errors = [e for s in stats for e in s.errors]
        third = seconds / 3
        windows = [sum(1 for t in finishes if started + i * third <= t < started + (i + 1) * third) / third
                   for i in range(3)]
        rate = len(finishes) / seconds
        p50 = statistics.quantiles(latencies, n=100)[49] if len(latencies) > 1 else 0.0
        p99 = statistics.quantiles(latencies, n=100)[98] if len(latencies) > 1 else 0.0
        checks = verify(project_id)
        correct = not errors and not any(v for k_, v in checks.items() if k_ != "annotations")
        return {
            "name": "annotate", "size": size, "items": n, "k": K, "clients": CLIENTS, "database": vendor,
            "seconds": round(seconds, 2), "submissions": len(finishes),
            "submissions_per_second": round(rate, 1),
            "submissions_per_second_median_window": round(statistics.median(windows), 1),
            "latency_p50_ms": round(p50, 1), "latency_p99_ms": round(p99, 1),
            "queue_emptied": seconds < BUDGET_SECONDS[size], "errors": errors[:5], **checks,
            "server": {"workers": workers, "threads": threads} if vendor != "sqlite" else {"workers": 1, "threads": 1},
            "cpu_seconds": {who: round(used, 1) for who, used in cpu.items()},
            "cpu_ms_per_submission": {who: round(1000 * used / max(len(finishes), 1), 2) for who, used in cpu.items()},
            "load_average": round(load_average, 2), "peak_rss_mb": _peak_rss_mb(),
            "target": {"submissions_per_second": TARGET_SUBMISSIONS_PER_SECOND, "latency_p99_ms": TARGET_P99_MS,
                       "items_over_k": 0, "duplicate_item_annotator": 0},
            "met": correct and rate >= TARGET_SUBMISSIONS_PER_SECOND and p99 <= TARGET_P99_MS,
        }
    finally:
        if server is not None:
            server.kill()
            server.wait()
        connection.creation.destroy_test_db(old_name, verbosity=0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.annotate", description=__doc__)
    parser.add_argument("--size", choices=tuple(SIZES), default="small")
    parser.add_argument("--workers", type=int, default=3, help="gunicorn worker processes (PostgreSQL only)")
    parser.add_argument("--threads", type=int, default=6, help="threads per gunicorn worker (PostgreSQL only)")
    args = parser.parse_args(argv)
    print(json.dumps(run_workload(args.size, args.workers, args.threads), ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
