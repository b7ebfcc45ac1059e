"""``build_release <project> --version V [--splits 0.8,0.1,0.1 --seed N | --keep-splits] --format … --out DIR``."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation import selectors as annotation_selectors
from annotation.services import ServiceError
from exports import selectors, services
from exports.models import ReleaseStatus


class Command(BaseCommand):
    help = "Build a release: gold, leak-free splits, KLUE/JSONL/CSV/Parquet files, dataset card, checksums, check."

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        # ``--version`` is the release's version here, not Django's "print the Django version".
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="project slug")
        parser.add_argument("--version", required=True, help="semantic version, unique per project (1.0.0)")
        group = parser.add_mutually_exclusive_group()
        group.add_argument("--splits", help="train,dev[,test] ratios, e.g. 0.8,0.1,0.1 (the default)")
        group.add_argument("--keep-splits", action="store_true", help="keep the split each item already has")
        parser.add_argument("--seed", type=int, default=None, help="split seed (default 0)")
        parser.add_argument("--format", default=",".join(services.DEFAULT_FORMATS),
                            help="comma-separated: klue,jsonl,csv,parquet (the default), conllu (DP), conll (NER), "
                                 "squad (MRC), doccano (NER, RE), labelstudio (NER, RE)")
        parser.add_argument("--out", default=None, help="folder to create <project>-<version>/ in")
        parser.add_argument("--no-agreement", action="store_true", help="skip computing the agreement report")
        parser.add_argument("--check-margin", type=float, default=None,
                            help="points the baseline must beat the trivial baseline by (default: the check's own)")
        parser.add_argument("--soft-labels", action="store_true",
                            help="add each item's label votes and the annotator model's posteriors (tc, nli, re) "
                                 "to the JSONL, CSV and Parquet files")
        parser.add_argument("--json", action="store_true", help="print the result as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        project = annotation_selectors.project_by_slug(options["project"])
        if project is None:
            raise CommandError(f"no project with slug {options['project']!r}")
        if options["keep_splits"] and options["seed"] is not None:
            raise CommandError("--seed applies to --splits, not to --keep-splits")

        def progress(state: dict) -> None:
            if not options["json"] and options["verbosity"] > 1:
                self.stderr.write(f"{state.get('phase')}: {state.get('done') or ''}/{state.get('total') or ''}")

        try:
            release = services.release_build(
                project, version=options["version"], splits=options["splits"], seed=options["seed"],
                keep_splits=options["keep_splits"], formats=options["format"], out=options["out"],
                agreement=not options["no_agreement"], check_margin=options["check_margin"],
                soft_labels=options["soft_labels"], progress=progress,
            )
        except ServiceError as error:
            raise CommandError(error.message) from None
        if release.status == ReleaseStatus.ERROR:
            raise CommandError(f"release {release.version} failed: {release.error}")
        check = release.baseline_check
        result = {
            "project": project.slug,
            "version": release.version,
            "status": release.status,
            "out": str(selectors.release_folder(release)),
            "files": list(release.files.order_by("path").values_list("path", flat=True)),
            "splits": release.split_counts,
            "check": {"passed": check.get("passed"), "metrics": check.get("metrics", {}),
                      "trivial": check.get("trivial", {}),
                      **{k: v for k, v in check.items() if k not in ("passed", "metrics", "trivial")}},
            "leakage": release.leakage,
            "label_counts": release.label_counts,
            "excluded": release.excluded,
            "gold": release.gold,
            "reasons": [str(reason) for reason in selectors.status_reasons(release)],
        }
        if options["json"]:
            self.stdout.write(json.dumps(result, ensure_ascii=False))
        else:
            self.stdout.write(f"{project.slug} {release.version}: {release.status} → {result['out']}")
            for split, n in release.split_counts.items():
                self.stdout.write(f"  {split}: {n}")
            for reason in result["reasons"]:  # why it is not passed, as the release page and the API say
                self.stdout.write(f"  {release.status}: {reason}")
