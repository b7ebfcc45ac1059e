"""``contamination_reference PROJECT (--file PATH --format FORMAT | --project OTHER | --remove NAME | --list)``:
the references a project's releases are checked against for contamination."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.services import ServiceError
from datasets_build.pipeline import FORMATS
from exports import contamination_services, selectors

from .contamination_check import project_of


class Command(BaseCommand):
    help = ("Add a contamination reference to a project (a file in one of the import's formats, or another "
            "project), remove one, or list them.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="the project's slug or id")
        what = parser.add_mutually_exclusive_group(required=True)
        what.add_argument("--file", type=Path, help="a reference file")
        what.add_argument("--project", dest="other", help="another project's slug or id")
        what.add_argument("--remove", metavar="NAME", help="remove the reference of this name")
        what.add_argument("--list", action="store_true", help="list the references")
        parser.add_argument("--format", choices=FORMATS, help="the file's format")
        parser.add_argument("--name", default="", help="the reference's name (default: the file or project)")
        parser.add_argument("--not-training", action="store_true",
                            help="the reference is not training data (its hits only fail a release under the "
                                 "'any' policy)")

    def handle(self, *args: Any, **options: Any) -> None:
        project = project_of(options["project"])
        training = not options["not_training"]
        try:
            if options["list"]:
                for r in selectors.contamination_references(project):
                    source = r.other.slug if r.other else f"{r.file_name} ({r.format})"
                    self.stdout.write(f"{r.name}\t{r.kind}\t{source}\t{r.records}\t"
                                      f"{'training' if r.training else 'not training'}")
                return
            if options["remove"]:
                reference = selectors.contamination_references(project).filter(name=options["remove"]).first()
                if reference is None:
                    raise CommandError(f"{project.slug} has no reference {options['remove']!r}")
                contamination_services.reference_delete(reference=reference, by=None)
                self.stdout.write(f"removed {reference.name}")
                return
            if options["other"]:
                reference = contamination_services.reference_add_project(
                    project=project, other=project_of(options["other"]), by=None, name=options["name"],
                    training=training)
            else:
                if not options["format"]:
                    raise CommandError("--file needs --format")
                path: Path = options["file"]
                if not path.is_file():
                    raise CommandError(f"no file {path}")
                with path.open("rb") as upload:
                    reference = contamination_services.reference_add_file(
                        project=project, upload=upload, file_name=path.name, fmt=options["format"], by=None,
                        name=options["name"], training=training)
        except ServiceError as error:
            raise CommandError(error.message) from None
        skipped = f", {reference.skipped} unreadable" if reference.skipped else ""
        self.stdout.write(f"added {reference.name}: {reference.records} records{skipped}")
