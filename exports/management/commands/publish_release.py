"""``publish_release <project> --version V [--override-reason TEXT] [--user NAME]``: publish a built release.

Only a ``passed`` release is published as is; an ``inconclusive`` one needs ``--override-reason`` (kept on the
release and in the audit trail).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation import selectors as annotation_selectors
from annotation.services import ServiceError
from exports import selectors, services


class Command(BaseCommand):
    help = "Publish a release that passed its checks (an inconclusive one with --override-reason)."

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        # ``--version`` is the release's version here, not Django's "print the Django version".
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="project slug")
        parser.add_argument("--version", required=True, help="the release's version")
        parser.add_argument("--override-reason", default="",
                            help="why an inconclusive release is published without a verdict (audited)")
        parser.add_argument("--user", default=None, help="username recorded as the publisher")

    def handle(self, *args: Any, **options: Any) -> None:
        project = annotation_selectors.project_by_slug(options["project"])
        if project is None:
            raise CommandError(f"no project with slug {options['project']!r}")
        release = selectors.release_by_version(project, options["version"])
        if release is None:
            raise CommandError(f"{options['project']} has no release {options['version']}")
        user = None
        if options["user"]:
            user = annotation_selectors.user_by_username(options["user"])
            if user is None:
                raise CommandError(f"no user {options['user']!r}")
        try:
            release = services.release_publish(release=release, user=user,
                                               override_reason=options["override_reason"])
        except ServiceError as error:
            raise CommandError(error.message) from None
        self.stdout.write(f"{options['project']} {release.version}: published")
