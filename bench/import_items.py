"""Import throughput and memory: ``python -m bench.import_items [--size small|full]``.

Workloads (full size): a 100,000-record JSONL file and a 25,000-record one, each imported through the
Celery task path (``import_job_create`` → on commit, the ``run_import`` task → pipeline) with PII pseudonymization,
toxicity screening, exact and near-duplicate detection on. Each file runs in its own process, so its peak
RSS is its own; memory that does not grow with the file (100k ≈ 25k) shows the import streams. Files this
large are prepared in forked worker processes (datasets_build/processes.py): their CPU time and the largest
worker's peak RSS are reported beside the importer's, and neither may grow with the file either.
The task runs eagerly in the measuring process (a worker elsewhere would hide its memory). Each process
first imports a small warm-up file into a project of its own; each size runs ``REPEATS`` times (a fresh
process and database each) and the median run by wall time is reported, with every run's figures.

Runs on the configured database (PostgreSQL when ``DATABASE_URL`` is set, else a throw-away SQLite file)
in a test database created for the run. Generating the file is not timed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from demo.synthetic import write_headlines

SIZES = {"small": (2_500, 10_000), "full": (25_000, 100_000)}
#: Items per second through the whole pipeline on the 2-core CI machine (this module's floor) and issue 8's.
TARGET_ITEMS_PER_SECOND = 300
ISSUE_TARGET_ITEMS_PER_SECOND = 10_000
#: Peak RSS of the 4× larger file may exceed the smaller one's by at most this factor.
MEMORY_GROWTH_LIMIT = 1.25
REPEATS = 3
WARMUP_RECORDS = 1_000


def _setup() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()


def _peak_rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    return round(resource.getrusage(who).ru_maxrss / 1024, 1)


def _workers_cpu_seconds() -> float:
    """CPU time of the finished child processes: the import's workers (datasets_build/processes.py)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _backend_cpu_seconds() -> float | None:
    """CPU time of this connection's PostgreSQL server process so far (the server runs on this machine in
    the benchmark setup), or None when it cannot be read: the import's wall time includes its work."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def run_workload(n: int) -> dict[str, Any]:
    _setup()
    from django.db import connection

    from annotation.services import project_create
    from config.celery import app as celery_app
    from datasets_build.models import ImportJob
    from datasets_build.services import import_job_create

    celery_app.conf.task_always_eager = True
    work = Path(tempfile.mkdtemp(prefix="goldset-bench-"))
    from django.conf import settings

    settings.MEDIA_ROOT = work / "media"
    if connection.vendor == "sqlite":
        # A file, not the in-memory test database: the database must not count in the process's memory.
        connection.settings_dict.setdefault("TEST", {})["NAME"] = str(work / "bench.sqlite3")
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        warmup = work / "warmup.jsonl"
        write_headlines(warmup, WARMUP_RECORDS)
        with warmup.open("rb") as handle:
            import_job_create(project=project_create(name="warm-up", slug="warm-up", task_type="tc", created_by=None),
                              upload=handle, file_name=warmup.name, fmt="jsonl", user=None, source="bench",
                              license="CC0-1.0")
        warmup.unlink()
        corpus = work / f"corpus-{n}.jsonl"
        write_headlines(corpus, n)
        project = project_create(name="bench", slug="bench", task_type="tc", created_by=None)
        db_started, workers_started = _backend_cpu_seconds(), _workers_cpu_seconds()
        started, cpu_started = time.monotonic(), time.process_time()
        # Upload, job row, then the task (run_import, eager) as soon as the job is committed.
        with corpus.open("rb") as handle:
            job = import_job_create(project=project, upload=handle, file_name=corpus.name, fmt="jsonl", user=None,
                                    source="bench", license="CC0-1.0")
        seconds, cpu_seconds = time.monotonic() - started, time.process_time() - cpu_started
        db_ended = _backend_cpu_seconds()
        corpus.unlink()
        job = ImportJob.objects.get(pk=job.pk)
        if job.status != "succeeded":
            raise RuntimeError(f"import failed: {job.message}")
        return {
            "name": f"import_items_jsonl_{n}", "records": n, "items": job.items_written,
            "seconds": round(seconds, 2), "items_per_second": round(job.items_written / seconds),
            # Wall time depends on what else runs on the machine; CPU time of this process does not.
            "cpu_seconds": round(cpu_seconds, 2), "items_per_cpu_second": round(job.items_written / cpu_seconds),
            # The records are prepared in worker processes (a file this large): their CPU time and peak RSS.
            "workers_cpu_seconds": round(_workers_cpu_seconds() - workers_started, 2),
            "workers_peak_rss_mb": _peak_rss_mb(resource.RUSAGE_CHILDREN),
            "db_cpu_seconds": None if db_started is None or db_ended is None else round(db_ended - db_started, 2),
            "load_average": round(os.getloadavg()[0], 2),
            "peak_rss_mb": _peak_rss_mb(), "pii_findings": job.summary.get("pii"),
            "duplicates_skipped": job.summary.get("duplicates_skipped"),
            "near_duplicates": job.summary.get("near_duplicates"), "database": connection.vendor,
            "target_items_per_second": TARGET_ITEMS_PER_SECOND,
            "met": job.items_written / seconds >= TARGET_ITEMS_PER_SECOND,
            "issue_target_items_per_second": ISSUE_TARGET_ITEMS_PER_SECOND,
            "issue_met": job.items_written / seconds >= ISSUE_TARGET_ITEMS_PER_SECOND,
        }
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.import_items", description=__doc__)
    parser.add_argument("--size", choices=tuple(SIZES), default="small")
    parser.add_argument("--records", type=int, help=argparse.SUPPRESS)  # one workload, in this process
    args = parser.parse_args(argv)
    if args.records:
        print(json.dumps({"size": args.size, **run_workload(args.records)}, ensure_ascii=False), flush=True)
        return 0
    results = []
    for n in SIZES[args.size]:
        runs = []
        for _ in range(REPEATS):
            completed = subprocess.run([sys.executable, "-m", "bench.import_items", "--size", args.size,
                                        "--records", str(n)], capture_output=True, text=True,
                                       cwd=Path(__file__).resolve().parent.parent)
            if completed.returncode != 0:
                sys.stderr.write(completed.stderr)
                return 1
            runs.append(json.loads(completed.stdout.strip().splitlines()[-1]))
        result = {**sorted(runs, key=lambda run: run["seconds"])[len(runs) // 2],
                  "runs": [{key: run[key] for key in ("seconds", "cpu_seconds", "workers_cpu_seconds", "db_cpu_seconds",
                                                      "load_average")} for run in runs],
                  "peak_rss_mb": max(run["peak_rss_mb"] for run in runs),
                  "workers_peak_rss_mb": max(run["workers_peak_rss_mb"] for run in runs)}
        results.append(result)
        print(json.dumps(result, ensure_ascii=False), flush=True)
    small, large = results
    # The importer and each of its workers: neither may grow with the file.
    growth = large["peak_rss_mb"] / small["peak_rss_mb"]
    workers_growth = large["workers_peak_rss_mb"] / small["workers_peak_rss_mb"] if small["workers_peak_rss_mb"] else 0
    print(json.dumps({
        "name": "import_items_memory_scaling", "size": args.size,
        "records": [small["records"], large["records"]], "peak_rss_mb": [small["peak_rss_mb"], large["peak_rss_mb"]],
        "workers_peak_rss_mb": [small["workers_peak_rss_mb"], large["workers_peak_rss_mb"]],
        "seconds": round(small["seconds"] + large["seconds"], 2), "rss_growth": round(growth, 3),
        "workers_rss_growth": round(workers_growth, 3), "target_rss_growth": MEMORY_GROWTH_LIMIT,
        "met": max(growth, workers_growth) <= MEMORY_GROWTH_LIMIT,
    }), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
