"""``scrub_pii <text-file> [--json]``: the pseudonymized text and its findings, to check text before import."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from datasets_build.pii import Scrubber, resolve_policy


class Command(BaseCommand):
    help = "Print a text file with its PII pseudonymized, and the findings (type and offsets, never the value)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="UTF-8 text file")
        parser.add_argument("--pii", choices=["pseudonymize", "detect", "off"], default=None,
                            help="one action for every type (default: identifiers pseudonymized, names detected)")
        parser.add_argument("--json", action="store_true", help="print {text, findings} as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["file"])
        if not path.is_file():
            raise CommandError(f"no such file: {path}")
        try:
            text = path.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError as error:
            raise CommandError(f"{path} is not UTF-8 ({error.reason} at byte {error.start})") from None
        result = Scrubber(resolve_policy({}, options["pii"])).scrub(text)
        findings = [{"type": f["type"], "start": f["start"], "end": f["end"], "action": f["action"]}
                    for f in result.findings]
        if options["json"]:
            self.stdout.write(json.dumps({"text": result.text, "findings": findings}, ensure_ascii=False))
            return
        self.stdout.write(result.text)
        for f in findings:
            self.stdout.write(f"{f['type']}\t{f['start']}\t{f['end']}\t{f['action']}")
