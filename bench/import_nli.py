"""A labelled corpus: ``python -m bench.import_nli [--size small|full] [--records N]``.

The KLUE-NLI dev file (3,000 records, each with its five annotators' labels) cycled with a counter to 100,000
records (full; 10,000 small) — a repeated record gets a counter in its guid, premise and hypothesis, so it is
a new item with its five labels, i.e. 500,000 imported annotations at full size. Imported as a KLUE file
through ``items_import`` (what ``manage.py import_items --format klue`` runs) with PII screening, toxicity
screening and exact and near-duplicate detection on, into a throw-away test database on the configured
database (SQLite, the embedded default, unless ``DATABASE_URL`` is set). Generating the file is not timed.
Needs the KLUE dev files (``KLUE_DATA_DIR``, default ``../shared/klue``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

SIZES = {"small": 10_000, "full": 100_000}
#: Issue 20: 100,000 records with their labels in under 30 s on the embedded default.
TARGET_SECONDS_FULL = 30.0
SOURCE = "klue-nli-v1.1_dev.json"


def klue_dir() -> Path:
    return Path(os.environ.get("KLUE_DATA_DIR") or Path(__file__).resolve().parent.parent.parent / "shared" / "klue")


def write_corpus(path: Path, n: int) -> None:
    records = json.loads((klue_dir() / SOURCE).read_text(encoding="utf-8"))
    rows = []
    for i in range(n):
        record = dict(records[i % len(records)])
        cycle = i // len(records)
        if cycle:
            record.update(guid=f"{record['guid']}-{cycle}", premise=f"{record['premise']} ({cycle})",
                          hypothesis=f"{record['hypothesis']} ({cycle})")
        rows.append(record)
    path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")


def run(n: int) -> dict[str, Any]:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.db import connection

    from annotation.services import project_create
    from datasets_build.services import items_import

    work = Path(tempfile.mkdtemp(prefix="goldset-bench-nli-"))
    if connection.vendor == "sqlite":
        # A file, as the embedded default keeps it, not the in-memory test database.
        connection.settings_dict.setdefault("TEST", {})["NAME"] = str(work / "bench.sqlite3")
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        corpus = work / f"nli-{n}.json"
        write_corpus(corpus, n)
        project = project_create(name="nli", slug="nli", task_type="nli", created_by=None)
        started, cpu_started = time.monotonic(), time.process_time()
        result = items_import(project, corpus, "klue")
        seconds, cpu_seconds = time.monotonic() - started, time.process_time() - cpu_started
        corpus.unlink()
        if not result.ok:
            raise RuntimeError(f"import failed: {result.errors[:3]}")
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        return {
            "name": f"import_nli_{n}", "records": n, "items": result.items, "annotations": result.annotations,
            "seconds": round(seconds, 2), "records_per_second": round(n / seconds),
            "cpu_seconds": round(cpu_seconds, 2),
            "workers_cpu_seconds": round(children.ru_utime + children.ru_stime, 2),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "near_duplicates": result.summary.get("near_duplicates"), "database": connection.vendor,
            "load_average": round(os.getloadavg()[0], 2),
            "target_seconds": TARGET_SECONDS_FULL * n / SIZES["full"],
            "met": seconds <= TARGET_SECONDS_FULL * n / SIZES["full"],
        }
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.import_nli", description=__doc__)
    parser.add_argument("--size", choices=tuple(SIZES), default="small")
    parser.add_argument("--records", type=int, help="records instead of the size's")
    args = parser.parse_args(argv)
    print(json.dumps({"size": args.size, **run(args.records or SIZES[args.size])}, ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
