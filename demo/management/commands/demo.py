"""`python manage.py demo [--no-serve]`: a working Goldset in one command.

Seeds demo users and one project per task type from the bundled corpus (the hand-written files and the
generated ones, through the real import pipeline), lets three simulated annotators work through the real
queue, computes agreement and gold, builds a release with its baseline check, prints one line per
project and how to sign in, then serves the app.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.test.utils import override_settings

from annotation import selectors, services
from annotation.models import Project, Role, User
from annotation.task_types import all_task_types
from demo.corpus import CORPUS, MissingDemoCorpus, corpus_files
from demo.simulation import simulate_annotators

PASSWORD = "goldset-demo"
PEOPLE = {
    "manager": Role.MANAGER,
    "maintainer": Role.MAINTAINER,
    "annotator1": Role.ANNOTATOR,
    "annotator2": Role.ANNOTATOR,
    "annotator3": Role.ANNOTATOR,
}
#: Three, so that every stage gets its k = 3 annotations (MRC and NLI validation included) and gold resolves.
SIMULATED = ("sim-gaeun", "sim-dohyun", "sim-minji")
K = 3
#: Share of the items the simulated annotators leave to the people trying the demo.
SPARE = 0.06
#: The release's split ratios: a dev split of 20+ records, which the baseline check needs for a verdict.
SPLITS = [0.6, 0.2, 0.2]
#: One project shows an annotation budget by split: its items get their splits before annotation (with SPLITS),
#: train items one annotator and a seeded tenth of them three (an agreement sample), dev and test k = 3; its
#: release keeps those splits.
BUDGETED = "tc"
BUDGET = {"splits": {"train": 1, "dev": K, "test": K}, "rules": [{"k": K, "split": "train", "sample": 0.1, "seed": 13}]}


class Command(BaseCommand):
    help = "Seed the demo (users, a project per task type, simulated annotation, agreement, a release) and serve."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--no-serve", action="store_true", help="Stop after seeding instead of serving.")
        parser.add_argument("--addrport", default="127.0.0.1:8000", help="Where to serve (default 127.0.0.1:8000).")
        parser.add_argument("--out", default="demo-release", help="Folder for the demo releases.")
        parser.add_argument("--json", action="store_true", help="Print the summary as JSON.")
        parser.add_argument("--tasks", default="", help="Comma-separated task slugs to seed (default: all eight).")

    def handle(self, *args: Any, **options: Any) -> None:
        call_command("migrate", verbosity=0, interactive=False)
        users = self._users()
        summary: dict[str, Any] = {"users": {name: PASSWORD for name in PEOPLE}, "projects": []}
        wanted = {slug.strip() for slug in options["tasks"].split(",") if slug.strip()}
        unknown = wanted - {t.slug for t in all_task_types()}
        if unknown:
            raise CommandError(f"unknown task type(s): {', '.join(sorted(unknown))}")
        seeded = [t.slug for t in all_task_types() if not wanted or t.slug in wanted]
        try:
            corpus = {slug: corpus_files(slug) for slug in seeded}
        except MissingDemoCorpus as exc:
            raise CommandError(str(exc)) from None
        for slug in seeded:
            summary["projects"].append(self._project(slug, corpus[slug], users, Path(options["out"])))
        if options["json"]:
            self.stdout.write(json.dumps(summary, ensure_ascii=False, indent=2))
        else:
            self._print(summary)
        if not options["no_serve"]:
            self.stdout.write(f"\nServing Goldset at http://{options['addrport']}/ (Ctrl-C to stop)")
            self._sign_in()
            # Served as users meet it, not as a developer's console: without DEBUG the 403, 404 and 500 pages are
            # Goldset's own, in the reader's language. Static files then come from the apps through WhiteNoise
            # (no collectstatic, no hashed names), as DEBUG would have served them; no STATIC_ROOT, so WhiteNoise
            # does not look for (and warn about) a collected folder the demo never makes.
            static = {**settings.STORAGES,
                      "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}
            with override_settings(DEBUG=False, WHITENOISE_USE_FINDERS=True, STORAGES=static, STATIC_ROOT=None):
                call_command("runserver", options["addrport"], use_reloader=False)
        elif not options["json"]:
            self._sign_in()

    def _users(self) -> dict[str, User]:
        return {name: services.user_ensure(username=name, password=PASSWORD,
                                           permissions=("add_project",) if name == "manager" else ())
                for name in (*PEOPLE, *SIMULATED)}

    @transaction.atomic
    def _seed_project(self, slug: str, users: dict[str, User]) -> tuple[Project, bool]:
        project_slug = f"demo-{slug}"
        existing = selectors.project_by_slug(project_slug)
        if existing is not None:
            return existing, False
        task = next(t for t in all_task_types() if t.slug == slug)
        project = services.project_create(
            name=f"Demo {task.klue_name} ({task.title})", slug=project_slug, task_type=slug,
            created_by=users["manager"], annotators_per_item=K,
            description=f"Demo project built from demo/corpus/{slug}.jsonl and generated/{slug}.jsonl, written for "
                        "Goldset.",
            label_schema=self._schema(task.slug, task.default_schema()),
        )
        for name, role in PEOPLE.items():
            if name != "manager":
                services.membership_set(project=project, user=users[name], role=role)
        for name in SIMULATED:
            services.membership_set(project=project, user=users[name], role=Role.ANNOTATOR)
        return project, True

    @staticmethod
    def _schema(slug: str, schema: dict[str, Any]) -> dict[str, Any]:
        ontology = CORPUS / f"{slug}_ontology.json"
        if ontology.exists():  # the demo dialogues use their own small ontology
            schema = {**schema, "ontology": json.loads(ontology.read_text(encoding="utf-8"))}
        return schema

    def _project(self, slug: str, corpus: tuple[Path, Path], users: dict[str, User], out: Path) -> dict[str, Any]:
        project, created = self._seed_project(slug, users)
        row: dict[str, Any] = {"project": project.slug, "task_type": slug, "created": created}
        if not created:
            row["note"] = "already seeded"
            return row
        from datasets_build.services import items_import

        imported = {"items": 0, "annotations": 0}
        for path in corpus:
            result = items_import(project, path, fmt="jsonl", source="Goldset demo corpus", license="CC-BY-SA-4.0",
                                  user=users["manager"])
            if not result.ok:
                raise CommandError(f"demo corpus {path.name} did not import: {result.errors[0]}")
            imported = {"items": imported["items"] + result.items,
                        "annotations": imported["annotations"] + result.annotations}
        row["imported"] = imported
        if slug == BUDGETED:
            self._budget(project, users["manager"])
            row["budget"] = BUDGET
        row["simulated_annotations"] = simulate_annotators(
            project, [users[name] for name in SIMULATED], seed=len(slug), spare=SPARE
        )
        row.update(self._agreement(project))
        row.update(self._release(project, out))
        return row

    @staticmethod
    def _budget(project: Project, manager: User) -> None:
        from datasets_build.split_assign import splits_assign

        splits_assign(project=project, ratios=SPLITS, seed=13, by=manager)
        services.project_update(project=project, changes={"options": {**project.options, "budget": BUDGET}},
                                by=manager)

    @staticmethod
    def _agreement(project: Project) -> dict[str, Any]:
        from annotation.agreement.services import report_now
        from annotation.gold.services import gold_compute

        report = report_now(project)
        return {"agreement": [{"name": c["name"], "level": c.get("level"), "value": c["value"]}
                              for c in report["coefficients"]],
                "gold": gold_compute(project)}

    @staticmethod
    def _release(project: Project, out: Path) -> dict[str, Any]:
        from exports.services import EmptyReleaseError, release_build

        # A fresh demo database starts a fresh demo release (a leftover folder would be refused).
        shutil.rmtree(out / f"{project.slug}-0.1.0", ignore_errors=True)
        try:
            budgeted = "budget" in (project.options or {})  # its splits were given before annotation: kept
            release = release_build(project, version="0.1.0", splits=None if budgeted else SPLITS,
                                    seed=None if budgeted else 13, keep_splits=budgeted,
                                    formats=("klue", "jsonl", "csv", "parquet"), out=out)
        except EmptyReleaseError as error:  # no releasable item yet: the summary says so instead of a crash
            return {"release": {"version": "0.1.0", "status": "refused", "error": error.message}}
        return {"release": {"version": release.version, "status": release.status, "path": release.out_dir,
                            "check": release.baseline_check}}

    def _print(self, summary: dict[str, Any]) -> None:
        """One line per project: items, Krippendorff's alpha, the release's status and its check in words."""
        passed = 0
        for row in summary["projects"]:
            if "release" not in row:
                self.stdout.write(f"{row['project']}: {row.get('note', '')}")
                continue
            passed += row["release"]["status"] == "passed"
            self.stdout.write(summary_line(row))
        built = sum(1 for row in summary["projects"] if "release" in row)
        if passed == built:
            self.stdout.write(self.style.SUCCESS(f"Goldset demo is ready: {built} release(s) built and passed."))
        else:
            self.stdout.write(self.style.WARNING(f"Goldset demo: {built - passed} of {built} release(s) did not "
                                                 f"pass their check; see the lines above."))

    def _sign_in(self) -> None:
        self.stdout.write(f"Sign in with password {PASSWORD!r} as: " + ", ".join(
            f"{name} ({role})" for name, role in PEOPLE.items()))


def summary_line(row: dict[str, Any]) -> str:
    """``demo-tc: 138 items, α 0.86, release 0.1.0 passed (dev 28: macro_f1 81.8 vs trivial 1.9)``, and the
    budget by split of the project that has one (``; annotators per item by split: train 1, dev 3, test 3``)."""
    alpha = next((c["value"] for c in row["agreement"] if c["name"].startswith("krippendorff_alpha")), None)
    release, check = row["release"], row["release"]["check"] or {}
    line = (f"{row['project']}: {row['imported']['items']} items, "
            f"α {'n/a' if alpha is None else f'{alpha:.2f}'}, release {release['version']} {release['status']}")
    primary = check.get("primary")
    if primary and check.get("metrics"):
        value, trivial = check["metrics"].get(primary), (check.get("trivial") or {}).get(primary)
        line += (f" (dev {check.get('n_dev')}: {primary} {_number(value)} vs trivial {_number(trivial)})")
    elif check.get("reason"):
        line += f" ({check['reason']})"
    if row.get("budget"):
        line += "; annotators per item by split: " + ", ".join(
            f"{split} {k}" for split, k in row["budget"]["splits"].items())
    return line


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"
