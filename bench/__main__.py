"""`python -m bench [--size small|full] [--only NAME ...]`: run every benchmark, one JSON object per line.

Each benchmark is a module in this package runnable as ``python -m bench.<name>``; it generates its own
data, measures from the user-facing entry point and prints JSON objects with ``name``, ``size``,
``seconds``, throughput, ``peak_rss_mb``, the target and ``met``. Each runs in its own process so one
benchmark's memory never counts against another's.
"""

from __future__ import annotations

import argparse
import json
import pkgutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def benchmark_names() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules([str(HERE)]) if not m.name.startswith("_"))


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--size", choices=("small", "full"), default="small")
    parser.add_argument("--only", nargs="*", default=None, help="benchmark module names to run")
    args = parser.parse_args()
    failures = 0
    for name in args.only or benchmark_names():
        started = time.monotonic()
        completed = subprocess.run([sys.executable, "-m", f"bench.{name}", "--size", args.size],
                                   cwd=HERE.parent, capture_output=True, text=True)
        sys.stdout.write(completed.stdout)
        if completed.returncode != 0:
            failures += 1
            reason = (completed.stderr.strip().splitlines() or ["no output"])[-1]
            print(json.dumps({"name": name, "size": args.size, "error": reason,
                              "seconds": round(time.monotonic() - started, 2)}, ensure_ascii=False))
        sys.stdout.flush()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
