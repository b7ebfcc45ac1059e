"""Precision and recall of the configured screeners on a labelled JSONL sample
(``{"text", "label": "toxic"|"bias"|"clean", "category"}``), per item: an item counts as flagged for a kind
when any hit of that kind fires. ``python -m datasets_build.screening.evaluate FILE`` prints the figures
reported in docs/screening.md.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from . import screen_text

KINDS = ("toxic", "bias")


def evaluate(path: Path) -> dict[str, Any]:
    counts = {kind: {"tp": 0, "fp": 0, "fn": 0} for kind in (*KINDS, "any")}
    records = 0
    misses: list[dict[str, str]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        records += 1
        record = json.loads(line)
        predicted = {hit.kind for hit in screen_text(record["text"])}
        gold = {record["label"]} - {"clean"}
        for kind in KINDS:
            if kind in predicted and kind in gold:
                counts[kind]["tp"] += 1
            elif kind in predicted:
                counts[kind]["fp"] += 1
            elif kind in gold:
                counts[kind]["fn"] += 1
        flagged, harmful = bool(predicted), bool(gold)
        key = "tp" if flagged and harmful else "fp" if flagged else "fn" if harmful else None
        if key:
            counts["any"][key] += 1
        if flagged != harmful or (predicted and predicted != gold):
            misses.append({"text": record["text"], "label": record["label"],
                           "predicted": ",".join(sorted(predicted)) or "clean"})
    result: dict[str, Any] = {"records": records}
    for kind, c in counts.items():
        precision = c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else 1.0
        recall = c["tp"] / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] else 1.0
        result[kind] = {**c, "precision": round(precision, 3), "recall": round(recall, 3)}
    result["misses"] = misses
    return result


if __name__ == "__main__":
    import os

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    print(json.dumps(evaluate(Path(sys.argv[1])), ensure_ascii=False, indent=1))
