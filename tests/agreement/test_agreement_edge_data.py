"""The agreement report on edge data, through the ``agreement`` command: projects where no item has two
annotations, assisted annotations only on single-rated items, and disagreement scores that differ only by
floating-point rounding. Each of these once crashed the report instead of saying what it could not compute."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from annotation import services
from annotation.models import Annotation

pytestmark = pytest.mark.django_db


def _report(project) -> dict:
    """The command's report, and the manager's dashboard showing it."""
    out = StringIO()
    call_command("agreement", project.slug, "--json", stdout=out)
    client = Client()
    client.force_login(project.created_by)
    assert client.get(f"/projects/{project.pk}/agreement/").status_code == 200
    return json.loads(out.getvalue())


def _annotators(make_user, add_member, project, n: int) -> list:
    return [add_member(project, make_user(f"rater-{project.slug}-{i}")) for i in range(n)]


def test_sts_with_no_multiply_rated_item(make_project, make_user, add_member):
    project = make_project("sts", k=1)
    users = _annotators(make_user, add_member, project, 3)
    for i in range(6):
        item = services.item_create(project=project, payload={"sentence1": f"문장 {i}", "sentence2": f"다른 문장 {i}"})
        Annotation.objects.create(item=item, annotator=users[i % 3], stage="label", payload={"score": i % 6})
    report = _report(project)
    assert report["items_counted"] == 0
    assert report["items_excluded"]
    assert all(c["value"] is None for c in report["coefficients"])


def test_assisted_annotations_on_single_rated_items_only(make_project, make_user, add_member):
    project = make_project("tc", k=1)
    users = _annotators(make_user, add_member, project, 2)
    for i in range(4):
        item = services.item_create(project=project, payload={"title": f"기사 {i}"})
        Annotation.objects.create(item=item, annotator=users[i % 2], stage="label", payload={"label": "경제"},
                                  suggestion_shown=True, suggestion_accepted=True)
    report = _report(project)
    assert report["assist"]["assisted_annotations"] == 4
    assert report["assist"]["alpha"]["assisted"]["value"] is None


def test_disagreement_scores_that_differ_only_by_rounding(make_project, make_user, add_member):
    project = make_project("sts", k=2)
    project.label_schema = {**project.label_schema, "step": 0.1}
    project.save()
    users = _annotators(make_user, add_member, project, 2)
    # Each pair is 0.1 apart: standard deviations of 0.05 and 0.05000000000000002, three floats apart, too
    # close for ten histogram bins.
    for i, (a, b) in enumerate([(0.0, 0.1), (0.3, 0.4), (0.0, 0.1), (0.3, 0.4), (0.0, 0.1), (0.3, 0.4)]):
        item = services.item_create(project=project, payload={"sentence1": f"문장 {i}", "sentence2": f"다른 {i}"})
        Annotation.objects.create(item=item, annotator=users[0], stage="label", payload={"score": a})
        Annotation.objects.create(item=item, annotator=users[1], stage="label", payload={"score": b})
    report = _report(project)
    assert report["items_counted"] == 6
    disagreement = report["disagreement"]
    assert disagreement["items"] == 6 and sum(disagreement["histogram"]) == 6
    assert disagreement["mean"] == pytest.approx(0.05)
