"""``contamination_check PROJECT VERSION [--json]``: check a built release's dev and test items against the train
split of earlier releases and the project's references, now, and record the result as a check of the release."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation import selectors as annotation_selectors
from annotation.models import Project
from annotation.services import ServiceError
from exports import contamination_services, selectors


def project_of(key: str) -> Project:
    project = annotation_selectors.project_by_slug(key) or (
        annotation_selectors.project_by_id(int(key)) if key.isdigit() else None)
    if project is None:
        raise CommandError(f"no project {key!r} (give its slug or id)")
    return project


class Command(BaseCommand):
    help = ("Check a release's dev and test items for exact and near duplicates in the train split of earlier "
            "releases and in the project's references (contamination_reference adds them); exits 1 when the "
            "project's policy fails what was found.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="the project's slug or id")
        parser.add_argument("version", help="the release's version (1.1.0)")
        parser.add_argument("--json", action="store_true", help="print the whole result as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        project = project_of(options["project"])
        release = selectors.release_by_version(project, options["version"])
        if release is None:
            raise CommandError(f"{project.slug} has no release {options['version']}")
        try:
            check = contamination_services.check_request(release=release, by=None, now=True)
        except ServiceError as error:
            raise CommandError(error.message) from None
        if check.error:
            raise CommandError(f"the check failed: {check.error}")
        result = check.result
        if options["json"]:
            self.stdout.write(json.dumps(result, ensure_ascii=False, indent=2))
        else:
            self._print(result)
        if result.get("fails"):
            raise CommandError(f"{result['failing']} item(s) fail release {release.version} under the "
                               f"{result['policy']} policy", returncode=1)

    def _print(self, result: dict[str, Any]) -> None:
        write = self.stdout.write
        against = ", ".join(result.get("against") or []) or "none"
        write(f"earlier releases: {against}; references: "
              + (", ".join(r["name"] for r in result.get("references") or []) or "none"))
        write("clean" if result["clean"] else f"{result['hit_count']} hit(s); policy {result['policy']}")
        for hit in result["hits"]:
            source = f"reference {hit['reference']} {hit['match']}" if hit["reference"] else \
                f"train of {hit['release']}"
            similarity = "" if hit["similarity"] is None else f"\t{hit['similarity']:.2f}"
            write(f"{hit['item']}\t{hit['split']}\t{hit['kind']}\t{source}{similarity}")
