"""``python manage.py agreement <project-slug> [--json]``: the project's agreement report."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation import selectors
from annotation.agreement import services
from annotation.agreement.gamma import MAX_ITEMS
from annotation.agreement.measures import measure_for
from annotation.agreement.report import span_gamma


class Command(BaseCommand):
    help = "Print a project's inter-annotator agreement report (computed now unless a valid one is cached)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="the project's slug")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")
        parser.add_argument("--gamma", action="store_true",
                            help="also compute Mathet et al.'s gamma of the spans (ner, mrc), on a sample of items")
        parser.add_argument("--gamma-items", type=int, default=MAX_ITEMS,
                            help=f"items gamma is computed on at most (default {MAX_ITEMS})")

    def handle(self, *args: Any, **options: Any) -> None:
        project = selectors.project_by_slug(options["project"])
        if project is None:
            raise CommandError(f"no project with slug {options['project']!r}")
        try:
            measure_for(project.task_type)
        except LookupError as exc:
            raise CommandError(f"task type {project.task_type!r} has no agreement measure") from exc
        report = services.report_now(project)
        if options["gamma"]:
            if options["gamma_items"] < 1:
                raise CommandError("--gamma-items must be at least 1")
            try:
                report["gamma"] = span_gamma(project, max_items=options["gamma_items"])
            except LookupError as exc:
                raise CommandError(str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps(report, ensure_ascii=False))
            return
        self.stdout.write(self._text(report))

    def _text(self, report: dict[str, Any]) -> str:
        lines = [
            f"{report['project']} ({report['task_type']}): {report['items_counted']} items counted, "
            f"{report['annotators']} annotators",
            "excluded: " + (", ".join(f"{reason} {n}" for reason, n in report["items_excluded"].items()) or "none"),
        ]
        for c in report["coefficients"]:
            value = "n/a" if c["value"] is None else f"{c['value']:.4f}"
            lo, hi = c["ci95"]
            ci = "" if lo is None else f"  95% CI [{lo:.4f}, {hi:.4f}]"
            note = f"  ({c['skipped']})" if c.get("skipped") else ""
            lines.append(f"  {c['name']:<28} {c['level']:<9} {value}{ci}{note}")
        if report.get("gamma"):
            g = report["gamma"]
            value = "n/a" if g["value"] is None else f"{g['value']:.4f}"
            lines.append(f"  {'gamma':<28} {'':<9} {value}  ({g['items']} of {g['items_available']} items, "
                         f"{g['random_continua']} random continua)")
        flagged = [q for q in report["annotator_quality"] if q["flags"]]
        for q in flagged:
            lines.append(f"  annotator {q['username']}: {', '.join(q['flags'])}")
        return "\n".join(lines)
