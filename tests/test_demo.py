"""The `demo` command seeds a usable Goldset through the real pipeline (a subset of tasks, for speed)."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotation import selectors
from annotation.models import Annotation, Project, Role, User

pytestmark = pytest.mark.django_db


def test_demo_seeds_users_projects_annotations_and_a_release(tmp_path):
    out = io.StringIO()
    call_command("demo", "--no-serve", "--json", "--tasks", "tc,nli", "--out", str(tmp_path), stdout=out)
    summary = json.loads(out.getvalue())
    assert set(summary["users"]) >= {"manager", "maintainer", "annotator1", "annotator2", "annotator3"}
    rows = {row["task_type"]: row for row in summary["projects"]}
    assert set(rows) == {"tc", "nli"}
    assert rows["tc"]["imported"] == {"items": 40, "annotations": 40}
    assert rows["tc"]["simulated_annotations"] > 0
    assert rows["tc"]["agreement"][0]["name"] == "krippendorff_alpha"
    assert rows["tc"]["release"]["status"] in {"passed", "inconclusive", "unchecked", "failed"}
    assert (tmp_path / "demo-tc-0.1.0" / "SHA256SUMS").is_file()

    project = Project.objects.get(slug="demo-tc")
    guideline = selectors.current_guideline(project)
    assert guideline.version == 1 and guideline.ethics.strip() and guideline.pii.strip()
    annotator = User.objects.get(username="annotator1")
    assert annotator.check_password("goldset-demo")
    assert selectors.role_in_project(annotator, project) == Role.ANNOTATOR
    # The people trying the demo still have work waiting in every seeded project.
    assert selectors.annotator_progress(project, annotator)["remaining"] > 0
    nli = Project.objects.get(slug="demo-nli")
    assert selectors.eligible_items(nli, annotator, "writing").exists()  # premises waiting for a hypothesis
    assert Annotation.objects.filter(item__project=nli, stage="validation", imported=False).exists()

    # Running it again is harmless: existing projects are kept as they are.
    again = io.StringIO()
    call_command("demo", "--no-serve", "--json", "--tasks", "tc", "--out", str(tmp_path), stdout=again)
    assert json.loads(again.getvalue())["projects"][0]["note"] == "already seeded"


def test_demo_rejects_unknown_task():
    with pytest.raises(CommandError, match="unknown task type"):
        call_command("demo", "--no-serve", "--tasks", "pos")
