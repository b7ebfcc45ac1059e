"""PII scrubbing speed: ``python -m bench.pii [--size small|full]``.

Runs the ``scrub_pii`` management command (the user-facing entry point: read the file, pseudonymize with
the default policy, print the text and the findings as JSON) over synthetic Korean news-like text of
5 MB (small) or 50 MB (full) in which about one sentence in five carries a phone number, e-mail address,
resident registration number, account number or a person's name. Generating the file is not timed.
The scrubber is single-threaded, so MB/s of wall time is MB/s per core; CPU time is reported too
because the benchmark machine is shared. One warm-up run on a 1 MB file, then the median of 3 runs.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from demo.synthetic import write_sentences

ROOT = Path(__file__).resolve().parent.parent
SIZES_MB = {"small": 5, "full": 50}
TARGET_MB_PER_SECOND_PER_CORE = 10.0
RUNS = 3


class _Sink:
    """Discards the command's output (the JSON text would otherwise double the memory measured)."""

    def write(self, _text: str) -> int:
        return 0

    def flush(self) -> None:
        return None


def _setup() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def _scrub(path: Path) -> tuple[float, float]:
    from django.core.management import call_command

    started, cpu_started = time.monotonic(), time.process_time()
    call_command("scrub_pii", str(path), "--json", stdout=_Sink())
    return time.monotonic() - started, time.process_time() - cpu_started


def run_workload(size: str) -> dict[str, Any]:
    _setup()
    work = Path(tempfile.mkdtemp(prefix="goldset-bench-pii-"))
    warmup = work / "warmup.txt"
    write_sentences(warmup, 1, seed=3)
    _scrub(warmup)
    warmup.unlink()
    corpus = work / "corpus.txt"
    nbytes = write_sentences(corpus, SIZES_MB[size])
    runs = [_scrub(corpus) for _ in range(RUNS)]
    corpus.unlink()
    megabytes = nbytes / (1024 * 1024)
    seconds = statistics.median(r[0] for r in runs)
    cpu_seconds = statistics.median(r[1] for r in runs)
    rate = megabytes / seconds
    return {
        "name": "pii", "size": size, "megabytes": round(megabytes, 1), "runs": RUNS,
        "seconds": round(seconds, 2), "mb_per_second": round(rate, 2),
        "cpu_seconds": round(cpu_seconds, 2), "mb_per_cpu_second": round(megabytes / cpu_seconds, 2),
        "load_average": round(os.getloadavg()[0], 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "target": {"mb_per_second_per_core": TARGET_MB_PER_SECOND_PER_CORE},
        "met": rate >= TARGET_MB_PER_SECOND_PER_CORE,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.pii", description=__doc__)
    parser.add_argument("--size", choices=tuple(SIZES_MB), default="small")
    args = parser.parse_args(argv)
    print(json.dumps(run_workload(args.size), ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
