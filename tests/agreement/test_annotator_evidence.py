"""The annotators table warns only on evidence, and names a corpus's labels as such.

* An annotator with one submitted item is never flagged "much faster than the others" (nor "agreement rises
  without them"): the flags need ``MIN_ITEMS_FOR_FLAGS`` items (docs/agreement.md), and an annotator with as
  many quick items as that still is.
* Labels carried in with the corpus (an imported user ``<source>:corpus``) appear as "labels from the source
  corpus" on the agreement pages, never under the imported user's name.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.agreement.report import MIN_ITEMS_FOR_FLAGS
from annotation.agreement.services import report_now
from annotation.models import Annotation, Item
from datasets_build.services import items_import
from demo.corpus import CORPUS
from tests.builders import TC_LABELS, client_for, load_records, sample_records

pytestmark = pytest.mark.django_db


def _annotate(project, user, items, seconds: float, *, offset: int = 0) -> None:
    for i, item in enumerate(items):
        Annotation.objects.create(item=item, annotator=user, stage="label", seconds_spent=seconds,
                                  payload={"label": TC_LABELS[(i + offset) % 7]})


def _dashboard(project, manager, language: str = "en") -> str:
    client = client_for(manager)
    return client.get(reverse("annotation:review-dashboard", args=[project.pk]),
                      HTTP_ACCEPT_LANGUAGE=language).content.decode()


def quality_of(project, username: str) -> dict:
    return next(q for q in report_now(project)["annotator_quality"] if q["username"] == username)


def test_one_quick_item_is_no_evidence_but_many_are(make_project, make_user):
    project = make_project("tc", k=3)
    manager = project.created_by
    items = load_records(project, sample_records("tc", 2 * MIN_ITEMS_FOR_FLAGS))
    steady = [make_user(f"steady{i}") for i in range(2)]
    for user in steady:
        _annotate(project, user, items, 30.0)
    once, hurried = make_user("once"), make_user("hurried")
    _annotate(project, once, items[:1], 1.0)
    _annotate(project, hurried, items[:MIN_ITEMS_FOR_FLAGS], 1.0, offset=3)

    assert quality_of(project, "once")["flags"] == []
    assert "too_fast" in quality_of(project, "hurried")["flags"]
    page = _dashboard(project, manager)
    row = page[page.index(">once</a>"):]
    assert "much faster than the others" not in row[:row.index("</tr>")]
    row = page[page.index(">hurried</a>"):]
    assert "much faster than the others" in row[:row.index("</tr>")]


def test_the_corpus_labels_are_not_an_annotator(make_project, make_user):
    project = make_project("tc", k=3)
    result = items_import(project, CORPUS / "tc.jsonl", fmt="jsonl", source="Goldset demo corpus",
                          license="CC-BY-SA-4.0", user=project.created_by)
    assert result.ok and result.annotations  # each record brings the corpus's label, with no annotator id
    corpus = "Goldset demo corpus:corpus"
    assert Annotation.objects.filter(annotator__username=corpus, imported=True).count() == result.annotations
    items = list(Item.objects.filter(project=project).order_by("id"))
    _annotate(project, make_user("minji"), items, 20.0)
    assert "Goldset demo corpus:corpus" in {q["username"] for q in report_now(project)["annotator_quality"]}

    for language, name in (("en", "labels from the source corpus"), ("ko", "원본 말뭉치 라벨")):
        page = _dashboard(project, project.created_by, language)
        assert name in page
        assert corpus not in page.replace("annotator=Goldset%20demo%20corpus%3Acorpus", "")
    client = client_for(project.created_by)
    detail = client.get(reverse("annotation:review-item", args=[project.pk, items[0].pk]),
                        HTTP_ACCEPT_LANGUAGE="ko").content.decode()
    assert "원본 말뭉치 라벨" in detail and corpus not in detail
