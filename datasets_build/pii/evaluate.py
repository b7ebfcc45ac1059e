"""Precision and recall of the PII detector on a labelled JSONL sample (``{"text", "pii": [{type, value}]}``).

A prediction counts when its type and exact span match a labelled value; ``lenient`` also counts a
same-type prediction that overlaps the labelled span. ``python -m datasets_build.pii.evaluate FILE``
prints the figures reported in docs/pii.md.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from .detectors import PII_TYPES, detect


def _spans(text: str, labels: list[dict[str, str]]) -> set[tuple[str, int, int]]:
    spans = set()
    cursor: dict[str, int] = {}
    for label in labels:
        start = text.find(label["value"], cursor.get(label["value"], 0))
        cursor[label["value"]] = start + 1
        spans.add((label["type"], start, start + len(label["value"])))
    return spans


def evaluate(path: Path) -> dict[str, Any]:
    tp, fp, fn, lenient_tp = Counter(), Counter(), Counter(), Counter()
    records = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        records += 1
        record = json.loads(line)
        gold = _spans(record["text"], record["pii"])
        predicted = {(f.type, f.start, f.end) for f in detect(record["text"])}
        for span in predicted:
            if span in gold:
                tp[span[0]] += 1
            else:
                fp[span[0]] += 1
            if any(g[0] == span[0] and g[1] < span[2] and span[1] < g[2] for g in gold):
                lenient_tp[span[0]] += 1
        for span in gold - predicted:
            fn[span[0]] += 1

    def scores(t: int, p: int, n: int) -> dict[str, float | int]:
        precision = t / (t + p) if t + p else 1.0
        recall = t / (t + n) if t + n else 1.0
        return {"tp": t, "fp": p, "fn": n, "precision": round(precision, 3), "recall": round(recall, 3)}

    per_type = {t: scores(tp[t], fp[t], fn[t]) for t in PII_TYPES if tp[t] + fp[t] + fn[t]}
    total = scores(sum(tp.values()), sum(fp.values()), sum(fn.values()))
    lenient = sum(lenient_tp.values())
    predicted_total = sum(tp.values()) + sum(fp.values())
    total["lenient_precision"] = round(lenient / predicted_total, 3) if predicted_total else 1.0
    return {"records": records, "overall": total, "types": per_type}


if __name__ == "__main__":
    print(json.dumps(evaluate(Path(sys.argv[1])), ensure_ascii=False, indent=1))
