"""Gold rules, Dawid–Skene, adjudication (with its conflict rule) and gold / attention items."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from django.db import connection

from annotation import services
from annotation.gold import rules
from annotation.gold.dawid_skene import dawid_skene
from annotation.gold.selectors import gold_labels
from annotation.gold.services import adjudicate, gold_check_set, gold_compute, gold_for_item
from annotation.models import Adjudication, Annotation, GoldLabel, Project
from annotation.services import ServiceError
from tests.klue_loader import load_nli, load_sts


def labels(*values: str) -> list[dict]:
    return [{"label": v} for v in values]


# -- rules ------------------------------------------------------------------------------------------------


def test_nli_rule_needs_three_of_five_else_discards():
    rule = rules.rule_for("nli")
    settings = {"gold_min_votes": 3}
    resolved = rule.decide(labels("neutral", "neutral", "entailment", "neutral", "contradiction"), needed=5,
                           settings=settings)
    assert (resolved.status, resolved.payload) == ("resolved", {"label": "neutral"})
    split = rule.decide(labels("neutral", "neutral", "entailment", "entailment", "contradiction"), needed=5,
                        settings=settings)
    assert split.status == "discarded" and split.payload is None
    early = rule.decide(labels("neutral", "neutral", "entailment"), needed=5, settings=settings)
    assert early.status == "incomplete"
    decided_early = rule.decide(labels("neutral", "neutral", "neutral"), needed=5, settings=settings)
    assert decided_early.status == "resolved"


def test_majority_rule_sends_ties_to_adjudication():
    rule = rules.rule_for("tc")
    assert rule.decide(labels("사회", "사회", "경제"), needed=3, settings={}).payload == {"label": "사회"}
    tie = rule.decide(labels("사회", "경제", "정치"), needed=3, settings={})
    assert tie.status == "needs_adjudication" and tie.detail["votes"] == {"사회": 1, "경제": 1, "정치": 1}
    assert rule.decide(labels("사회", "경제"), needed=2, settings={"gold_min_votes": 1}).status == \
        "needs_adjudication"


def test_majority_votes_are_ranked_by_count_then_first_seen():
    # The gold row's detail keeps this order (dict order is what the JSON column stores).
    tie = rules.rule_for("tc").decide(labels("정치", "사회", "경제", "사회", "정치", "세계"), needed=7, settings={})
    assert list(tie.detail["votes"].items()) == [("정치", 2), ("사회", 2), ("경제", 1), ("세계", 1)]
    assert tie.status == "incomplete"
    numbers = rules.rule_for("tc").decide([{"label": 1}, {"label": "1"}, {}, {"label": None}], needed=2, settings={})
    assert numbers.detail == {"votes": {"1": 2}, "min_votes": 2, "annotations": 4}
    assert (numbers.status, numbers.payload) == ("resolved", {"label": "1"})


def test_sts_mean_rule_matches_klue_label_fields():
    rule = rules.rule_for("sts")
    gold = rule.decide([{"score": s} for s in [5, 5, 5, 5, 4, 5, 5]], needed=7, settings={})
    assert gold.payload["real_label"] == pytest.approx(4.857142857142857)
    assert gold.payload["label"] == 4.9 and gold.payload["binary_label"] == 1
    low = rule.decide([{"score": s} for s in [3, 3, 2, 3]], needed=4, settings={})
    assert low.payload["label"] == 2.8 and low.payload["binary_label"] == 0
    boundary = rule.decide([{"score": s} for s in [3, 3]], needed=2, settings={})
    assert boundary.payload["binary_label"] == 1  # ≥ 3.0


def test_ner_span_majority_keeps_spans_of_more_than_half():
    rule = rules.rule_for("ner")
    a = {"entities": [{"start": 0, "end": 2, "type": "PS"}, {"start": 5, "end": 7, "type": "LC"}]}
    b = {"entities": [{"start": 0, "end": 2, "type": "PS"}, {"start": 5, "end": 8, "type": "LC"}]}
    c = {"entities": [{"start": 0, "end": 2, "type": "PS"}, {"start": 5, "end": 7, "type": "LC"}]}
    gold = rule.decide([a, b, c], needed=3, settings={})
    assert gold.payload == {"entities": [{"start": 0, "end": 2, "type": "PS"}, {"start": 5, "end": 7, "type": "LC"}]}
    tie = rule.decide([a, b], needed=2, settings={})
    assert tie.status == "needs_adjudication"


def test_structured_answers_need_a_strict_majority():
    rule = rules.rule_for("dp")
    tree = {"heads": [2, 0], "deprels": ["NP_SBJ", "VP"]}
    other = {"heads": [2, 0], "deprels": ["NP_OBJ", "VP"]}
    assert rule.decide([tree, tree, other], needed=3, settings={}).payload == tree
    assert rule.decide([tree, other], needed=2, settings={}).status == "needs_adjudication"


def test_dawid_skene_recovers_better_gold_than_majority_on_synthetic_annotators():
    """Two careful annotators (95 %, 90 %) and five careless ones (40–45 %): majority follows the crowd of
    careless votes, the EM model learns who to trust."""
    rng = np.random.default_rng(0)
    n_items, n_classes = 2000, 3
    accuracies = [0.95, 0.9, 0.45, 0.4, 0.4, 0.4, 0.4]
    truth = rng.integers(0, n_classes, n_items)
    votes = np.stack([np.where(rng.random(n_items) < acc, truth, (truth + rng.integers(1, n_classes, n_items))
                               % n_classes) for acc in accuracies], axis=1)
    votes[rng.random(votes.shape) < 0.2] = -1  # not everyone labels everything
    counts = np.stack([(votes == k).sum(axis=1) for k in range(n_classes)], axis=1)
    majority_accuracy = (counts.argmax(axis=1) == truth).mean()

    fit = dawid_skene(votes, n_classes)

    assert (fit.labels == truth).mean() > majority_accuracy + 0.1
    assert (fit.labels == truth).mean() > 0.88
    np.testing.assert_allclose(fit.accuracy(), accuracies, atol=0.05)


# -- services on the database ------------------------------------------------------------------------------------


def _project_with_votes(make_project, make_user, votes: dict[str, list[str]], *, slug: str, k: int = 3) -> tuple:
    project = make_project("tc", k=k, slug=slug)
    users = [make_user(f"{slug}-u{i}") for i in range(max(len(v) for v in votes.values()))]
    items = {}
    for key, values in votes.items():
        item = services.item_create(project=project, payload={"title": f"제목 {key}"}, external_id=key)
        items[key] = item
        for user, value in zip(users, values, strict=False):
            Annotation.objects.create(item=item, annotator=user, stage="label", payload={"label": value})
    return project, users, items


@pytest.mark.django_db
def test_gold_compute_applies_the_rule_and_keeps_adjudications(make_project, make_user):
    project, _users, items = _project_with_votes(make_project, make_user, {
        "a": ["사회", "사회", "경제"], "b": ["사회", "경제", "정치"], "c": ["정치"]}, slug="gold-tc")
    manager = project.created_by
    assert gold_compute(project) == {"resolved": 1, "needs_adjudication": 1, "incomplete": 1}
    gold_b = GoldLabel.objects.get(item=items["b"])
    adjudicate(item=items["b"], by=manager, reason="제목이 경제 정책을 다룬다", payload={"label": "경제"},
               base_version=gold_b.version)
    assert gold_compute(project) == {"resolved": 1, "adjudicated": 1, "incomplete": 1}
    result = {item.external_id: (payload, status) for item, payload, status in gold_labels(project)}
    assert result == {"a": ({"label": "사회"}, "resolved"), "b": ({"label": "경제"}, "adjudicated"),
                      "c": (None, "incomplete")}
    decision = Adjudication.objects.get(item=items["b"])
    assert decision.decided_by == manager and decision.previous_status == "needs_adjudication"
    assert decision.reason == "제목이 경제 정책을 다룬다"


@pytest.mark.django_db
def test_adjudicating_by_accepting_an_annotation_and_validation_errors(make_project, make_user):
    project, users, items = _project_with_votes(make_project, make_user, {"a": ["사회", "경제", "정치"]},
                                                slug="gold-acc")
    manager = project.created_by
    accepted = Annotation.objects.get(item=items["a"], annotator=users[2])
    gold = adjudicate(item=items["a"], by=manager, reason="정치 기사", annotation=accepted)
    assert gold.payload == {"label": "정치"} and gold.detail["accepted_annotation"] == accepted.pk
    with pytest.raises(ServiceError, match="reason"):
        adjudicate(item=items["a"], by=manager, reason="  ", payload={"label": "사회"}, base_version=gold.version)
    with pytest.raises(ServiceError) as error:
        adjudicate(item=items["a"], by=manager, reason="x", payload={"label": "날씨"}, base_version=gold.version)
    assert error.value.field == "payload.label"


@pytest.mark.django_db
def test_second_manager_with_a_stale_view_gets_a_conflict(make_project, make_user):
    project, _users, items = _project_with_votes(make_project, make_user, {"a": ["사회", "경제", "정치"]},
                                                slug="gold-stale")
    first, second = project.created_by, make_user("second-manager")
    seen = gold_for_item(items["a"]).version
    adjudicate(item=items["a"], by=first, reason="먼저", payload={"label": "사회"}, base_version=seen)
    with pytest.raises(ServiceError) as error:
        adjudicate(item=items["a"], by=second, reason="나중", payload={"label": "경제"}, base_version=seen)
    assert error.value.code == "conflict"
    with pytest.raises(ServiceError) as again:
        adjudicate(item=items["a"], by=second, reason="버전 없이", payload={"label": "경제"})
    assert again.value.code == "conflict"
    assert GoldLabel.objects.get(item=items["a"]).payload == {"label": "사회"}
    assert Adjudication.objects.filter(item=items["a"]).count() == 1


@pytest.mark.django_db(transaction=True)
def test_two_managers_adjudicating_at_once_one_wins(make_project, make_user):
    if connection.vendor != "postgresql":
        pytest.skip("real row locks need PostgreSQL")
    project, _users, items = _project_with_votes(make_project, make_user, {"a": ["사회", "경제", "정치"]},
                                                slug="gold-race")
    managers = [project.created_by, make_user("race-manager")]
    version = gold_for_item(items["a"]).version
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def decide(manager, label: str) -> None:
        try:
            barrier.wait()
            adjudicate(item=items["a"], by=manager, reason=f"{label} 선택", payload={"label": label},
                       base_version=version)
            outcomes.append("won")
        except ServiceError as error:
            outcomes.append(error.code)
        finally:
            connection.close()

    threads = [threading.Thread(target=decide, args=(m, label)) for m, label in zip(managers, ["사회", "경제"],
                                                                                      strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["conflict", "won"]
    assert Adjudication.objects.filter(item=items["a"]).count() == 1


@pytest.mark.django_db
def test_dawid_skene_as_the_projects_rule(make_project, make_user):
    votes = {f"i{n}": ["사회", "사회", "경제"] if n % 2 else ["경제", "경제", "경제"] for n in range(20)}
    project, _users, items = _project_with_votes(make_project, make_user, votes, slug="gold-ds")
    project.options = {"gold_rule": "dawid_skene"}
    project.save()
    statuses = gold_compute(project)
    assert statuses == {"resolved": 20}
    gold = GoldLabel.objects.get(item=items["i1"])
    assert gold.rule == "dawid_skene" and "posterior" in gold.detail


@pytest.mark.django_db
def test_gold_check_items_are_scored_per_annotator(make_project, make_user):
    import io
    import json

    from django.core.management import call_command

    project, _users, items = _project_with_votes(make_project, make_user, {
        f"g{n}": ["사회", "사회" if n < 4 else "경제", "경제"] for n in range(6)}, slug="gold-check")
    for n in range(6):
        gold_check_set(item=items[f"g{n}"], payload={"label": "사회"}, by=project.created_by)
    assert all(i.is_gold_check for i in project.items.all())
    out = io.StringIO()
    call_command("agreement", project.slug, "--json", stdout=out)
    quality = {q["username"]: q for q in json.loads(out.getvalue())["annotator_quality"]}
    assert quality["gold-check-u0"]["gold_checks"] == {"items": 6, "accuracy": 1.0}
    assert quality["gold-check-u1"]["gold_checks"]["accuracy"] == pytest.approx(4 / 6)
    assert quality["gold-check-u2"]["gold_checks"]["accuracy"] == 0.0
    assert "low_gold_accuracy" in quality["gold-check-u2"]["flags"]
    assert gold_compute(project) == {"known": 6}  # known answers are never replaced by the rule


# -- real data ---------------------------------------------------------------------------------------------------


@pytest.mark.klue
@pytest.mark.django_db
def test_nli_gold_rule_reproduces_klue_gold_labels(klue_dir):
    project, records = load_nli(klue_dir, "klue-nli-gold")
    expected = {}
    for record in records:
        votes = [record[v] for v in ("author", "label2", "label3", "label4", "label5")]
        top = max(set(votes), key=votes.count)
        if votes.count(top) >= 3:
            expected[record["guid"]] = record["gold_label"]
    assert len(expected) == 3000
    gold_compute(project)
    got = {item.external_id: (payload, status) for item, payload, status in gold_labels(project)}
    mismatches = [g for g, label in expected.items() if got[g] != ({"label": label}, "resolved")]
    assert not mismatches, mismatches[:5]


@pytest.mark.klue
@pytest.mark.django_db
def test_sts_gold_rule_reproduces_klue_labels(klue_dir):
    project, records = load_sts(klue_dir, "klue-sts-gold", limit=200)
    Project.objects.filter(pk=project.pk).update(annotators_per_item=5)  # items have 5–7 scores
    project.refresh_from_db()
    gold_compute(project)
    got = {item.external_id: payload for item, payload, status in gold_labels(project)}
    for record in records:
        gold = got[record["guid"]]
        assert gold["real_label"] == pytest.approx(record["labels"]["real-label"])
        assert gold["label"] == pytest.approx(record["labels"]["label"])
        assert gold["binary_label"] == record["labels"]["binary-label"]


def test_a_gold_status_outside_deciding_gold_excludes_as_no_gold_row_does():
    """Releases stream only the gold rows of ``DECIDING_GOLD``: every other status must rule as no row."""
    from itertools import product

    from annotation.gold.selectors import DECIDING_GOLD, release_exclusion
    from annotation.models import GoldStatus, ScreeningStatus

    others = [status for status in GoldStatus.values if status not in DECIDING_GOLD]
    assert others  # incomplete and excluded
    for screening, flag, has_annotations, corpus_only, table in product(
            ScreeningStatus.values, *[(False, True)] * 4):
        ruled = {release_exclusion(screening_status=screening, open_flag=flag, gold_status=status,
                                   has_annotations=has_annotations, corpus_only=corpus_only, gold_table=table)
                 for status in [None, *others]}
        assert len(ruled) == 1, (screening, flag, has_annotations, corpus_only, table, ruled)
