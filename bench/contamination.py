"""Contamination check speed and memory: ``python -m bench.contamination [--size small|full]``.

Checks the test split of a release against a reference file, as a check on demand does
(``exports.contamination``): the test items' MinHash signatures and band keys are computed once (``Checked``),
then the reference file is read through the import's reader (``datasets_build.references``: JSONL records
parsed and validated by the tc task type), a batch at a time, each batch hashed, MinHashed and looked up
(``exports.contamination.scan``). Small: 10,000 test items against 100,000 reference records; full: 100,000
against 1,000,000. One test item in a hundred is planted in the reference as an exact copy and one in a hundred
as a near copy; the benchmark checks that every planted copy is found and nothing else.

Not timed: writing the reference file. Not included: reading the test items' texts from the database (the
check reads them in chunks of 5,000 by id; not measured here). Memory is the peak
RSS of the process, its RSS before the scan, after a tenth of the reference and at the end: the scan holds one
batch, so the last two stay close however long the reference is.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SIZES = {"small": (10_000, 100_000), "full": (100_000, 1_000_000)}
TARGET_SECONDS = 300.0
#: Syllables the texts are drawn from: 40 characters of ten random syllables each, like a headline.
_SYLLABLES = [chr(c) for c in range(0xAC00, 0xAC00 + 2000, 7)]


def _setup() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def _texts(rng: np.random.Generator, n: int, tag: str) -> list[str]:
    codes = rng.integers(0, len(_SYLLABLES), size=(n, 40))
    return [f"{tag}{i} " + " ".join("".join(_SYLLABLES[c] for c in row[w:w + 4]) for w in range(0, 40, 4))
            for i, row in enumerate(codes)]


def _rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def run_workload(size: str) -> dict[str, Any]:
    _setup()
    from annotation.models import content_hash
    from annotation.task_types import get_task_type
    from datasets_build import dedup
    from datasets_build.references import ReadOutcome, reference_batches
    from datasets_build.splits import key_code
    from exports.contamination import Batch, Checked, scan

    n_test, n_reference = SIZES[size]
    rng = np.random.default_rng(7)
    test_texts = _texts(rng, n_test, "t")
    planted = n_test // 100
    exact_rows = list(range(0, planted))
    near_rows = list(range(planted, 2 * planted))
    work = Path(tempfile.mkdtemp(prefix="goldset-bench-contamination-"))
    path = work / "reference.jsonl"
    with path.open("w", encoding="utf-8") as out:
        planted_texts = [test_texts[r] for r in exact_rows] + [test_texts[r] + " 끝" for r in near_rows]
        written = 0
        for start in range(0, n_reference - len(planted_texts), 100_000):
            for text in _texts(rng, min(100_000, n_reference - len(planted_texts) - start), f"r{start}-"):
                out.write(json.dumps({"guid": f"ref-{written}", "title": text, "label": "정치"},
                                     ensure_ascii=False) + "\n")
                written += 1
        for text in planted_texts:
            out.write(json.dumps({"guid": f"ref-{written}", "title": text, "label": "정치"}, ensure_ascii=False)
                      + "\n")
            written += 1

    task = get_task_type("tc")
    started, cpu_started = time.monotonic(), time.process_time()
    ids = np.arange(1, n_test + 1, dtype=np.int64)
    signatures = dedup.signatures(test_texts)
    keys = np.array(dedup.batch_band_keys(signatures), dtype=np.int64).reshape(-1, dedup.BANDS).ravel()
    rows = np.repeat(np.arange(n_test), dedup.BANDS)
    order = np.argsort(keys, kind="stable")
    checked = Checked(ids=ids, splits=["test"] * n_test,
                      codes=np.array([key_code(content_hash(t)) for t in test_texts], dtype=np.int64),
                      signatures=signatures, has_text=np.ones(n_test, dtype=bool), band_keys=keys[order],
                      band_rows=rows[order])
    checked_seconds = time.monotonic() - started
    rss_before = _rss_mb()
    outcome = ReadOutcome()
    batches = (Batch(refs=b.records, guids=b.guids, codes=np.array([key_code(h) for h in b.hashes], dtype=np.int64),
                     texts=b.texts) for b in reference_batches(path, "jsonl", task, outcome))
    # The RSS once the scan has run a few batches, and at its end: flat memory is the two being close.
    rss = {"early": 0.0, "end": 0.0}

    def sample(records: int) -> None:
        if not rss["early"] and records >= n_reference // 10:
            rss["early"] = _rss_mb()
        rss["end"] = _rss_mb()

    matches = scan(checked, batches, dedup.threshold(), sample)
    seconds = time.monotonic() - started
    cpu = time.process_time() - cpu_started
    exact_found = set(np.flatnonzero(matches.exact >= 0).tolist())
    near_found = set(np.flatnonzero((matches.exact < 0) & (matches.near >= 0)).tolist())
    path.unlink()
    work.rmdir()
    correct = exact_found == set(exact_rows) and near_found == set(near_rows)
    return {
        "name": "contamination", "size": size, "test_items": n_test, "reference_records": outcome.read,
        "seconds": round(seconds, 1), "cpu_seconds": round(cpu, 1),
        "checked_items_seconds": round(checked_seconds, 1),
        "reference_records_per_second": round(outcome.read / max(seconds - checked_seconds, 1e-9)),
        "exact_found": len(exact_found), "near_found": len(near_found), "planted_each": planted,
        "all_found_and_nothing_else": correct,
        "rss_before_scan_mb": round(rss_before, 1), "rss_at_tenth_mb": round(rss["early"], 1),
        "rss_at_end_mb": round(rss["end"], 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "target_seconds": TARGET_SECONDS, "met": correct and seconds <= TARGET_SECONDS,
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.contamination", description=__doc__)
    parser.add_argument("--size", choices=tuple(SIZES), default="small")
    args = parser.parse_args()
    print(json.dumps(run_workload(args.size)))


if __name__ == "__main__":
    main()
