"""Release building at 100,000 and 1,000,000 items (KLUE JSON + JSONL + Parquet): time and peak memory.

``python -m bench.release [--size small|full] [--only smaller|larger]`` prints one JSON object per workload.
``full`` builds 100k and 1M items, ``small`` 10k and 100k; ``--only`` builds one of the two (no memory
ratio then: ``--size full --only smaller`` is the 100k speed target alone, without the 1M build's minutes).

Each size gets its own throw-away database — on the configured
PostgreSQL server when ``DATABASE_URL`` names one (a database created for the run and dropped after it),
else a SQLite file — filled by one process (a YNAT-style project: one headline and one corpus label per
item, bulk inserted) and built by another, so the build's peak RSS is its own.

Timed is ``release_build`` end to end (the command's entry point): one warm-up build, then the median of
three (the 1,000,000-item size is built once: it is there for memory, not speed). Targets: 100,000 items
in ≤ 10 s (``release_build_100000``), and peak memory at the larger size under twice that at the smaller
(the writers stream; only the split columns, 8 bytes a key, grow with the release).

``python -m bench.release --verdict`` measures issue 20's "the baseline verdict follows within 5 s" on the
100,000-item project: it builds the release the side-by-side harness downloads (JSONL only: no baseline
check can run on it, it ends ``unchecked``) and the same release with the KLUE files the check trains on
(it ends with a verdict), interleaved, one warm-up each and the median of three, both with gold refreshed as
the API's builds are. ``verdict_delay_seconds`` is how much later the checked release is there than the
JSONL-only one (target ≤ 5 s); ``baseline_check_seconds`` is the check's own share.

Elsewhere agreement and gold are not recomputed (the agreement report and ``gold_compute`` have their own
benchmark). The baseline check runs, as in every build with KLUE files; its share is reported as
``baseline_check_seconds``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIZES = {"small": (10_000, 100_000), "full": (100_000, 1_000_000)}
#: The issue's speed target, for the size it names.
TARGET_SECONDS = {100_000: 10.0}
#: Sizes built once, without a warm-up (minutes each on the shared machine; measured for memory).
BUILD_ONCE = 1_000_000
REPEATS = 3
FORMATS = "klue,jsonl,parquet"
LABELS = ["IT과학", "경제", "사회", "생활문화", "세계", "스포츠", "정치"]
BATCH = 5_000


def _django(database_url: str) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.db import connection

    if connection.vendor == "sqlite":
        # A scratch database: no fsync per transaction (the machine's disk is not what is measured).
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA synchronous=OFF")
            cursor.execute("PRAGMA journal_mode=MEMORY")


def _server_url() -> str | None:
    url = os.environ.get("DATABASE_URL", "")
    return url if url.startswith(("postgres://", "postgresql://")) else None


def _admin(server_url: str, statement: str) -> None:
    """CREATE / DROP DATABASE on the server (outside a transaction, as PostgreSQL requires), connected to the
    maintenance database ``postgres`` as Django's test-database creation is: the configured one need not exist."""
    import psycopg

    with psycopg.connect(server_url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        conn.execute(statement)


def fill(database_url: str, n: int) -> None:
    """Create the project and ``n`` labelled items (not measured)."""
    _django(database_url)
    from django.core.management import call_command

    from annotation import services
    from annotation.models import Annotation, Item, User, content_hash

    call_command("migrate", verbosity=0)
    project = services.project_create(name="bench", slug="bench", task_type="tc", created_by=None)
    corpus = User.objects.create(username="bench:corpus", is_imported=True)
    for start in range(0, n, BATCH):
        items = []
        for i in range(start, min(n, start + BATCH)):
            label = LABELS[i % 7]
            title = f"{i}번째 기사 제목: {label} 분야 소식 {i * 7919 % 100_003}"
            items.append(Item(project=project, external_id=f"ynat-v1_train_{i:07d}", payload={"title": title},
                              meta={"predefined_news_category": label, "url": f"https://example.com/{i}",
                                    "date": "2020.01.01. 오전 9:00"},
                              content_hash=content_hash(title), split="train"))
        Item.objects.bulk_create(items)
        Annotation.objects.bulk_create([
            Annotation(item=item, annotator=corpus, stage="label", imported=True,
                       payload={"label": item.meta["predefined_news_category"], "second": None, "third": None})
            for item in items])


def build(database_url: str, out: Path, n: int) -> dict:
    """Build the release (a warm-up, then the median of ``REPEATS``; once at ``BUILD_ONCE``) and report time,
    throughput and this process's peak RSS."""
    _django(database_url)
    from annotation.models import Project
    from exports.services import release_build

    project = Project.objects.get(slug="bench")
    runs = 1 if n >= BUILD_ONCE else REPEATS + 1
    timings, cpu = [], []
    for run in range(runs):
        started, cpu_started = time.perf_counter(), time.process_time()
        release = release_build(project, version=f"1.0.{run}", splits="0.8,0.1,0.1", seed=1, formats=FORMATS,
                                out=out / str(run), agreement=False, refresh_gold=False)
        timings.append(time.perf_counter() - started)
        cpu.append(time.process_time() - cpu_started)
        if release.status == "error":
            raise RuntimeError(release.error)
    timed = timings if runs == 1 else timings[1:]
    seconds = statistics.median(timed)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    size = sum(f.size for f in release.files.all())
    from django.db import connection

    result = {"items": n, "database": connection.vendor, "formats": FORMATS, "status": release.status,
              "splits": release.split_counts, "seconds": round(seconds, 2), "runs": [round(t, 2) for t in timed],
              "warm_up": runs > 1, "cpu_seconds": round(statistics.median(cpu if runs == 1 else cpu[1:]), 2),
              "baseline_check_seconds": release.baseline_check.get("seconds"),
              "items_per_second": round(n / seconds), "peak_rss_mb": round(peak_mb, 1),
              "output_mb": round(size / 2**20, 1), "leakage_clean": release.leakage.get("clean"),
              "load_average": round(os.getloadavg()[0], 2)}
    if n in TARGET_SECONDS:
        result.update(target_seconds=TARGET_SECONDS[n], met=seconds <= TARGET_SECONDS[n])
    else:
        result.update(target="none at this size (see release_memory_growth)", met=None)
    return result


#: The harness's release (JSONL only), and the same release with the KLUE files the baseline check reads.
VERDICT_FORMATS = ("jsonl", "klue,jsonl")
VERDICT_TARGET_SECONDS = 5.0


def verdict(database_url: str, out: Path, n: int) -> dict:
    """Build ``VERDICT_FORMATS`` alternately (a warm-up each, then ``REPEATS``) and report the delay of the
    checked release behind the unchecked one."""
    _django(database_url)
    from annotation.models import Project
    from exports.services import release_build

    project = Project.objects.get(slug="bench")
    timings: dict[str, list[float]] = {formats: [] for formats in VERDICT_FORMATS}
    cpu: dict[str, list[float]] = {formats: [] for formats in VERDICT_FORMATS}
    outcome: dict[str, dict] = {}
    for run in range(REPEATS + 1):
        for formats in VERDICT_FORMATS:
            started, cpu_started = time.perf_counter(), time.process_time()
            release = release_build(project, version=f"2.{VERDICT_FORMATS.index(formats)}.{run}", splits="0.8,0.1,0.1",
                                    seed=1, formats=formats, out=out / f"v{run}")
            if run:
                timings[formats].append(time.perf_counter() - started)
                cpu[formats].append(time.process_time() - cpu_started)
            outcome[formats] = {"status": release.status, "check_seconds": release.baseline_check.get("seconds"),
                                "verdict": release.baseline_check.get("verdict")}
    unchecked, checked = (statistics.median(timings[formats]) for formats in VERDICT_FORMATS)
    delay = checked - unchecked
    return {"items": n, "jsonl_seconds": round(unchecked, 2), "jsonl_runs": [round(t, 2) for t in timings["jsonl"]],
            "jsonl_status": outcome["jsonl"]["status"], "checked_seconds": round(checked, 2),
            "checked_runs": [round(t, 2) for t in timings["klue,jsonl"]],
            "checked_status": outcome["klue,jsonl"]["status"], "verdict": outcome["klue,jsonl"]["verdict"],
            "baseline_check_seconds": outcome["klue,jsonl"]["check_seconds"],
            "verdict_delay_seconds": round(delay, 2),
            # Under load the wall times are several times the work: the build process's CPU seconds (the
            # check runs in it; its PostgreSQL backend's share is the same in both builds) show the delay's cost.
            "jsonl_cpu_seconds": round(statistics.median(cpu["jsonl"]), 2),
            "checked_cpu_seconds": round(statistics.median(cpu["klue,jsonl"]), 2),
            "verdict_delay_cpu_seconds": round(
                statistics.median(cpu["klue,jsonl"]) - statistics.median(cpu["jsonl"]), 2),
            "target_seconds": VERDICT_TARGET_SECONDS,
            "met": delay <= VERDICT_TARGET_SECONDS, "load_average": round(os.getloadavg()[0], 2)}


def run(n: int, size: str, workload: str = "--build") -> dict:
    with tempfile.TemporaryDirectory(prefix="goldset-bench-release-") as tmp:
        server = _server_url()
        if server:
            name = f"goldset_bench_release_{os.getpid()}_{n}"
            _admin(server, f"CREATE DATABASE {name}")
            database_url = server.rsplit("/", 1)[0] + f"/{name}"
        else:
            database_url = f"sqlite:///{Path(tmp) / 'bench.sqlite3'}"
        try:
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "bench.release", "--fill", str(n), "--database", database_url],
                           cwd=ROOT, check=True)
            fill_seconds = time.perf_counter() - started
            completed = subprocess.run([sys.executable, "-m", "bench.release", workload, str(n), "--database",
                                        database_url, "--out", str(Path(tmp) / "out")],
                                       cwd=ROOT, check=True, capture_output=True, text=True)
        finally:
            if server:
                _admin(server, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        result = json.loads(completed.stdout.strip().splitlines()[-1])
        result["fill_seconds"] = round(fill_seconds, 1)
        result["size"] = size
        for path in (Path(tmp) / "out").rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
        return result


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.release", description=__doc__)
    parser.add_argument("--size", choices=tuple(SIZES), default="small")
    parser.add_argument("--only", choices=("smaller", "larger"), help="build one of the size's two workloads")
    parser.add_argument("--fill", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--build", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--verdict", nargs="?", type=int, const=-1,
                        help="the checked release's delay behind the JSONL-only one, at 100,000 items")
    parser.add_argument("--database", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.fill:
        fill(args.database, args.fill)
        return 0
    if args.build:
        print(json.dumps(build(args.database, args.out, args.build), ensure_ascii=False))
        return 0
    if args.verdict is not None and args.verdict > 0:
        print(json.dumps(verdict(args.database, args.out, args.verdict), ensure_ascii=False))
        return 0
    if args.verdict is not None:
        result = run(SIZES["full"][0], "full", "--verdict")
        print(json.dumps({"name": "release_verdict_delay", **result}, ensure_ascii=False))
        return 0
    smaller, larger = SIZES[args.size]
    results = []
    for n in {"smaller": (smaller,), "larger": (larger,)}.get(args.only or "", (smaller, larger)):
        result = run(n, args.size)
        result["name"] = f"release_build_{n}"
        results.append(result)
        print(json.dumps({"name": result.pop("name"), **result}, ensure_ascii=False), flush=True)
    if args.only:
        return 0
    ratio = results[1]["peak_rss_mb"] / results[0]["peak_rss_mb"]
    print(json.dumps({
        "name": "release_memory_growth", "size": args.size, "seconds": round(sum(r["seconds"] for r in results), 2),
        "items": [smaller, larger], "peak_rss_mb": [r["peak_rss_mb"] for r in results],
        "ratio": round(ratio, 3), "target": f"peak RSS at {larger} items < 2x that at {smaller}",
        "met": ratio < 2.0,
    }, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
