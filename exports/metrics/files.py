"""Scoring KLUE-format files: gold and prediction files read with the shared KLUE reader."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import get_task_metrics, score
from ._common import ScoringError


def read_records(path: Path, task_slug: str, warnings: list[str] | None = None) -> list[dict[str, Any]]:
    """All records of a KLUE file (MRC flattened to one record per question).

    With ``warnings`` the file is a prediction file: its tag (NER) and head/label (DP) columns are the
    prediction and its ``##`` headers were copied from gold, so a header that disagrees with the tags is
    appended to ``warnings`` (``"<file>: line N, tags: …"``) instead of refusing the file.
    """
    from datasets_build.klue_formats import FormatError, iter_klue_records

    def warn(problem: FormatError) -> None:
        assert warnings is not None
        warnings.append(f"{path}: {problem}")

    try:
        return [record for _, record in iter_klue_records(Path(path), task_slug,
                                                          warn=None if warnings is None else warn)]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ScoringError(f"{path}: cannot read as KLUE {task_slug}: {exc}") from exc


def read_mrc_predictions(path: Path) -> dict[str, str]:
    """SQuAD-style predictions: one JSON object mapping question guid to answer text."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ScoringError(f"{path}: cannot read MRC predictions: {exc}") from exc
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise ScoringError(f"{path}: MRC predictions must be a JSON object {{guid: answer_text}}")
    return data


def score_files(task_slug: str, gold_path: Path, pred_path: Path) -> dict[str, Any]:
    """``{"task", "n", "metrics", "warnings"}`` for a gold file and a prediction file of the same task."""
    metrics = get_task_metrics(task_slug)
    gold = read_records(gold_path, task_slug)
    warnings: list[str] = []
    pred = read_mrc_predictions(pred_path) if metrics.answer_map else read_records(pred_path, task_slug, warnings)
    return {"task": task_slug, "n": len(gold), "metrics": score(task_slug, gold, pred), "warnings": warnings}
