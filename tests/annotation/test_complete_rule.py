"""One definition of "complete": an item's stage is complete when it has k annotations in that stage,
imported corpus annotations included — the progress page/API and agreement count with it."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from django.core.management import call_command
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from annotation import selectors
from annotation.models import Annotation, Item, Role
from datasets_build.services import items_import

pytestmark = pytest.mark.django_db

LABELS = ["사회", "경제", "정치", "세계", "IT과학", "스포츠"]


def imported_tc_project(make_project, tmp_path, labels: list[str]):
    """A k = 3 topic project whose items came with one corpus label each (as the demo's and KLUE's do)."""
    project = make_project("tc", k=3, slug="complete-tc")
    path = tmp_path / "tc.jsonl"
    path.write_text("".join(json.dumps({"guid": f"t-{i}", "title": f"기사 제목 {i}번", "label": label},
                                       ensure_ascii=False) + "\n" for i, label in enumerate(labels)),
                    encoding="utf-8")
    assert items_import(project, path, "jsonl", pii="off").ok
    return project, list(Item.objects.filter(project=project).order_by("id"))


def label(item: Item, user, value: str) -> None:
    Annotation.objects.create(item=item, annotator=user, stage="label", payload={"label": value, "second": None,
                                                                                  "third": None})


def test_the_rule_counts_imported_annotations_and_answers_arrays(make_project):
    project = make_project("nli", k=3)
    assert selectors.stage_complete(project, "validation", 3) and not selectors.stage_complete(project, "validation", 2)
    assert selectors.stage_complete(project, "writing", 1)
    assert selectors.stage_complete(project, "validation", np.array([1, 3, 4])).tolist() == [False, True, True]


def test_progress_counts_the_imported_label_towards_k(make_project, make_user, api, tmp_path):
    project, items = imported_tc_project(make_project, tmp_path, ["사회", "경제", "정치"])
    people = [make_user(f"p{i}") for i in range(3)]
    label(items[0], people[0], "사회")
    label(items[0], people[1], "사회")  # corpus + 2 people = k: complete
    label(items[1], people[0], "경제")  # corpus + 1 person: not yet
    progress = api(project.created_by).get(f"/api/projects/{project.id}/progress/").json()
    assert progress["stages"] == [{"stage": "label", "needed_per_item": 3, "annotations": 6, "items_started": 3,
                                   "items_complete": 1}]


def test_fleiss_kappa_counts_complete_items_with_k_raters_even_when_some_got_k_plus_one(
        make_project, make_user, tmp_path, add_member):
    corpus = ["사회", "경제", "정치", "세계", "IT과학", "스포츠", "사회", "경제"]
    project, items = imported_tc_project(make_project, tmp_path, corpus)
    people = [add_member(project, make_user(f"coder{i}"), Role.ANNOTATOR) for i in range(3)]
    votes = [["사회", "사회", "경제"], ["경제", "경제", "경제"], ["정치", "사회", "정치"], ["세계", "세계", "세계"],
             ["IT과학", "경제", "IT과학"], ["스포츠", "스포츠", "스포츠"], ["사회", None, None], ["경제", "사회", None]]
    for item, row in zip(items, votes, strict=True):
        for person, value in zip(people, row, strict=True):
            if value is not None:
                label(item, person, value)
    # Items 0-5 have corpus + 3 people = k + 1 (a queue that ignored the corpus label); item 7 has exactly k;
    # item 6 (corpus + 1) is not complete.
    out = io.StringIO()
    call_command("agreement", project.slug, "--json", stdout=out)
    report = json.loads(out.getvalue())
    fleiss = next(c for c in report["coefficients"] if c["name"] == "fleiss_kappa")
    assert fleiss["value"] is not None, fleiss
    assert fleiss["raters_per_item"] == 3 and fleiss["units"] == 7
    # the first k annotations of each complete item: the corpus label, then the people in the order they came
    first_k = [[corpus[i], *[v for v in votes[i] if v is not None][:2]] for i in (0, 1, 2, 3, 4, 5, 7)]
    table, _ = aggregate_raters(np.array([[LABELS.index(v) for v in row] for row in first_k]))
    assert fleiss["value"] == pytest.approx(fleiss_kappa(table, method="fleiss"), abs=1e-12)
    # Krippendorff's alpha still uses every item with two or more labels.
    assert report["items_counted"] == 8
    assert report["timeline"][-1]["items_complete"] == 7


def test_an_imported_hypothesis_needs_no_writer_and_the_timeline_counts_complete_items(make_project, make_user,
                                                                                        tmp_path):
    project = make_project("nli", k=3, slug="complete-nli")
    pair = {"premise": "시립도서관은 이번 달부터 평일 운영 시간을 밤 10시까지 연장한다.",
            "hypothesis": "시립도서관은 평일 밤 9시 이후에도 문을 연다."}
    records = [{"guid": "n-a", **pair, "gold_label": "entailment"},  # the corpus's vote only
               {"guid": "n-b", **pair, "hypothesis": "시립도서관은 주말에도 문을 연다.", "author": "neutral"},
               {"guid": "n-c", **pair, "hypothesis": "시립도서관은 밤 9시에 문을 닫는다.", "author": "contradiction"}]
    path = tmp_path / "nli.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    assert items_import(project, path, "jsonl", pii="off").ok
    a, b, c = Item.objects.filter(project=project).order_by("id")
    people = [make_user(f"v{i}") for i in range(3)]
    for item, labels in ((a, ["entailment", "entailment"]), (b, ["neutral", "entailment"]),
                         (c, ["contradiction", "contradiction", "neutral"])):
        for person, value in zip(people, labels, strict=False):
            Annotation.objects.create(item=item, annotator=person, stage="validation", payload={"label": value})
    out = io.StringIO()
    call_command("agreement", project.slug, "--json", stdout=out)
    report = json.loads(out.getvalue())
    # a: corpus vote + 2 validators = k, its hypothesis came with it; b: 2 validators of 3; c: writer + 3
    assert report["timeline"][-1]["items_complete"] == 2
    progress = selectors.project_progress(project)["stages"]
    assert [s["items_complete"] for s in progress] == [2, 2]  # writing: b, c; validation: a, c


def test_the_card_counts_complete_items_with_the_same_rule(make_project, make_user, tmp_path):
    project, items = imported_tc_project(make_project, tmp_path, ["사회", "경제", "정치"])
    people = [make_user(f"c{i}") for i in range(3)]
    label(items[0], people[0], "사회")
    label(items[0], people[1], "사회")  # corpus + 2 people = k: complete
    label(items[1], people[0], "경제")  # corpus + 1 person: not yet
    out = io.StringIO()
    call_command("build_release", project.slug, "--version", "1.0.0", "--format", "jsonl", "--splits", "1,0,0",
                 "--out", str(tmp_path / "out"), "--json", stdout=out)
    folder = tmp_path / "out" / f"{project.slug}-1.0.0"
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["annotators"]["complete"] == {"label": {"k": 3, "items": 1}}
    assert "| label | 1: 1, 2: 1, 3: 1 | 1 (k = 3) |" in (folder / "README.md").read_text(encoding="utf-8")
