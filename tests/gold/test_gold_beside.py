"""Gold computed for a release build: its new rows written on a connection of their own (PostgreSQL), with the
same result as written in the rule's own connection, and nothing written when the computation fails."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from annotation import services
from annotation.gold import services as gold_services
from annotation.gold.services import gold_compute
from annotation.models import Annotation, GoldLabel

pytestmark = pytest.mark.django_db(transaction=True)

VOTES = {f"i{n}": values for n, values in enumerate(
    [["사회", "사회", "경제"], ["사회", "경제", "정치"], ["정치"], [], ["경제", "경제"]] * 300)}


def _project(make_project, make_user):
    project = make_project("tc", slug="beside-tc")
    users = [make_user(f"beside{i}") for i in range(3)]
    annotations = []
    for key, values in VOTES.items():
        item = services.item_create(project=project, payload={"title": f"제목 {key}"}, external_id=key)
        annotations += [Annotation(item=item, annotator=user, stage="label", payload={"label": value})
                        for user, value in zip(users, values, strict=False)]
    Annotation.objects.bulk_create(annotations)
    return project


def _rows(project):
    return sorted(GoldLabel.objects.filter(item__project=project).values_list(
        "item__external_id", "payload", "status", "rule", "detail", "annotation_count", "version"))


def test_rows_written_beside_are_the_rows_written_in_place(make_project, make_user, monkeypatch):
    project = _project(make_project, make_user)
    monkeypatch.setattr(gold_services, "_WRITE_BATCH", 400)
    threads: list[str] = []
    original = gold_services._NewGoldRows._run

    def spied(self):
        threads.append(threading.current_thread().name)
        original(self)

    monkeypatch.setattr(gold_services._NewGoldRows, "_run", spied)
    statuses = gold_compute(project, write_beside=True)
    assert threads == (["gold-rows"] if connection.vendor == "postgresql" else [])
    beside = _rows(project)
    assert len(beside) == len(VOTES) > 2 * gold_services._WRITE_BATCH
    GoldLabel.objects.filter(item__project=project).delete()
    assert gold_compute(project) == statuses == {"resolved": 600, "needs_adjudication": 300, "incomplete": 600}
    assert _rows(project) == beside
    assert not [t for t in threading.enumerate() if t.name == "gold-rows"]


def test_a_failed_computation_writes_no_row(make_project, make_user, monkeypatch):
    project = _project(make_project, make_user)
    monkeypatch.setattr(gold_services, "_WRITE_BATCH", 400)
    decided = 0
    decide = type(gold_services.rule_for("tc")).decide

    def failing(self, payloads, **kwargs):
        nonlocal decided
        decided += 1
        if decided > 3 * gold_services._WRITE_BATCH:  # after two batches went to the writer
            raise RuntimeError("the rule broke")
        return decide(self, payloads, **kwargs)

    monkeypatch.setattr(type(gold_services.rule_for("tc")), "decide", failing)
    with pytest.raises(RuntimeError, match="the rule broke"):
        gold_compute(project, write_beside=True)
    assert not GoldLabel.objects.filter(item__project=project).exists()
    assert not [t for t in threading.enumerate() if t.name == "gold-rows"]
