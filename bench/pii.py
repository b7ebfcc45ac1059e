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

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SIZES_MB = {"small": 5, "full": 50}
TARGET_MB_PER_SECOND_PER_CORE = 10.0
RUNS = 3
WORDS = [
    "정부는", "오늘", "국회에서", "경제", "정책을", "발표했다", "시장", "금리가", "올랐다", "선수들이",
    "경기에서", "승리했다", "날씨가", "맑겠다", "반도체", "수출이", "늘었다", "인공지능", "기술을",
    "개발한", "대학", "연구진은", "지역", "주민들은", "병원", "의료진이", "학생들", "교육", "환경",
    "문제를", "논의했다", "서울", "부산",
]
SURNAMES = ["김", "이", "박", "최", "정", "강", "조", "윤", "장", "임"]
GIVEN = ["민수", "지훈", "서연", "하은", "도윤", "수빈", "예준", "지우", "현우", "유진"]


class _Sink:
    """Discards the command's output (the JSON text would otherwise double the memory measured)."""

    def write(self, _text: str) -> int:
        return 0

    def flush(self) -> None:
        return None


def write_corpus(path: Path, megabytes: float, seed: int = 11) -> int:
    """Sentences of random words; every fifth carries one identifier. Returns the byte size."""
    rng = np.random.default_rng(seed)
    target = int(megabytes * 1024 * 1024)
    written = 0
    with path.open("w", encoding="utf-8") as out:
        while written < target:
            lines = []
            for i in range(2000):
                sentence = " ".join(rng.choice(WORDS, size=int(rng.integers(6, 14))))
                kind = i % 25
                if kind == 0:
                    sentence += f" 문의는 010-{rng.integers(1000, 9999)}-{rng.integers(1000, 9999)}로 하면 된다"
                elif kind == 5:
                    sentence += f" 제보는 reporter{rng.integers(1, 999)}@example.co.kr 로 보내 달라"
                elif kind == 10:
                    sentence += f" 주민번호 {rng.integers(700101, 991231)}-{rng.integers(1000000, 2999999)} 가 유출됐다"
                elif kind == 15:
                    sentence += f" 계좌 110-{rng.integers(100, 999)}-{rng.integers(100000, 999999)} 로 입금했다"
                elif kind == 20:
                    sentence += f" {rng.choice(SURNAMES)}{rng.choice(GIVEN)} 씨는 이렇게 말했다"
                lines.append(sentence + ".")
            chunk = "\n".join(lines) + "\n"
            out.write(chunk)
            written += len(chunk.encode("utf-8"))
    return written


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
    write_corpus(warmup, 1, seed=3)
    _scrub(warmup)
    warmup.unlink()
    corpus = work / "corpus.txt"
    nbytes = write_corpus(corpus, SIZES_MB[size])
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
