"""The suggester: the baseline retrained on the project's gold as a Celery job with progress, uploaded
predictions files, retraining every N gold items, the expected effect, and its API."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation import assist, services
from annotation.models import USABLE_GOLD, GoldLabel, GoldStatus, Item, Suggestion
from exports import assist as suggester
from exports import suggester_services as export_services
from exports.baselines.synthetic import synthetic_records
from exports.models import SuggesterRun, SuggesterRunStatus
from tests.conftest import is_postgres

pytestmark = pytest.mark.django_db


@pytest.fixture
def jobs(django_capture_on_commit_callbacks):
    """Run what a request queues after commit (the test's transaction never commits)."""

    def run(call, *args, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            result = call(*args, **kwargs)
        result.refresh_from_db()
        return result

    return run


def seeded_project(make_project, slug: str, *, gold: int, todo: int, seed: int = 3):
    """Items from the synthetic KLUE records of the task: ``gold`` of them with an adjudicated gold label,
    ``todo`` still to annotate."""
    project = make_project(slug, k=2)
    task = project.task
    if slug == "dst":
        ontology: dict[str, set[str]] = {}
    records = synthetic_records(slug, gold + todo, seed)
    stage = task.suggestion_stages[0]
    for n, record in enumerate(records):
        parsed = task.parse_record(record)
        if slug == "dst":
            for state in (parsed.annotations[0].payload["states"] if parsed.annotations else []):
                for entry in state:
                    domain, slot, value = entry.split("-", 2)
                    ontology.setdefault(f"{domain}-{slot}", set()).add(value)
        item = services.item_create(project=project, payload=parsed.payload, external_id=parsed.external_id or
                                    f"r{n}", meta=parsed.meta)
        if n < gold:
            label = next((a.payload for a in parsed.annotations if a.stage == stage), None)
            if label is None:  # a writer's label or answer is the validation answer
                label = {k: v for a in parsed.annotations for k, v in a.payload.items() if k in ("label", "answer")}
            GoldLabel.objects.create(item=item, payload=label, status=GoldStatus.ADJUDICATED, rule="adjudication")
    if slug == "dst":
        schema = dict(project.label_schema)
        schema["ontology"] = {slot: sorted(values) for slot, values in ontology.items()}
        schema["free_value_slots"] = []
        project.label_schema = schema
        project.save()
    return project


def test_retrain_runs_as_a_job_with_progress(jobs, make_project):
    project = seeded_project(make_project, "ner", gold=60, todo=15)
    seen: list[tuple[int, str]] = []
    run = jobs(export_services.suggester_request, project=project, user=project.created_by)
    # Eager Celery ran it at commit (the request's transaction); the row tells how it went.
    run.refresh_from_db()
    assert run.status == SuggesterRunStatus.DONE, run.error
    assert run.progress == 100 and run.task_id.startswith("suggester-")
    assert run.gold_items == 60 and run.suggestions == 15
    curve = run.metrics["learning_curve"]
    assert curve["primary"] == "entity_macro_f1" and len(curve["points"]) == 3
    assert all(p["score"] is not None for p in curve["points"])
    current = Suggestion.objects.filter(item__project=project, is_current=True)
    assert current.count() == 15
    assert all(0 <= s.confidence <= 1 and 0 <= s.uncertainty <= 1 for s in current)
    assert {s.model_version for s in current} == {run.model_version} and run.model_version.startswith("ner-baseline")
    assert not current.filter(item__gold__status__in=USABLE_GOLD).exists()
    project.refresh_from_db()
    assert assist.assist_settings(project).trained_on == 60
    # Progress is reported as the job goes (the service's callback; the task forwards it to Celery state).
    again = SuggesterRun.objects.create(project=project, kind="train")
    suggester.suggester_run(again.pk, progress=lambda percent, note: seen.append((percent, note)))
    percents = [p for p, _ in seen]
    assert percents == sorted(percents) and percents[-1] == 100 and len(seen) >= 6
    assert any("learning curve" in note for _, note in seen) and any("predict" in note for _, note in seen)


@pytest.mark.parametrize("slug", ["tc", "sts", "nli", "re", "dp", "mrc", "dst"])
def test_every_task_trains_a_suggester_with_valid_suggestions(jobs, make_project, slug):
    project = seeded_project(make_project, slug, gold=40, todo=10)
    run = jobs(export_services.suggester_request, project=project)
    run.refresh_from_db()
    assert run.status == SuggesterRunStatus.DONE, run.error
    stored = run.metrics["stored"]
    assert stored["invalid"] == 0, stored["errors"]
    assert run.suggestions == 10
    for suggestion in Suggestion.objects.filter(item__project=project, is_current=True).select_related("item"):
        # Stored payloads are valid annotations of their item.
        project.task.validate_annotation(suggestion.payload, item=suggestion.item.payload,
                                         schema=project.label_schema, stage=suggestion.stage)
        assert suggestion.confidence is not None


def test_too_little_gold_fails_with_a_reason(jobs, make_project):
    project = seeded_project(make_project, "tc", gold=4, todo=4)
    run = jobs(export_services.suggester_request, project=project)
    run.refresh_from_db()
    assert run.status == SuggesterRunStatus.FAILED and "at least 10 gold items" in run.error
    assert not Suggestion.objects.filter(item__project=project).exists()


def test_a_second_request_while_one_is_queued_returns_it(make_project, django_capture_on_commit_callbacks):
    project = seeded_project(make_project, "tc", gold=12, todo=2)
    with django_capture_on_commit_callbacks(execute=False):
        first = export_services.suggester_request(project=project)
        second = export_services.suggester_request(project=project)
    assert first.pk == second.pk


def test_uncertainty_measure_follows_the_project_setting(jobs, make_project):
    project = seeded_project(make_project, "tc", gold=30, todo=8)
    services.assist_settings_update(project=project, uncertainty="entropy")
    jobs(export_services.suggester_request, project=project)
    for suggestion in Suggestion.objects.filter(item__project=project, is_current=True):
        assert suggestion.uncertainty == pytest.approx(suggestion.detail["entropy"])


def test_retrain_every_n_gold_items(make_project, django_capture_on_commit_callbacks):
    project = seeded_project(make_project, "tc", gold=20, todo=10)
    assert not suggester.retrain_due(project)
    services.assist_settings_update(project=project, retrain_every=5)
    assert suggester.retrain_due(project)
    with django_capture_on_commit_callbacks(execute=True):
        assert suggester.retrain_due_projects() == [project.pk]
    assert SuggesterRun.objects.get(project=project).trigger == "every_n_gold"
    project.refresh_from_db()
    assert not suggester.retrain_due(project)
    for item in Item.objects.filter(project=project).exclude(gold__status=GoldStatus.ADJUDICATED)[:5]:
        GoldLabel.objects.update_or_create(item=item, defaults={
            "payload": {"label": "사회", "second": None, "third": None}, "status": GoldStatus.ADJUDICATED,
            "rule": "adjudication"})
    assert suggester.retrain_due(project)


def test_expected_effect_from_the_learning_curve(jobs, make_project):
    project = seeded_project(make_project, "tc", gold=80, todo=5)
    jobs(export_services.suggester_request, project=project)
    effect = suggester.expected_effect(project)
    assert len(effect["points"]) == 3 and effect["fit"]["b"] is not None
    assert "target" in effect["reason"]
    services.assist_settings_update(project=project, target_score=99.9)
    effect = suggester.expected_effect(project)
    # The held-out fifth is chosen by the items' texts, so these figures are the same on every database.
    assert effect["gold_now"] == 80 and effect["fit"]["b"] > 0
    assert (effect["gold_needed"], effect["more_needed"], effect["extrapolated"]) == (121, 41, True)
    services.assist_settings_update(project=project, target_score=1.0)
    assert suggester.expected_effect(project)["more_needed"] == 0


def test_the_learning_curve_does_not_depend_on_item_ids(jobs, make_project):
    """Two projects of the same gold (other item ids) hold out the same items and draw the same curve."""
    curves = []
    for _ in range(2):
        project = seeded_project(make_project, "tc", gold=40, todo=0)
        jobs(export_services.suggester_request, project=project)
        curves.append([(p["n"], p["score"]) for p in suggester.expected_effect(project)["points"]])
    assert curves[0] == curves[1] and len(curves[0]) == 3


# -- uploaded predictions -----------------------------------------------------------------------------------


def test_upload_jsonl_predictions(jobs, make_project):
    project = make_project("tc", k=1)
    items = [services.item_create(project=project, payload={"title": f"제목 {i}"}, external_id=f"x-{i}")
             for i in range(3)]
    lines = [{"external_id": "x-0", "payload": {"label": "경제"}, "confidence": 0.9},
             {"item": items[1].pk, "payload": {"label": "정치"}},
             {"external_id": "nope", "payload": {"label": "경제"}},
             {"external_id": "x-2", "payload": {"label": "없는 주제"}}]
    data = "\n".join(json.dumps(line, ensure_ascii=False) for line in lines).encode() + b"\nnot json\n"
    run = jobs(export_services.predictions_upload, project=project, upload=io.BytesIO(data), file_name="preds.jsonl",
               fmt="jsonl", user=None, model="my-bert")
    run.refresh_from_db()
    assert run.status == SuggesterRunStatus.DONE, run.error
    assert run.suggestions == 2 and run.model_version == f"upload-r{run.pk}-my-bert"
    stored = run.metrics["stored"]
    assert stored["invalid"] == 1 and len(stored["errors"]) == 3
    first = Suggestion.objects.get(item=items[0], is_current=True)
    assert first.confidence == 0.9 and first.source == "upload"
    assert Suggestion.objects.get(item=items[1]).confidence is None


def test_upload_klue_predictions(jobs, make_project, tmp_path):
    from datasets_build.klue_formats import write_klue_file

    project = make_project("ner", k=1)
    records = synthetic_records("ner", 4, 2)
    for record in records:
        parsed = project.task.parse_record(record)
        services.item_create(project=project, payload=parsed.payload, external_id=parsed.external_id)
    path = tmp_path / "klue-ner-v1.1_dev.tsv"
    write_klue_file(path, "ner", records)
    run = jobs(export_services.predictions_upload, project=project, upload=io.BytesIO(path.read_bytes()),
               file_name=path.name, fmt="klue", user=None)
    run.refresh_from_db()
    assert run.status == SuggesterRunStatus.DONE, run.error
    assert run.suggestions == 4
    suggestion = Suggestion.objects.filter(item__project=project).first()
    assert suggestion.payload["entities"]
    assert not Path(run.stored_path).exists()  # the upload is deleted once read


def test_upload_rejects_unknown_format(make_project):
    project = make_project("tc", k=1)
    with pytest.raises(services.ServiceError):
        export_services.predictions_upload(project=project, upload=io.BytesIO(b"x"), file_name="p.csv", fmt="csv",
                                     user=None)


# -- API ------------------------------------------------------------------------------------------------------


def test_suggester_api(api, make_project, annotator_in, django_capture_on_commit_callbacks):
    project = seeded_project(make_project, "tc", gold=30, todo=6)
    manager = project.created_by
    client = api(manager)
    url = reverse("exports:api-suggester", args=[project.pk])
    body = client.get(url).json()
    assert body["settings"]["show"] is False and body["latest_run"] is None
    response = client.patch(url, {"show": True, "fraction": 0.5, "queue_order": "uncertainty"}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["settings"]["fraction"] == 0.5
    bad = client.patch(url, {"fraction": 2}, format="json")
    assert bad.status_code == 400 and bad.json()["field"] == "fraction"
    with django_capture_on_commit_callbacks(execute=True):
        train = client.post(reverse("exports:api-suggester-train", args=[project.pk]), format="json")
    assert train.status_code == 202
    run_url = reverse("exports:api-suggester-run", args=[project.pk, train.json()["id"]])
    run = client.get(run_url).json()
    assert run["status"] == "done" and run["progress"] == 100 and run["suggestions"] == 6
    body = client.get(url).json()
    assert body["current"]["suggestions"] == 6 and body["latest_run"]["id"] == run["id"]
    assert "expected_effect" in body
    with django_capture_on_commit_callbacks(execute=True):
        upload = client.post(reverse("exports:api-suggester-upload", args=[project.pk]),
                             {"file": SimpleUploadedFile("p.jsonl", '{"external_id": "t", "payload": {"label": '
                                                         '"경제"}}\n'.encode()), "format": "jsonl"}, format="multipart")
    assert upload.status_code == 202, upload.json()
    # Annotators never see the suggester's settings or runs.
    annotator = annotator_in(project)
    assert api(annotator).get(url).status_code == 403
    assert api(annotator).post(reverse("exports:api-suggester-train", args=[project.pk])).status_code == 403


# -- a live worker: retraining does not block annotators ------------------------------------------------------


@pytest.mark.worker
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_retrain_on_a_worker_reports_progress_and_does_not_block_annotators(live_worker, make_project, api,
                                                                            annotator_in):
    if not is_postgres():
        pytest.skip("needs PostgreSQL")
    from celery.result import AsyncResult

    project = seeded_project(make_project, "ner", gold=600, todo=400)
    services.assist_settings_update(project=project, show=True, fraction=1.0)
    annotator = annotator_in(project)
    client = api(annotator)
    run = export_services.suggester_request(project=project, user=project.created_by)
    states, latencies, notes = set(), [], set()
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        run.refresh_from_db()
        notes.add(run.progress_note)
        if run.task_id:
            states.add(AsyncResult(run.task_id).state)
        if run.is_finished:
            break
        started = time.perf_counter()
        body = client.get(reverse("api:next-item", args=[project.pk])).json()
        response = client.post(reverse("api:annotation-list", args=[project.pk]),
                               {"item": body["item"]["id"], "payload": {"entities": []}}, format="json")
        latencies.append(time.perf_counter() - started)
        assert response.status_code == 201
    assert run.status == SuggesterRunStatus.DONE, run.error
    assert "PROGRESS" in states or len(notes) > 3
    assert len(latencies) >= 3, "the job finished before annotators could work alongside it"
    assert max(latencies) < 2.0, latencies
    assert Suggestion.objects.filter(item__project=project, is_current=True).exists()


def test_suggester_page_retrains_shows_the_curve_and_saves_settings(make_project, annotator_in,
                                                                     django_capture_on_commit_callbacks):
    from django.test import Client

    project = seeded_project(make_project, "tc", gold=80, todo=5)
    url = reverse("exports:suggester", args=[project.pk])
    manager = Client()
    manager.force_login(project.created_by)
    empty = manager.get(url).content.decode()
    assert "No suggester yet" in empty and "needs a learning curve" in empty
    with django_capture_on_commit_callbacks(execute=True):
        response = manager.post(url, {"action": "retrain"})
    assert response.status_code == 302
    page = manager.get(url).content.decode()
    run = SuggesterRun.objects.get(project=project)
    assert run.status == "done" and run.model_version in page and "100%" in page
    assert "Baseline score by gold items trained on" in page and "<svg" in page
    assert "set a target score" in page
    saved = manager.post(url, {"action": "settings", "show": "on", "percent": "50", "queue_order": "uncertainty",
                               "retrain_every": "10", "target_score": "1"})
    assert saved.status_code == 302
    project.refresh_from_db()
    settings_ = assist.assist_settings(project)
    assert (settings_.show, settings_.fraction, settings_.queue_order, settings_.retrain_every,
            settings_.target_score) == (True, 0.5, "uncertainty", 10, 1.0)
    assert "Reaching 1.0 needs about" in manager.get(url).content.decode()
    bad = manager.post(url, {"action": "settings", "percent": "150", "queue_order": "default", "retrain_every": "0"})
    assert bad.status_code == 200 and "Ensure this value is less than or equal to 100" in bad.content.decode()

    annotator = Client()
    annotator.force_login(annotator_in(project))
    assert annotator.get(url).status_code == 403
    assert annotator.post(url, {"action": "retrain"}).status_code == 403
    assert SuggesterRun.objects.filter(project=project).count() == 1
