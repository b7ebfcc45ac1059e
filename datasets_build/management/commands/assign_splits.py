"""`python manage.py assign_splits <project> --splits 0.8,0.1,0.1 --seed 13`: splits before annotation."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation import selectors
from annotation.services import ServiceError
from datasets_build.split_assign import split_counts, splits_assign


class Command(BaseCommand):
    help = ("Give the project's items without a split one (train, dev, test by ratios, leak-free and seeded), so that "
            "an annotation budget by split applies before the first release.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="Project slug.")
        parser.add_argument("--splits", default="0.8,0.1,0.1", help="train,dev[,test] ratios (default 0.8,0.1,0.1).")
        parser.add_argument("--seed", type=int, default=0, help="Seed of the split (default 0).")
        parser.add_argument("--json", action="store_true", help="Print the counts as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        project = selectors.project_by_slug(options["project"])
        if project is None:
            raise CommandError(f"no project with slug {options['project']!r}")
        try:
            given = splits_assign(project=project, ratios=options["splits"], seed=options["seed"], by=None)
        except ServiceError as error:
            raise CommandError(error.message) from None
        result = {"project": project.slug, "assigned": given, "splits": split_counts(project)}
        if options["json"]:
            self.stdout.write(json.dumps(result, ensure_ascii=False))
        else:
            self.stdout.write(f"{project.slug}: " + ", ".join(f"{name} +{n}" for name, n in given.items())
                              + " (items per split now: " + ", ".join(
                                  f"{name or 'none'} {n}" for name, n in result["splits"].items()) + ")")
