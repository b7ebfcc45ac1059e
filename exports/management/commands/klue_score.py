"""``klue_score <task> <gold-file> <pred-file> [--json]``: the official KLUE scorer's numbers for a file pair."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.task_types import slugs
from exports.metrics import ScoringError
from exports.metrics.files import score_files

#: Header warnings printed one by one; a prediction file from a real model can have thousands.
MAX_WARNINGS_SHOWN = 5


class Command(BaseCommand):
    help = (
        "Score a KLUE-format prediction file against a gold file with the official KLUE-baseline metrics "
        "(0-100) plus corrected variants. MRC predictions are a JSON object {guid: answer_text}; in NER and DP "
        "prediction files the tag and head/label columns are scored, the ## headers may be copied from gold."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("task", choices=sorted(slugs()), help="Goldset task slug")
        parser.add_argument("gold_file", type=Path)
        parser.add_argument("pred_file", type=Path)
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        for key in ("gold_file", "pred_file"):
            if not options[key].is_file():
                raise CommandError(f"{options[key]}: no such file")
        try:
            result = score_files(options["task"], options["gold_file"], options["pred_file"])
        except ScoringError as exc:
            raise CommandError(str(exc)) from exc
        # NaN (e.g. Pearson r of a constant prediction) is not JSON; it is reported as null.
        result["metrics"] = {k: None if math.isnan(v) else v for k, v in result["metrics"].items()}
        warnings = result["warnings"]
        for warning in warnings[:MAX_WARNINGS_SHOWN]:
            self.stderr.write(f"warning: {warning}")
        if len(warnings) > MAX_WARNINGS_SHOWN:
            self.stderr.write(f"warning: … and {len(warnings) - MAX_WARNINGS_SHOWN} more sentence header(s) that "
                              f"disagree with their predicted tags")
        if options["json"]:
            self.stdout.write(json.dumps(result, ensure_ascii=False))
            return
        self.stdout.write(f"{result['task']}: {result['n']} records")
        for name, value in result["metrics"].items():
            self.stdout.write(f"  {name:<26} {'n/a' if value is None else f'{value:.2f}'}")
