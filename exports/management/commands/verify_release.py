"""``verify_release <release-folder> [--json]``: re-hash a release folder against its SHA256SUMS."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from exports.integrity import verify_folder


class Command(BaseCommand):
    help = "Check every file of a release folder against SHA256SUMS (and that nothing was added)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("folder", help="the release folder (<project>-<version>)")
        parser.add_argument("--json", action="store_true", help="print the result as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        result = verify_folder(Path(options["folder"]))
        if options["json"]:
            self.stdout.write(json.dumps(result, ensure_ascii=False))
        if not result["ok"]:
            problems = result.get("error") or "; ".join(
                f"{key}: {', '.join(result[key])}" for key in ("missing", "changed", "unlisted") if result.get(key))
            raise CommandError(f"verification failed: {problems}")
        if not options["json"]:
            self.stdout.write(f"OK: {result['files']} files match SHA256SUMS")
