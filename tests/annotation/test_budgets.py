"""Annotation budgets: k by split and by subset (a seeded sample, a source, a corpus label), items assigned to chosen
annotators, and what changing a budget after annotation started does. The queue's take (SQL on the maintained
slots) and ``eligible_items`` (the ORM) read the same k; ``test_queue_sql.py`` holds them equal on random projects.
PostgreSQL under concurrent annotators: ``test_budgets_concurrency.py``."""

from __future__ import annotations

from collections import Counter

import pytest

from annotation import services
from annotation.budget import budget_of, item_k
from annotation.models import Annotation, AuditEvent, Item, ItemAssignee, QueueSlot, Source, User
from annotation.selectors import eligible_items
from tests.annotation.concurrency import in_sample

pytestmark = pytest.mark.django_db

SPLIT_BUDGET = {"splits": {"train": 1, "dev": 3, "test": 3}}


def k_of(budget, item: Item, source_name: str | None, labels: frozenset[str]) -> int:
    """An item's k by the rules as docs/settings.md states them: the first matching rule, its split, the default."""
    for rule in budget.rules:
        if (rule.split is None or rule.split == item.split) and (rule.source is None or rule.source == source_name) \
                and (rule.sample is None or in_sample(item.pk, rule.sample, rule.seed)) \
                and (rule.label is None or rule.label in labels):
            return rule.k
    return budget.splits.get(item.split, budget.default)


def items(project, splits: list[str], source: Source | None = None) -> list[Item]:
    return [services.item_create(project=project, payload={"title": f"예산 시험 기사 {i} {split}"},
                                 external_id=f"b-{source.pk if source else 0}-{i}", split=split, source=source)
            for i, split in enumerate(splits)]


def work_through(project, users) -> Counter[int]:
    """Every annotator takes and submits until the queue has nothing left for anyone; annotations per item."""
    progress = True
    while progress:
        progress = False
        for user in users:
            assignment = services.assignment_next(project=project, user=user)
            if assignment is not None:
                services.annotation_submit(project=project, user=user, item_id=assignment.item_id,
                                           payload={"label": "사회"})
                progress = True
    return Counter(Annotation.objects.filter(item__project=project).values_list("item_id", flat=True))


def set_budget(project, budget, k=None):
    changes = {"options": {**project.options, "budget": budget}}
    if k is not None:
        changes["annotators_per_item"] = k
    return services.project_update(project=project, changes=changes, by=None)


def test_each_split_gets_its_k_and_items_without_a_split_the_projects(make_project, annotator_in) -> None:
    project = make_project("tc", k=2)
    made = items(project, ["train", "train", "dev", "test", ""])
    set_budget(project, SPLIT_BUDGET)
    users = [annotator_in(project) for _ in range(4)]
    done = work_through(project, users)
    assert [done[item.pk] for item in made] == [1, 1, 3, 3, 2]
    assert all(eligible_items(project, user, "label").count() == 0 for user in users)


def test_a_seeded_sample_of_train_gets_more_annotators(make_project, annotator_in) -> None:
    project = make_project("tc", k=3)
    made = items(project, ["train"] * 40 + ["dev"] * 4)
    rule = {"k": 2, "split": "train", "sample": 0.25, "seed": 13}
    set_budget(project, {**SPLIT_BUDGET, "rules": [rule]})
    sampled = [item.pk for item in made[:40] if in_sample(item.pk, 0.25, 13)]
    assert 4 <= len(sampled) <= 16  # a quarter of 40, give or take the hash
    users = [annotator_in(project) for _ in range(3)]
    done = work_through(project, users)
    assert {item.pk: done[item.pk] for item in made[:40]} == {
        item.pk: 2 if item.pk in sampled else 1 for item in made[:40]}
    assert all(done[item.pk] == 3 for item in made[40:])
    # another seed draws another sample
    assert sampled != [item.pk for item in made[:40] if in_sample(item.pk, 0.25, 14)]


def test_the_sql_budget_and_the_python_one_agree(make_project) -> None:
    """k by rules on split, sample, source and a corpus label: the expression every reader uses equals ``k_of``."""
    project = make_project("tc", k=3)
    news = Source.objects.create(project=project, name="news", license="CC-BY-4.0")
    made = items(project, ["train", "dev", "", "test"] * 10) + items(project, ["train", "dev"] * 5, source=news)
    rater = User.objects.create(username="corpus-r1", is_imported=True)
    for item in made[::3]:
        Annotation.objects.create(item=item, annotator=rater, stage="label", payload={"label": "정치"}, imported=True)
    budget = {"splits": {"train": 1, "dev": 5}, "rules": [
        {"k": 4, "label": "정치", "split": "dev"}, {"k": 2, "source": "news"},
        {"k": 6, "split": "train", "sample": 0.3, "seed": 7}]}
    set_budget(project, budget)
    b = budget_of(project)
    sql = dict(Item.objects.filter(project=project).annotate(k=item_k(b)).values_list("pk", "k"))
    labelled = set(Annotation.objects.filter(item__project=project, imported=True).values_list("item_id", flat=True))
    python = {item.pk: k_of(b, item, item.source.name if item.source else None,
                            frozenset({"정치"}) if item.pk in labelled else frozenset()) for item in made}
    assert sql == python
    assert set(sql.values()) == {1, 2, 3, 4, 5, 6}


def test_raising_a_k_reopens_items_and_lowering_one_deletes_nothing(make_project, annotator_in) -> None:
    project = make_project("tc", k=1)
    made = items(project, ["dev", "dev", "train"])
    users = [annotator_in(project) for _ in range(3)]
    assert sum(work_through(project, users).values()) == 3
    set_budget(project, {"splits": {"dev": 3}})
    assert set(QueueSlot.objects.filter(project=project).values_list("item_id", "needed")) == {
        (made[0].pk, 3), (made[1].pk, 3), (made[2].pk, 1)}
    done = work_through(project, users)
    assert [done[item.pk] for item in made] == [3, 3, 1]
    set_budget(project, {"splits": {"dev": 2}})
    assert Annotation.objects.filter(item__project=project).count() == 7  # nothing deleted
    assert services.assignment_next(project=project, user=users[0]) is None  # complete under the lower k too


def test_a_new_split_from_a_release_moves_the_items_k(make_project, annotator_in) -> None:
    """Splits a ratio release copies onto the items change their k (``release_splits_apply``); here the admin's
    item change, the same refresh for one item."""
    project = make_project("tc", k=2)
    (item,) = items(project, [""])
    set_budget(project, {"splits": {"train": 1}})
    annotator_in(project)
    services.queue_slots_ensure(project, "label")
    assert QueueSlot.objects.get(item=item).needed == 2
    services.item_update(item=item, payload=item.payload, external_id=item.external_id, meta=item.meta,
                         group_key=item.group_key, split="train", source=None)
    assert QueueSlot.objects.get(item=item).needed == 1


def test_assigned_items_go_to_their_annotators_alone(make_project, annotator_in) -> None:
    project = make_project("tc", k=2)
    made = items(project, ["dev"] * 4)
    alice, bob, carol = (annotator_in(project) for _ in range(3))
    chosen = services.items_chosen(project, item_ids=[made[0].pk, made[1].pk])
    assert services.items_assign(project=project, items=chosen, annotators=[alice.username, bob.username],
                                 by=None) == 2
    done = Counter()
    for item_id in (a.item_id for a in _takes(project, carol)):
        done[item_id] += 1
    assert set(done) == {made[2].pk, made[3].pk}  # carol never gets the assigned ones
    got = {a.item_id for user in (alice, bob) for a in _takes(project, user)}
    assert {made[0].pk, made[1].pk} <= got
    assert Counter(Annotation.objects.filter(item__project=project).values_list("item_id", flat=True)) == {
        item.pk: 2 for item in made}
    event = AuditEvent.objects.filter(project=project, object_type="assignees").get()
    assert event.after["annotators"] == sorted([alice.username, bob.username]) and event.after["items"] == 2


def _takes(project, user):
    taken = []
    while (assignment := services.assignment_next(project=project, user=user)) is not None:
        services.annotation_submit(project=project, user=user, item_id=assignment.item_id, payload={"label": "사회"})
        taken.append(assignment)
    return taken


def test_assigning_fewer_annotators_than_k_or_raising_k_past_them_is_refused(make_project, annotator_in) -> None:
    project = make_project("tc", k=2)
    made = items(project, ["dev", "train"])
    alice, bob, _carol = (annotator_in(project) for _ in range(3))
    with pytest.raises(services.ServiceError) as refused:
        services.items_assign(project=project, items=services.items_chosen(project, item_ids=[made[0].pk]),
                              annotators=[alice.username], by=None)
    assert refused.value.field == "annotators" and "at least 2" in str(refused.value)
    services.items_assign(project=project, items=services.items_chosen(project, where={"split": "dev"}),
                          annotators=[alice.username, bob.username], by=None)
    with pytest.raises(services.ServiceError) as refused:
        set_budget(project, {"splits": {"dev": 3}})
    assert refused.value.field == "options.budget" and refused.value.code == "conflict"
    project.refresh_from_db()
    assert "budget" not in project.options
    with pytest.raises(services.ServiceError) as refused:
        services.items_assign(project=project, items=services.items_chosen(project, item_ids=[made[0].pk]),
                              annotators=["nobody"], by=None)
    assert refused.value.field == "annotators"


@pytest.mark.parametrize(("budget", "field"), [
    ({"splits": {"train": 0}}, "options.budget.splits.train"),
    ({"splits": {"validation": 2}}, "options.budget.splits.validation"),
    ({"rules": [{"k": 2}]}, "options.budget.rules[0]"),
    ({"rules": [{"k": 2, "sample": 1.5}]}, "options.budget.rules[0].sample"),
    ({"rules": [{"k": 2, "split": "dev", "seed": 3}]}, "options.budget.rules[0].seed"),
    ({"rules": [{"k": 2, "source": "nowhere"}]}, "options.budget.rules[0].source"),
    ({"rules": [{"k": 2, "label": "not-a-topic"}]}, "options.budget.rules[0].label"),
    ({"rules": [{"k": 99, "split": "dev"}]}, "options.budget.rules[0].k"),
    ([1, 2], "options.budget"),
])
def test_a_bad_budget_is_refused_by_field_and_changes_nothing(make_project, budget, field) -> None:
    project = make_project("tc", k=2)
    items(project, ["dev"])
    with pytest.raises(services.ServiceError) as refused:
        set_budget(project, budget)
    assert refused.value.field == field
    project.refresh_from_db()
    assert "budget" not in project.options


def test_the_api_patches_the_budget_audits_it_and_reports_items_by_k(make_project, api, annotator_in) -> None:
    project = make_project("tc", k=2)
    items(project, ["train", "train", "dev", ""])
    manager = project.created_by
    services.membership_set(project=project, user=manager, role="manager")
    client = api(manager)
    bad = client.patch(f"/api/projects/{project.pk}/", {"options": {"budget": {"splits": {"train": 0}}}},
                       format="json")
    assert bad.status_code == 400, bad.content
    assert "options.budget.splits.train" in bad.content.decode()
    good = client.patch(f"/api/projects/{project.pk}/", {"options": {"budget": SPLIT_BUDGET}}, format="json")
    assert good.status_code == 200, good.content
    event = AuditEvent.objects.filter(project=project, object_type="project").latest("at")
    assert event.after["options"]["budget"] == SPLIT_BUDGET and event.before["options"].get("budget") is None
    summary = client.get(f"/api/projects/{project.pk}/budget/").json()
    assert summary["items_by_k"] == {"1": 2, "2": 1, "3": 1} and summary["splits"] == SPLIT_BUDGET["splits"]
    alice, bob, carol = (annotator_in(project) for _ in range(3))
    assigned = client.post(f"/api/projects/{project.pk}/budget/",
                           {"where": {"split": "dev"}, "annotators": [alice.username, bob.username, carol.username]},
                           format="json")
    assert assigned.status_code == 200 and assigned.json()["items"] == 1, assigned.content
    refused = client.post(f"/api/projects/{project.pk}/budget/",
                          {"where": {"split": "dev"}, "annotators": [alice.username]}, format="json")
    assert refused.status_code == 400 and refused.json()["field"] == "annotators"
    assert client.post(f"/api/projects/{project.pk}/budget/", {"where": {"sample": 2}, "annotators": []},
                       format="json").json()["field"] == "where.sample"
    summary = client.get(f"/api/projects/{project.pk}/budget/").json()
    assert {row["annotator"]: row["items"] for row in summary["assignees"]} == {
        alice.username: 1, bob.username: 1, carol.username: 1}
    assert api(alice).get(f"/api/projects/{project.pk}/budget/").status_code == 403


def test_the_settings_page_sets_a_budget_and_shows_errors_by_field(make_project, client) -> None:
    from tests.annotation.settings_form import manager_of, posted, settings_url

    project = make_project("tc", k=2)
    news = Source.objects.create(project=project, name="news", license="CC-BY-4.0")
    items(project, ["train"] * 3 + ["dev"], source=news)
    client.force_login(manager_of(project))
    response = client.post(settings_url(project), posted(
        project, budget_train="1", budget_dev="5", rule_0_k="3", rule_0_split="train", rule_0_sample="5",
        rule_0_seed="13"))
    assert response.status_code == 302, response.content.decode()[:2000]
    project.refresh_from_db()
    assert project.options["budget"] == {"splits": {"train": 1, "dev": 5},
                                         "rules": [{"k": 3, "split": "train", "sample": 0.05, "seed": 13}]}
    page = client.get(settings_url(project)).content.decode()
    assert 'name="rule_1_k"' in page and 'value="13"' in page  # the stored rule, then an empty row
    response = client.post(settings_url(project), posted(project, rule_1_k="4", rule_1_source="news"))
    assert response.status_code == 302
    project.refresh_from_db()
    assert project.options["budget"]["rules"][1] == {"k": 4, "source": "news"}
    # a rule without a condition, a seed without a sample, and a k the budget refuses: errors by field
    response = client.post(settings_url(project), posted(project, rule_2_k="2", rule_1_seed="3", budget_test="0"))
    assert response.status_code == 200
    form = response.context["form"]
    assert set(form.errors) >= {"rule_2_k", "budget_test"}
    project.refresh_from_db()
    assert len(project.options["budget"]["rules"]) == 2
    # the service's own refusal lands on its field (a seed past 2^32 - 1)
    response = client.post(settings_url(project), posted(project, rule_0_seed=str(2 ** 32)))
    assert response.status_code == 200 and list(response.context["form"].errors) == ["rule_0_seed"]
    # a row without its number is no rule any more
    response = client.post(settings_url(project), posted(project, rule_0_k="", rule_1_k=""))
    assert response.status_code == 302
    project.refresh_from_db()
    assert project.options["budget"] == {"splits": {"train": 1, "dev": 5}}


def test_a_release_records_the_k_each_item_had(make_project, annotator_in, tmp_path) -> None:
    import csv
    import json

    from exports.services import release_build

    project = make_project("tc", k=2)
    made = items(project, ["train"] * 12 + ["dev"] * 4)
    set_budget(project, {"splits": {"train": 1, "dev": 3}})
    users = [annotator_in(project) for _ in range(3)]
    work_through(project, users)
    release = release_build(project, version="1.0.0", keep_splits=True, formats="jsonl", out=tmp_path)
    folder = tmp_path / f"{project.slug}-1.0.0"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["annotators"]["budget"]["items_by_k"] == {"train": {"1": 12}, "dev": {"3": 4}}
    assert manifest["annotators"]["budget"]["splits"] == {"train": 1, "dev": 3}
    with open(folder / "annotators_per_item.csv", encoding="utf-8") as rows:
        listed = {row["guid"]: (row["split"], int(row["k"])) for row in csv.DictReader(rows)}
    assert listed == {item.external_id: (item.split, 1 if item.split == "train" else 3) for item in made}
    assert "annotators_per_item.csv" in (folder / "SHA256SUMS").read_text()
    assert "each with its own k" in (folder / "README.md").read_text()
    assert release.annotators["complete"]["label"]["items"] == 16


def test_gold_waits_for_each_items_own_k(make_project, annotator_in) -> None:
    from annotation.gold.services import gold_compute
    from annotation.models import GoldLabel, GoldStatus

    project = make_project("tc", k=2)
    train, dev = items(project, ["train", "dev"])
    set_budget(project, {"splits": {"train": 1, "dev": 3}})
    alice = annotator_in(project)
    for item in (train, dev):
        services.assignment_next(project=project, user=alice)
        services.annotation_submit(project=project, user=alice, item_id=item.pk, payload={"label": "사회"})
    gold_compute(project)
    status = dict(GoldLabel.objects.filter(item__project=project).values_list("item_id", "status"))
    assert status == {train.pk: GoldStatus.RESOLVED, dev.pk: GoldStatus.INCOMPLETE}
    # lowering dev to 1 completes it without another annotation; raising train to 2 reopens it
    set_budget(project, {"splits": {"train": 2, "dev": 1}})
    gold_compute(project, when_stale=True)
    status = dict(GoldLabel.objects.filter(item__project=project).values_list("item_id", "status"))
    assert status == {train.pk: GoldStatus.INCOMPLETE, dev.pk: GoldStatus.RESOLVED}


def test_the_agreement_dashboard_says_which_items_count(make_project, annotator_in, client,
                                                       django_capture_on_commit_callbacks) -> None:
    from django.urls import reverse

    project = make_project("tc", k=2)
    items(project, ["train"] * 4 + ["dev"] * 3)
    set_budget(project, {"splits": {"train": 1, "dev": 2}})
    work_through(project, [annotator_in(project) for _ in range(2)])
    manager = project.created_by
    services.membership_set(project=project, user=manager, role="manager")
    client.force_login(manager)
    url = reverse("annotation:review-dashboard", args=[project.pk])
    with django_capture_on_commit_callbacks(execute=True):  # the report's job, eager
        client.get(url)
    english = client.get(url, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "3 of 7 items counted: those that had two or more annotators" in english
    assert "items with one cannot count" in english
    korean = client.get(url, HTTP_ACCEPT_LANGUAGE="ko").content.decode()
    assert "항목 7개 중 3개 집계: 주석자가 두 명 이상이었던 항목" in korean


def test_the_settings_page_assigns_items_to_chosen_annotators(make_project, annotator_in, client) -> None:
    from django.urls import reverse

    project = make_project("tc", k=2)
    made = items(project, ["dev", "dev", "train"])
    alice, bob, carol = (annotator_in(project) for _ in range(3))
    client.force_login(project.memberships.get(role="manager").user)
    url = reverse("annotation:project-items-assign", args=[project.pk])
    response = client.post(url, {"assign-split": "dev", "assign-annotators": [alice.username, bob.username]})
    assert response.status_code == 302
    assert set(ItemAssignee.objects.values_list("item_id", "annotator_id")) == {
        (item.pk, user.pk) for item in made[:2] for user in (alice, bob)}
    # too few for k = 2: the error sits on the annotators, nothing changes
    response = client.post(url, {"assign-split": "train", "assign-annotators": [carol.username]},
                           HTTP_ACCEPT_LANGUAGE="ko")
    assert response.status_code == 200
    assert "annotators" in response.context["assign"].errors
    assert "2명 이상을 고르세요" in response.content.decode()
    assert not ItemAssignee.objects.filter(item=made[2]).exists()
    # no condition at all is refused before the service
    response = client.post(url, {"assign-annotators": [carol.username]})
    assert response.status_code == 200 and response.context["assign"].non_field_errors()
    # nobody ticked opens the dev items again
    assert client.post(url, {"assign-split": "dev"}).status_code == 302
    assert not ItemAssignee.objects.exists()
    assert client.get(reverse("annotation:project-settings", args=[project.pk])).status_code == 200
    client.force_login(alice)
    assert client.post(url, {"assign-split": "dev"}).status_code == 403
