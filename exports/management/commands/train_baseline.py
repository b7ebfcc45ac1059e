"""``train_baseline <release-dir> [--json]``: train and score the task's baseline on an exported release."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from exports.baselines import ReleaseError
from exports.baselines.release_files import read_manifest
from exports.metrics import ScoringError
from exports.release_check import DEFAULT_MARGIN, release_check


class Command(BaseCommand):
    help = "Train the task's CPU baseline on a release folder's train split and score dev beside the trivial baseline."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("release_dir", type=Path)
        parser.add_argument("--seed", type=int, default=13)
        parser.add_argument("--margin", type=float, default=DEFAULT_MARGIN,
                            help="points of the primary metric the baseline must gain over the trivial one")
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        release_dir: Path = options["release_dir"]
        if not release_dir.is_dir():
            raise CommandError(f"{release_dir}: no such directory")
        try:
            manifest = read_manifest(release_dir)
            # Leakage is the release builder's check; on a bare folder the manifest may carry its verdict.
            leakage_clean = bool((manifest.get("leakage") or {}).get("clean", True))
            check = release_check(release_dir, manifest["task_type"], margin=options["margin"],
                                  leakage_clean=leakage_clean, seed=options["seed"])
        except (ReleaseError, ScoringError) as exc:
            raise CommandError(str(exc)) from exc
        result = {"task": check["task"], "metrics": check["metrics"], "trivial": check["trivial"],
                  "passed": check["passed"], "seconds": check["seconds"], "primary": check["primary"],
                  "margin": check["margin"], "reasons": check["reasons"], "n_train": check["n_train"],
                  "n_dev": check["n_dev"], "sampled_from": check["sampled_from"],
                  "test_metrics": check["test_metrics"],
                  "environment": check["environment"]}
        if options["json"]:
            self.stdout.write(json.dumps(result, ensure_ascii=False))
            return
        self.stdout.write(f"{result['task']}: {'PASSED' if result['passed'] else 'FAILED'} "
                          f"({result['n_train']} train, {result['n_dev']} dev, {result['seconds']:.1f} s)")
        for name, value in result["metrics"].items():
            trivial = result["trivial"].get(name)
            self.stdout.write(f"  {name:<26} {_fmt(value)}   trivial {_fmt(trivial)}")
        for reason in result["reasons"]:
            self.stdout.write(f"  - {reason}")


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:6.2f}"
