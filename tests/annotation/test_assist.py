"""Model-assisted annotation: suggestions with next/, the fraction control, gold items, and what submit records."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation import assist, services
from annotation.assist import SuggestionRow
from annotation.gold.services import gold_check_set
from annotation.models import Annotation, Assignment, Suggestion, SuggestionArm
from exports.models import Release

pytestmark = pytest.mark.django_db

NER_SENTENCE = "김철수는 서울에서 삼성전자에 다닌다."
NER_SUGGESTION = {"entities": [{"start": 0, "end": 3, "type": "PS"}, {"start": 5, "end": 7, "type": "LC"},
                               {"start": 10, "end": 14, "type": "OG"}]}


def tc_project(make_project, n: int = 6, k: int = 1):
    project = make_project("tc", k=k)
    items = [services.item_create(project=project, payload={"title": f"뉴스 제목 {i}번"}, external_id=f"t-{i}")
             for i in range(n)]
    return project, items


def suggest(project, items, payload, *, version: str = "test-1", confidence: float = 0.8) -> dict:
    stage = project.task.suggestion_stages[0]
    return services.suggestions_replace(
        project=project, model_version=version, source="upload",
        rows=[SuggestionRow(item.pk, stage, payload, confidence, 1 - confidence) for item in items])


def next_url(project) -> str:
    return reverse("api:next-item", args=[project.pk])


def annotations_url(project) -> str:
    return reverse("api:annotation-list", args=[project.pk])


def test_next_returns_the_suggestion_when_shown(api, make_project, annotator_in):
    project, items = tc_project(make_project)
    suggest(project, items, {"label": "경제"})
    services.assist_settings_update(project=project, show=True, fraction=1.0)
    annotator = annotator_in(project)
    body = api(annotator).get(next_url(project)).json()
    assert body["suggestion"]["payload"] == {"label": "경제", "second": None, "third": None}
    assert body["suggestion"]["confidence"] == pytest.approx(0.8)
    assert body["suggestion"]["model"] == "test-1"
    assignment = Assignment.objects.get(pk=body["assignment"])
    assert assignment.suggestion_arm == SuggestionArm.ASSISTED and assignment.suggestion is not None
    # Reloading shows the same suggestion (the decision is stored on the assignment).
    again = api(annotator).get(next_url(project)).json()
    assert again["assignment"] == body["assignment"] and again["suggestion"] == body["suggestion"]


def test_no_suggestion_when_the_project_does_not_show_them(api, make_project, annotator_in):
    project, items = tc_project(make_project)
    suggest(project, items, {"label": "경제"})
    body = api(annotator_in(project)).get(next_url(project)).json()
    assert body["suggestion"] is None
    assert Assignment.objects.get(pk=body["assignment"]).suggestion_arm == SuggestionArm.NONE


def test_no_suggestion_for_items_without_one(api, make_project, annotator_in):
    project, _ = tc_project(make_project, n=2)
    services.assist_settings_update(project=project, show=True, fraction=1.0)
    body = api(annotator_in(project)).get(next_url(project)).json()
    assert body["suggestion"] is None


@pytest.mark.parametrize(("fraction", "low", "high"), [(0.0, 0, 0), (0.5, 25, 55), (1.0, 80, 80)])
def test_fraction_of_assignments_with_a_suggestion(api, make_project, annotator_in, fraction, low, high):
    project, items = tc_project(make_project, n=80)
    suggest(project, items, {"label": "경제"})
    services.assist_settings_update(project=project, show=True, fraction=fraction)
    annotator = annotator_in(project)
    client = api(annotator)
    shown = 0
    for _ in items:
        body = client.get(next_url(project)).json()
        shown += body["suggestion"] is not None
        assert client.post(annotations_url(project), {"item": body["item"]["id"], "payload": {"label": "사회"}},
                           format="json").status_code == 201
    assert low <= shown <= high
    arms = Assignment.objects.filter(item__project=project).values_list("suggestion_arm", flat=True)
    assert sum(a == SuggestionArm.ASSISTED for a in arms) == shown
    assert sum(a == SuggestionArm.CONTROL for a in arms) == 80 - shown
    assert Annotation.objects.filter(item__project=project, suggestion_shown=True).count() == shown


def test_the_draw_is_deterministic_per_assignment_and_seed():
    draws = [assist.in_assisted_share(i, 7, 0.5) for i in range(2000)]
    assert draws == [assist.in_assisted_share(i, 7, 0.5) for i in range(2000)]
    assert 900 < sum(draws) < 1100
    assert draws != [assist.in_assisted_share(i, 8, 0.5) for i in range(2000)]


def test_never_on_gold_or_attention_items(api, make_project, annotator_in):
    project, items = tc_project(make_project, n=4)
    gold_check_set(item=items[0], payload={"label": "사회"}, by=project.created_by)
    items[1].is_gold_check = True
    items[1].save()
    result = suggest(project, items, {"label": "경제"})
    assert result["stored"] == 2 and result["skipped_gold"] == 2
    # Even a suggestion stored before the item became a gold item is not shown.
    suggest(project, items[2:], {"label": "경제"}, version="test-2")
    gold_check_set(item=items[2], payload={"label": "사회"}, by=project.created_by)
    services.assist_settings_update(project=project, show=True, fraction=1.0)
    client = api(annotator_in(project))
    seen = {}
    for _ in range(4):
        body = client.get(next_url(project)).json()
        seen[body["item"]["id"]] = body["suggestion"]
        client.post(annotations_url(project), {"item": body["item"]["id"], "payload": {"label": "사회"}},
                    format="json")
    assert seen[items[0].pk] is None and seen[items[1].pk] is None and seen[items[2].pk] is None
    assert seen[items[3].pk] is not None


def test_no_suggestion_in_a_writing_stage(api, make_project, annotator_in):
    project = make_project("nli", k=1)
    item = services.item_create(project=project, payload={"premise": "비가 온다."})
    result = services.suggestions_replace(project=project, model_version="v", source="upload", rows=[
        SuggestionRow(item.pk, "writing", {"hypothesis": "맑다.", "label": "contradiction"})])
    assert result["stored"] == 0 and result["skipped_stage"] == 1


def test_submit_records_shown_and_accepted(api, make_project, annotator_in):
    project, items = tc_project(make_project, n=2)
    suggest(project, items, {"label": "경제"})
    services.assist_settings_update(project=project, show=True, fraction=1.0)
    client = api(annotator_in(project))
    first = client.get(next_url(project)).json()
    response = client.post(annotations_url(project), {"item": first["item"]["id"],
                                                      "payload": first["suggestion"]["payload"]}, format="json")
    assert response.status_code == 201
    assert response.json()["suggestion_shown"] is True and response.json()["suggestion_accepted"] is True
    second = client.get(next_url(project)).json()
    client.post(annotations_url(project), {"item": second["item"]["id"], "payload": {"label": "사회"}},
                format="json")
    changed = Annotation.objects.get(item_id=second["item"]["id"])
    assert changed.suggestion_shown and changed.suggestion_accepted is False
    assert changed.suggestion_parts["changed"] == 1
    assert changed.suggestion_id == Assignment.objects.get(pk=second["assignment"]).suggestion_id


def test_submit_cannot_claim_a_suggestion_the_server_did_not_show(api, make_project, annotator_in):
    project, items = tc_project(make_project, n=1)
    suggest(project, items, {"label": "경제"})
    client = api(annotator_in(project))  # suggestions are off
    body = client.get(next_url(project)).json()
    client.post(annotations_url(project), {"item": body["item"]["id"], "payload": {"label": "경제"},
                                           "suggestion_shown": True, "suggestion_accepted": True}, format="json")
    annotation = Annotation.objects.get(item_id=body["item"]["id"])
    assert annotation.suggestion_shown is False and annotation.suggestion_accepted is None


def test_ner_parts_accepted_and_changed(api, make_project, annotator_in):
    project = make_project("ner", k=1)
    item = services.item_create(project=project, payload={"sentence": NER_SENTENCE})
    suggest(project, [item], NER_SUGGESTION)
    services.assist_settings_update(project=project, show=True)
    client = api(annotator_in(project))
    body = client.get(next_url(project)).json()
    assert body["suggestion"]["payload"] == NER_SUGGESTION
    edited = {"entities": [{"start": 0, "end": 3, "type": "PS"}, {"start": 5, "end": 7, "type": "OG"},
                           {"start": 15, "end": 17, "type": "QT"}]}
    assert client.post(annotations_url(project), {"item": item.pk, "payload": edited},
                       format="json").status_code == 201
    parts = Annotation.objects.get(item=item).suggestion_parts
    assert parts["unit"] == "entity" and (parts["accepted"], parts["changed"], parts["added"]) == (1, 2, 1)
    statuses = [(p["start"], p["status"], p.get("how")) for p in parts["parts"]]
    assert statuses == [(0, "accepted", None), (5, "changed", "type"), (10, "changed", "removed"),
                        (15, "added", None)]


def test_dp_parts_per_arc(api, make_project, annotator_in):
    project = make_project("dp", k=1)
    tokens = [{"index": i + 1, "form": f, "lemma": f, "pos": "NNG"} for i, f in enumerate(["나는", "밥을", "먹었다."])]
    item = services.item_create(project=project, payload={"sentence": "나는 밥을 먹었다.", "tokens": tokens})
    suggestion = {"heads": [3, 3, 0], "deprels": ["NP_SBJ", "NP_OBJ", "VP"]}
    suggest(project, [item], suggestion)
    services.assist_settings_update(project=project, show=True)
    client = api(annotator_in(project))
    client.get(next_url(project))
    client.post(annotations_url(project), {"item": item.pk, "payload": {"heads": [2, 3, 0],
                                                                          "deprels": ["NP_SBJ", "NP_OBJ", "VP"]}},
                format="json")
    parts = Annotation.objects.get(item=item).suggestion_parts
    assert [(p["token"], p["status"], p.get("how")) for p in parts["parts"]] == [
        (1, "changed", "head"), (2, "accepted", None), (3, "accepted", None)]


def test_invalid_suggestions_are_left_out(make_project):
    project, items = tc_project(make_project, n=2)
    result = services.suggestions_replace(project=project, model_version="v", source="upload", rows=[
        SuggestionRow(items[0].pk, "label", {"label": "없는 주제"}),
        SuggestionRow(items[1].pk, "label", {"label": "경제"})])
    assert result["stored"] == 1 and result["invalid"] == 1 and "없는 주제" in result["errors"][0]


def test_new_version_supersedes_and_keeps_what_was_shown(api, make_project, annotator_in):
    project, items = tc_project(make_project, n=3)
    suggest(project, items, {"label": "경제"}, version="v1")
    services.assist_settings_update(project=project, show=True)
    client = api(annotator_in(project))
    body = client.get(next_url(project)).json()
    suggest(project, items, {"label": "정치"}, version="v2")
    assert Suggestion.objects.filter(item__project=project, is_current=True).count() == 3
    assert set(Suggestion.objects.filter(item__project=project).values_list("model_version", flat=True)) == {"v1", "v2"}
    assert Suggestion.objects.filter(model_version="v1").count() == 1  # only the one shown survives
    # The open assignment keeps showing what it showed first.
    assert client.get(next_url(project)).json()["suggestion"]["model"] == "v1"
    client.post(annotations_url(project), {"item": body["item"]["id"], "payload": {"label": "경제"}}, format="json")
    assert Annotation.objects.get(item_id=body["item"]["id"]).suggestion_accepted is True
    # Writing the same version again is idempotent.
    suggest(project, items, {"label": "정치"}, version="v2")
    assert Suggestion.objects.filter(item__project=project, model_version="v2").count() == 3


def test_settings_are_validated(make_project):
    project, _ = tc_project(make_project, n=1)
    for bad in ({"fraction": 1.5}, {"fraction": "half"}, {"queue_order": "random"}, {"show": "yes"},
                {"retrain_every": -1}, {"colour": "blue"}):
        with pytest.raises(assist.AssistError):
            services.assist_settings_update(project=project, **bad)
    settings = services.assist_settings_update(project=project, fraction=0.5, show=True)
    assert settings.fraction == 0.5 and assist.assist_settings(project).show


# -- the acceptance test: simulated annotators, suggestions on for half of the assignments ---------------------


def test_simulated_annotators_half_assisted_split_alpha_and_record_acceptance(api, make_project, annotator_in):
    """Six simulated annotators, four per item, suggestions on 50 % of assignments. Assisted annotators take
    the suggestion as is 80 % of the time (so they agree with each other through the model); the others
    label on their own with 30 % errors. The report must keep the two apart."""
    import random

    from annotation.agreement.services import report_now
    from annotation.gold.services import gold_compute

    rng = random.Random(5)
    project, items = tc_project(make_project, n=60, k=4)
    labels = project.label_schema["labels"]
    truth = {item.pk: rng.choice(labels) for item in items}
    # The model is right 70 % of the time.
    model = {pk: label if rng.random() < 0.7 else rng.choice([x for x in labels if x != label])
             for pk, label in truth.items()}
    stage = project.task.suggestion_stages[0]
    services.suggestions_replace(project=project, model_version="sim-1", source="upload", rows=[
        SuggestionRow(pk, stage, {"label": label}, 0.7, 0.3) for pk, label in model.items()])
    services.assist_settings_update(project=project, show=True, fraction=0.5)

    def own_label(pk: int) -> str:
        return truth[pk] if rng.random() >= 0.3 else rng.choice([x for x in labels if x != truth[pk]])

    accepted_by_us = shown_to_us = 0
    for n in range(6):
        client = api(annotator_in(project, f"sim{n}"))
        while (response := client.get(next_url(project))).status_code == 200:
            body = response.json()
            pk = body["item"]["id"]
            if body["suggestion"] is not None:
                shown_to_us += 1
                if rng.random() < 0.8:
                    accepted_by_us += 1
                    payload = body["suggestion"]["payload"]
                else:
                    payload = {"label": own_label(pk)}
                    if payload["label"] == body["suggestion"]["payload"]["label"]:
                        accepted_by_us += 1  # their own answer happened to be the suggestion
            else:
                payload = {"label": own_label(pk)}
            assert client.post(annotations_url(project), {"item": pk, "payload": payload},
                               format="json").status_code == 201

    total = Annotation.objects.filter(item__project=project).count()
    assert total == 240
    shown = Annotation.objects.filter(item__project=project, suggestion_shown=True)
    assert shown.count() == shown_to_us and 0.35 < shown_to_us / total < 0.65
    # Acceptance is recorded per annotation, computed by the server.
    assert shown.filter(suggestion_accepted=True).count() == accepted_by_us
    assert not Annotation.objects.filter(item__project=project, suggestion_shown=False,
                                         suggestion_accepted__isnull=False).exists()

    gold_compute(project)
    report = report_now(project)["assist"]
    assert report["assisted_annotations"] == shown_to_us
    assert report["unassisted_annotations"] == total - shown_to_us
    assert report["acceptance_rate"] == pytest.approx(accepted_by_us / shown_to_us)
    assisted, unassisted = report["alpha"]["assisted"], report["alpha"]["unassisted"]
    assert assisted["value"] is not None and unassisted["value"] is not None
    assert assisted["items_with_2"] > 10 and unassisted["items_with_2"] > 10
    assert assisted["ci95"][0] is not None and unassisted["ci95"][0] is not None
    # Anchoring on the suggestion inflates agreement: the split shows it.
    assert assisted["value"] > unassisted["value"]
    assert report["alpha"]["difference"] == pytest.approx(assisted["value"] - unassisted["value"])
    # Accepted suggestions agree with the annotation by definition; changed ones do not.
    agreement = report["model_agreement"]
    assert agreement["accepted"]["with_annotation"] == 1.0 and agreement["changed"]["with_annotation"] == 0.0
    assert agreement["accepted"]["annotations"] + agreement["changed"]["annotations"] == shown_to_us
    assert agreement["accepted"]["gold_items"] > 0 and 0 <= agreement["accepted"]["with_gold"] <= 1

    # The manager's dashboard shows the split next to the headline figures, as a table and a chart.
    from django.test import Client
    from django.urls import reverse

    manager = Client()
    manager.force_login(project.created_by)
    page = manager.get(reverse("annotation:review-dashboard", args=[project.pk])).content.decode()
    assert "Assisted vs unassisted annotations" in page
    assert f"{shown_to_us} annotations were made with a model suggestion on screen, {total - shown_to_us} without" \
        in page
    assert f"{assisted['value']:.4f}" in page and f"{unassisted['value']:.4f}" in page
    assert f"{accepted_by_us} / {shown_to_us}" in page
    assert "of assisted vs unassisted annotations" in page


def test_dashboard_without_assisted_annotations_says_so(api, make_project, annotator_in):
    from django.test import Client
    from django.urls import reverse

    from annotation.agreement.services import report_now

    project, _items = tc_project(make_project, n=3, k=2)
    for n in range(2):
        client = api(annotator_in(project, f"plain{n}"))
        while (response := client.get(next_url(project))).status_code == 200:
            assert response.json()["suggestion"] is None
            client.post(annotations_url(project), {"item": response.json()["item"]["id"],
                                                   "payload": {"label": project.label_schema["labels"][0]}},
                        format="json")
    report_now(project)
    manager = Client()
    manager.force_login(project.created_by)
    page = manager.get(reverse("annotation:review-dashboard", args=[project.pk])).content.decode()
    assert "No annotation was made with a suggestion on screen" in page
    assert "of assisted vs unassisted annotations" not in page


# -- the dataset card states how much of the gold was assisted --------------------------------------------------


def _annotate_all(client, project, accept: set[int]) -> None:
    """Annotate every item the queue hands out: keep the suggestion on ``accept`` items, else answer 사회."""
    while (response := client.get(next_url(project))).status_code == 200:  # 204: nothing left
        body = response.json()
        keep = body["suggestion"] is not None and body["item"]["id"] in accept
        payload = body["suggestion"]["payload"] if keep else {"label": "사회"}
        assert client.post(annotations_url(project), {"item": body["item"]["id"], "payload": payload},
                           format="json").status_code == 201


def _card(project, tmp_path) -> str:
    stdout = StringIO()
    call_command("build_release", project.slug, "--version", "1.0.0", "--format", "jsonl", "--out", str(tmp_path),
                 "--json", stdout=stdout)
    return (Path(json.loads(stdout.getvalue())["out"]) / "README.md").read_text(encoding="utf-8")


def test_dataset_card_states_how_much_of_the_gold_was_assisted(api, make_project, annotator_in, tmp_path):
    project, items = tc_project(make_project, n=8)
    suggest(project, items[:3], {"label": "경제"})  # 3 of the 8 items have a suggestion
    services.assist_settings_update(project=project, show=True, fraction=1.0)
    _annotate_all(api(annotator_in(project)), project, accept={items[0].pk, items[1].pk})
    card = _card(project, tmp_path)
    assert "| released items whose gold came from at least one assisted annotation | 3 | 37.5 % of 8 released items |" \
        in card
    assert "| annotations of the released items shown a suggestion | 3 | 37.5 % of 8 annotations |" in card
    assert "| annotations that accepted the suggestion unchanged | 2 | 25.0 % of the annotations, 66.7 % of those " \
           "shown one |" in card
    assert "No suggestions were shown" not in card and "gold of assisted items leans towards that model" in card
    release = Release.objects.get(project=project)
    assert release.annotators["assisted"] == {"items": 8, "assisted_items": 3, "annotations": 8, "shown": 3,
                                              "accepted_unchanged": 2}


def test_dataset_card_says_when_no_suggestion_was_shown(api, make_project, annotator_in, tmp_path):
    project, items = tc_project(make_project, n=4)
    suggest(project, items, {"label": "경제"})  # stored, but the project does not show them
    _annotate_all(api(annotator_in(project)), project, accept=set())
    card = _card(project, tmp_path)
    assert "No suggestions were shown: every annotation of the released items was made without a model's " \
           "suggestion." in card
    assert "assisted annotation |" not in card
    assert Release.objects.get(project=project).annotators["assisted"]["shown"] == 0
