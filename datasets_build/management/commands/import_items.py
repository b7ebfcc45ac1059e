"""``import_items <project> <file> --format klue|jsonl|csv|doccano|labelstudio``: the browser upload's pipeline, from
the shell."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation import selectors
from annotation.services import project_create, project_delete
from annotation.task_types import slugs
from datasets_build.ontology import ontology_beside
from datasets_build.pipeline import FORMATS
from datasets_build.services import items_import


class Command(BaseCommand):
    help = "Import a corpus file into a project (all or nothing), with PII pseudonymization and screening."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="project slug")
        parser.add_argument("file")
        parser.add_argument("--format", required=True, choices=list(FORMATS))
        parser.add_argument("--task-type", choices=slugs(), help="create the project with this task type if new")
        parser.add_argument("--source", default="", help="source corpus name (default: KLUE for klue files)")
        parser.add_argument("--license", default="", help="SPDX licence id of the source, e.g. CC-BY-SA-4.0")
        parser.add_argument("--pii", choices=["pseudonymize", "detect", "off"], default=None,
                            help="one PII action for every type in this import (overrides the project's policy)")
        parser.add_argument("--encoding", choices=["auto", "utf-8", "cp949"], default="auto")
        parser.add_argument("--duplicates", choices=["skip", "refuse"], default="skip")
        parser.add_argument("--approved-only", action="store_true",
                            help="doccano only: the export was made with \"Export only approved documents\", so an "
                                 "example with no labels there was confirmed by its annotator (labelled with nothing)")
        parser.add_argument("--ontology", default=None,
                            help="dst (WoS) only: the ontology file the dialogues come with; it becomes the project's "
                                 "(default for a KLUE file: the wos-v*_ontology.json beside it, if any)")
        parser.add_argument("--json", action="store_true", help="print the result as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["file"])
        if not path.is_file():
            raise CommandError(f"no such file: {path}")
        project = selectors.project_by_slug(options["project"])
        created = project is None
        if project is None:
            if not options["task_type"]:
                raise CommandError(f"no project {options['project']!r}; pass --task-type to create it")
            project = project_create(name=options["project"], slug=options["project"],
                                     task_type=options["task_type"], created_by=None)
        elif options["task_type"] and options["task_type"] != project.task_type:
            raise CommandError(f"project {project.slug} is a {project.task_type} project, not {options['task_type']}")
        ontology = Path(options["ontology"]) if options["ontology"] else None
        if ontology is not None and not ontology.is_file():
            raise CommandError(f"no such file: {ontology}")
        if ontology is None and options["format"] == "klue":
            ontology = ontology_beside(path, project.task_type)  # KLUE ships WoS's ontology beside its dialogues
        result = items_import(project, path, options["format"], source=options["source"], license=options["license"],
                              pii=options["pii"], encoding=options["encoding"], duplicates=options["duplicates"],
                              approved_only=options["approved_only"], ontology=ontology)
        if options["json"]:
            self.stdout.write(json.dumps(result.as_json(), ensure_ascii=False))
        else:
            self.stdout.write(f"{project.slug}: {result.items} items, {result.annotations} annotations")
            for error in result.errors:
                self.stdout.write(f"record {error['record']}\t{error['field']}\t{error['message']}")
        if result.errors:
            if created:  # nothing was imported: the project made for the file goes too
                project_delete(project=project)
            first = result.errors[0]
            raise CommandError(f"nothing imported: {len(result.errors)} problem(s); first at record {first['record']}"
                               f"{' ' + first['field'] if first['field'] else ''}: {first['message']}")
