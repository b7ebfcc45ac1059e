"""``train_baseline <release-dir> [--seed N] [--json]``: train and score the task's baseline on an exported release.

Seed, margin and minimum dev size default to those the release's own check used (its manifest), so the
command reproduces the verdict and figures the release build stored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from exports.baselines import ReleaseError
from exports.baselines.release_files import read_manifest
from exports.metrics import ScoringError
from exports.release_check import DEFAULT_MARGIN, DEFAULT_SEED, release_check


class Command(BaseCommand):
    help = "Train the task's CPU baseline on a release folder's train split and score dev beside the trivial baseline."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("release_dir", type=Path)
        parser.add_argument("--seed", type=int, default=None,
                            help=f"seed of the baseline and the bootstrap (default: the release check's, else "
                                 f"{DEFAULT_SEED})")
        parser.add_argument("--margin", type=float, default=None,
                            help="points of the primary metric the baseline must gain over the trivial one "
                                 f"(default: the release check's, else {DEFAULT_MARGIN:g})")
        parser.add_argument("--min-dev", type=int, default=None,
                            help="dev records a verdict needs (default: the release check's, else the setting)")
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        release_dir: Path = options["release_dir"]
        if not release_dir.is_dir():
            raise CommandError(f"{release_dir}: no such directory")
        try:
            manifest = read_manifest(release_dir)
            # Leakage is the release builder's check; on a bare folder the manifest may carry its verdict.
            leakage_clean = bool((manifest.get("leakage") or {}).get("clean", True))
            stored = manifest.get("check") or {}

            def chosen(name: str, key: str, default: Any) -> Any:
                if options[name] is not None:
                    return options[name]
                return stored[key] if stored.get(key) is not None else default

            seed = chosen("seed", "seed", manifest.get("seed") if manifest.get("seed") is not None else DEFAULT_SEED)
            check = release_check(release_dir, manifest["task_type"], margin=chosen("margin", "margin", DEFAULT_MARGIN),
                                  leakage_clean=leakage_clean, seed=seed, min_dev=chosen("min_dev", "min_dev", None))
        except (ReleaseError, ScoringError) as exc:
            raise CommandError(str(exc)) from exc
        result = {"task": check["task"], "verdict": check["verdict"], "metrics": check["metrics"],
                  "trivial": check["trivial"], "interval": check["interval"], "seed": check["seed"],
                  "min_dev": check["min_dev"], "improvement": check["improvement"],
                  "passed": check["passed"], "seconds": check["seconds"], "primary": check["primary"],
                  "margin": check["margin"], "reasons": check["reasons"], "n_train": check["n_train"],
                  "n_dev": check["n_dev"], "sampled_from": check["sampled_from"],
                  "test_metrics": check["test_metrics"],
                  "environment": check["environment"]}
        if options["json"]:
            self.stdout.write(json.dumps(result, ensure_ascii=False))
            return
        interval = result["interval"]
        self.stdout.write(f"{result['task']}: {result['verdict'].upper()} ({result['n_train']} train, "
                          f"{result['n_dev']} dev, seed {result['seed']}, {result['seconds']:.1f} s); baseline − "
                          f"trivial {result['primary']}: {result['improvement']:.2f}, 95 % interval "
                          f"[{interval['low']:.2f}, {interval['high']:.2f}]")
        for name, value in result["metrics"].items():
            trivial = result["trivial"].get(name)
            self.stdout.write(f"  {name:<26} {_fmt(value)}   trivial {_fmt(trivial)}")
        for reason in result["reasons"]:
            self.stdout.write(f"  - {reason}")


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:6.2f}"
