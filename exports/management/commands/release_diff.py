"""``release_diff PROJECT A B [--json] [--kind KIND]``: what changed from release A to release B of a project."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation import selectors as annotation_selectors
from annotation.models import Project
from exports import selectors
from exports.diff import KINDS, DiffError, release_diff
from exports.models import Release


class Command(BaseCommand):
    help = ("Compare two releases of a project: items added, dropped (and why), relabelled (and by what), moved "
            "between splits, with changed text; label counts per split and agreement.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="the project's slug or id")
        parser.add_argument("a", help="the earlier release's version (1.0.0)")
        parser.add_argument("b", help="the later release's version (1.1.0)")
        parser.add_argument("--kind", choices=KINDS, help="list only this kind of change")
        parser.add_argument("--json", action="store_true", help="print the whole comparison as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        key = options["project"]
        project = annotation_selectors.project_by_slug(key) or (
            annotation_selectors.project_by_id(int(key)) if key.isdigit() else None)
        if project is None:
            raise CommandError(f"no project {key!r} (give its slug or id)")
        a, b = (self._release(project, options[name]) for name in ("a", "b"))
        try:
            result = release_diff(a, b, kind=options["kind"])
        except DiffError as error:
            raise CommandError(error.message) from None
        if options["json"]:
            self.stdout.write(json.dumps(result, ensure_ascii=False, indent=2))
            return
        self._print(result)

    def _release(self, project: Project, version: str) -> Release:
        release = selectors.release_by_version(project, version)
        if release is None:
            known = ", ".join(r.version for r in reversed(selectors.releases_of(project))) or "none"
            raise CommandError(f"{project.slug} has no release {version} (its releases: {known})")
        return release

    def _print(self, result: dict[str, Any]) -> None:
        write = self.stdout.write
        write(f"{result['a']['version']} → {result['b']['version']}: " + ", ".join(
            f"{n} {kind}" for kind, n in result["counts"].items()))
        for kind, rows in result["changes"].items():
            for row in rows:
                write(f"{kind}\t{row['item']}\t{row['external_id'] or '-'}\t{_detail(kind, row)}")
        agreement = result["agreement"]
        if agreement["change"] is not None:
            write(f"agreement {agreement['name']}: {agreement['a']:.4f} → {agreement['b']:.4f} "
                  f"({agreement['change']:+.4f})")
        for split, labels in result["label_distribution"].items():
            moved = [f"{label} {n['change']:+d}" for label, n in labels.items() if n["change"]]
            if moved:
                write(f"labels {split}: {', '.join(moved)}")


def _detail(kind: str, row: dict[str, Any]) -> str:
    if kind == "added":
        return f"{row['split']} (before: {row['before']})"
    if kind == "dropped":
        return f"was {row['split']}: {row['reason']}"
    if kind == "relabelled":
        why = row["why"]
        by = f" by {why['by']}" if why.get("by") else ""
        reason = f": {why['reason']}" if why.get("reason") else ""
        return f"{row['old']} → {row['new']} ({why['how']}{by}{reason})"
    if kind == "moved":
        return f"{row['from']} → {row['to']}"
    return row["split"]
