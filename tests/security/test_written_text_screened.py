"""Text written at a writing stage is screened like an import's text (issue 35, acceptance 4): an NLI hypothesis and
an MRC question posted through ``POST /api/projects/{id}/annotations/`` have their phone number, e-mail address and
Korean name pseudonymized under the project's policy — in the item the validators see and in the writer's own
annotation, its audit event and its draft alike —, their findings recorded on the item as an import records them,
their text screened for toxicity and bias with an import's flags and status; the MRC answer still quotes the passage
at its offset, and a release built afterwards (KLUE, JSONL) and every table carry none of the raw values."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from annotation import services
from annotation.models import Annotation, AuditEvent, Draft, Flag, Item, Project, ScreeningStatus
from datasets_build.services import items_import
from tests.builders import build_release, write_jsonl
from tests.datasets_build.pii.leaks import Leaks, Needle, scan_database, scan_files, spellings

pytestmark = pytest.mark.django_db

#: Values the premise or passage brings (pseudonymized when the item is created), and values written by annotators.
ITEM_NAME, ITEM_PHONE = "김민준", "010-2345-6789"
NAME, PHONE, EMAIL = "박서연", "010-9876-5432", "seoyeon.park@example.com"
WRITTEN = [("person", NAME), ("phone", PHONE), ("email", EMAIL), ("phone", ITEM_PHONE)]
POLICY = {"pii": {"person": "pseudonymize"}}

PREMISE = f"{ITEM_NAME} 기자가 {ITEM_PHONE}로 연락하라고 했다."
#: The writer types the premise's number (which they never saw) and three values of their own.
HYPOTHESIS = f"{NAME} 씨는 {PHONE}와 {ITEM_PHONE}로 연락하고 {EMAIL}로 메일을 보냈다."
SCREENED_HYPOTHESIS = "[이름2] 씨는 [전화번호2]와 [전화번호1]로 연락하고 [이메일1]로 메일을 보냈다."

CONTEXT = "세종대왕은 1397년 한양에서 태어났다. 그는 1443년 훈민정음을 창제하였다. 집현전 학자들이 이를 도왔다."
ANSWER = "1443년"
QUESTION = f"{NAME} 씨({PHONE}, {EMAIL})가 묻습니다: 세종대왕이 훈민정음을 창제한 해는?"
SCREENED_QUESTION = "[이름1] 씨([전화번호1], [이메일1])가 묻습니다: 세종대왕이 훈민정음을 창제한 해는?"


def needles(values: list[tuple[str, str]]) -> list[Needle]:
    return [Needle(pii_type, value, spelling, form) for pii_type, value in values
            for spelling, form in spellings(pii_type, value).items()]


def policy_project(make_project: Any, task: str, *, k: int, slug: str, pii: dict[str, str] | None = None) -> Project:
    project = make_project(task, k=k, slug=slug)
    project.options = {**project.options, "pii": pii if pii is not None else POLICY["pii"]}
    project.save(update_fields=["options"])
    return project


def write(client: Any, project: Project, item: Item, payload: dict[str, Any]) -> dict[str, Any]:
    """The writer takes the item from the queue, keeps a draft as the workspace does, and submits."""
    task = client.get(f"/api/projects/{project.pk}/next/").json()
    assert (task["stage"], task["item"]["id"]) == ("writing", item.pk)
    assert client.put(f"/api/projects/{project.pk}/assignments/{task['assignment']}/draft/",
                      {"payload": payload, "seconds_spent": 5}, format="json").status_code == 200
    response = client.post(f"/api/projects/{project.pk}/annotations/", {"item": item.pk, "payload": payload},
                           format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def flags_of(item: Item) -> list[tuple[str, str]]:
    return sorted(Flag.objects.filter(item=item).values_list("kind", "note"))


def imported(make_project: Any, tmp_path: Path, task: str, record: dict[str, Any],
             pii: dict[str, str] | None = None) -> Item:
    """The same record, written text included, imported into a project with the same policy."""
    project = policy_project(make_project, task, k=1, slug=f"imported-{task}-{len(list(tmp_path.iterdir()))}",
                             pii=pii)
    result = items_import(project, write_jsonl(tmp_path / f"{project.slug}.jsonl", [record]), "jsonl")
    assert result.ok, result.errors
    return Item.objects.get(project=project)


def release_text(project: Project, folder: Path) -> str:
    built = build_release(project, folder, "--version", "1.0.0", "--format", "klue,jsonl", "--no-agreement")
    assert sum(built["splits"].values()) == 1, built
    files = sorted(path for path in Path(built["out"]).rglob("*") if path.is_file())
    assert {path.suffix for path in files} >= {".json", ".jsonl"}
    return "\n".join(path.read_text(encoding="utf-8") for path in files)


def test_an_nli_hypothesis_is_pseudonymized_recorded_and_released_without_its_raw_values(
        make_project, api, annotator_in, tmp_path):
    project = policy_project(make_project, "nli", k=2, slug="written-nli")
    manager = project.created_by
    response = api(manager).post(f"/api/projects/{project.pk}/items/", {
        "payload": {"premise": PREMISE}, "external_id": "nli-1"}, format="json")
    assert response.status_code == 201, response.json()
    item = Item.objects.get(pk=response.json()["id"])
    premise, premise_findings = item.payload["premise"], list(item.pii_findings)
    assert premise == "[이름1] 기자가 [전화번호1]로 연락하라고 했다."
    writer, *validators = (annotator_in(project) for _ in range(3))

    body = write(api(writer), project, item, {"hypothesis": HYPOTHESIS, "label": "neutral"})
    assert body["payload"]["hypothesis"] == SCREENED_HYPOTHESIS
    assert not any(raw in json.dumps(body, ensure_ascii=False) for _, raw in WRITTEN)

    item.refresh_from_db()
    writing = Annotation.objects.get(item=item, stage="writing")
    # The item the validators see and the writer's annotation hold the same pseudonymized text; the premise, its
    # placeholders and its findings are as they were; a value the item held before keeps its pseudonym.
    assert item.payload["hypothesis"] == writing.payload["hypothesis"] == SCREENED_HYPOTHESIS
    assert item.payload["premise"] == premise and item.pii_findings[:len(premise_findings)] == premise_findings
    written = [f for f in item.pii_findings if f["field"] == "hypothesis"]
    assert [(f["type"], f["action"], SCREENED_HYPOTHESIS[f["start"]:f["end"]]) for f in written] == [
        ("person", "pseudonymized", "[이름2]"), ("phone", "pseudonymized", "[전화번호2]"),
        ("phone", "pseudonymized", "[전화번호1]"), ("email", "pseudonymized", "[이메일1]")]
    premise_phone = next(f["hash"] for f in premise_findings if f["type"] == "phone")
    assert written[2]["hash"] == premise_phone
    assert not any(raw in json.dumps(f) for f in item.pii_findings for _, raw in WRITTEN)
    # What an import of the same pair records, to the finding.
    same = imported(make_project, tmp_path, "nli", {"guid": "nli-1", "premise": PREMISE, "hypothesis": HYPOTHESIS})
    assert (same.payload["premise"], same.payload["hypothesis"]) == (premise, SCREENED_HYPOTHESIS)
    assert item.pii_findings == same.pii_findings
    assert (item.screening_status, flags_of(item)) == (ScreeningStatus.CLEAR, []) == (
        same.screening_status, flags_of(same))
    # Its audit event and its draft keep no raw text either.
    event = AuditEvent.objects.get(object_type="annotation", object_id=writing.pk)
    assert event.after["payload"]["hypothesis"] == SCREENED_HYPOTHESIS
    assert not Draft.objects.filter(assignment__item=item).exists()

    for validator in validators:
        got = api(validator).get(f"/api/projects/{project.pk}/next/").json()
        assert (got["stage"], got["item"]["payload"]["hypothesis"]) == ("validation", SCREENED_HYPOTHESIS)
        assert api(validator).post(f"/api/projects/{project.pk}/annotations/", {
            "item": item.pk, "payload": {"label": "neutral"}}, format="json").status_code == 201

    text = release_text(project, tmp_path / "releases")
    assert SCREENED_HYPOTHESIS in text and premise in text
    leaks = Leaks(needles([*WRITTEN, ("person", ITEM_NAME)]))
    scan_files(tmp_path / "releases", leaks, "release")
    scan_database(leaks)
    leaks.assert_none()


def test_an_mrc_question_is_pseudonymized_and_its_answer_still_quotes_the_passage(
        make_project, api, annotator_in, tmp_path):
    project = policy_project(make_project, "mrc", k=1, slug="written-mrc")
    item = services.item_create(project=project, payload={"title": "세종대왕", "context": CONTEXT},
                                external_id="mrc-1")
    writer, validator = annotator_in(project), annotator_in(project)
    start = CONTEXT.index(ANSWER)
    body = write(api(writer), project, item, {"question": QUESTION, "question_type": 1,
                                              "answer": {"text": ANSWER, "start": start}, "plausible": None})
    assert body["payload"]["question"] == SCREENED_QUESTION

    item.refresh_from_db()
    writing = Annotation.objects.get(item=item, stage="writing")
    assert item.payload["question"] == writing.payload["question"] == SCREENED_QUESTION
    # The passage is not touched, so the answer span written against it is still right.
    assert item.payload["context"] == CONTEXT
    answer = writing.payload["answer"]
    assert answer == {"text": ANSWER, "start": start} and CONTEXT[answer["start"]:][:len(answer["text"])] == ANSWER
    assert [(f["field"], f["type"], f["action"], SCREENED_QUESTION[f["start"]:f["end"]])
            for f in item.pii_findings] == [
        ("question", "person", "pseudonymized", "[이름1]"), ("question", "phone", "pseudonymized", "[전화번호1]"),
        ("question", "email", "pseudonymized", "[이메일1]")]
    same = imported(make_project, tmp_path, "mrc", {
        "guid": "mrc-1", "title": "세종대왕", "context": CONTEXT, "question": QUESTION, "question_type": 1,
        "answers": [{"text": ANSWER, "answer_start": start}]})
    assert (same.payload["question"], same.pii_findings) == (SCREENED_QUESTION, item.pii_findings)
    assert (item.screening_status, flags_of(item)) == (ScreeningStatus.CLEAR, [])

    got = api(validator).get(f"/api/projects/{project.pk}/next/").json()
    assert (got["stage"], got["item"]["payload"]["question"]) == ("validation", SCREENED_QUESTION)
    assert api(validator).post(f"/api/projects/{project.pk}/annotations/", {
        "item": item.pk, "payload": {"answer": {"text": ANSWER, "start": start}}}, format="json").status_code == 201

    text = release_text(project, tmp_path / "releases")
    klue = [path for path in (tmp_path / "releases").rglob("klue-mrc*.json")]
    released = [qa for path in klue for doc in json.loads(path.read_text(encoding="utf-8"))["data"]
                for paragraph in doc["paragraphs"] for qa in paragraph["qas"]]
    assert SCREENED_QUESTION in text and len(released) == 1, [p.name for p in klue]
    for qa in released:
        assert qa["question"] == SCREENED_QUESTION
        assert [(a["text"], a["answer_start"]) for a in qa["answers"]] == [(ANSWER, start)]
    leaks = Leaks(needles(WRITTEN[:3]))
    scan_files(tmp_path / "releases", leaks, "release")
    scan_database(leaks)
    leaks.assert_none()


def test_a_toxic_hypothesis_is_flagged_and_held_like_an_imported_one(make_project, api, annotator_in, tmp_path):
    project = policy_project(make_project, "nli", k=1, slug="toxic-nli")
    premise = "주민들이 새 공원 조성 계획을 두고 회의를 열었다."
    item = services.item_create(project=project, payload={"premise": premise}, external_id="toxic-1")
    writer, validator = annotator_in(project), annotator_in(project)
    hypothesis = "이런 놈들은 다 죽어야 한다"
    write(api(writer), project, item, {"hypothesis": hypothesis, "label": "neutral"})
    item.refresh_from_db()
    same = imported(make_project, tmp_path, "nli", {"guid": "toxic-1", "premise": premise, "hypothesis": hypothesis})
    assert [kind for kind, _ in flags_of(item)] == ["toxic"]
    # The same flag, its offsets in the item's text, and the same status as the imported pair's.
    assert (item.screening_status, flags_of(item)) == (ScreeningStatus.NEEDS_REVIEW, flags_of(same)) == (
        same.screening_status, flags_of(same))
    # Held for review: nobody validates it until a manager keeps it.
    assert api(validator).get(f"/api/projects/{project.pk}/next/").status_code == 204


def test_a_name_the_policy_only_detects_is_kept_flagged_and_held(make_project, api, annotator_in, tmp_path):
    """The default policy detects names without replacing them: the writer's name stays, the item waits for a
    manager with an import's PII flag."""
    project = policy_project(make_project, "nli", k=1, slug="detect-nli", pii={})
    premise = "주민들이 새 공원 조성 계획을 두고 회의를 열었다."
    item = services.item_create(project=project, payload={"premise": premise}, external_id="detect-1")
    writer = annotator_in(project)
    hypothesis = f"{NAME} 씨가 회의에서 {PHONE}로 연락하라고 했다."
    write(api(writer), project, item, {"hypothesis": hypothesis, "label": "neutral"})
    item.refresh_from_db()
    same = imported(make_project, tmp_path, "nli", {"guid": "detect-1", "premise": premise,
                                                    "hypothesis": hypothesis}, pii={})
    kept = f"{NAME} 씨가 회의에서 [전화번호1]로 연락하라고 했다."
    assert item.payload["hypothesis"] == same.payload["hypothesis"] == kept
    assert item.pii_findings == same.pii_findings
    assert [(f["type"], f["action"]) for f in item.pii_findings] == [("person", "detected"), ("phone", "pseudonymized")]
    assert (item.screening_status, flags_of(item)) == (ScreeningStatus.NEEDS_REVIEW, flags_of(same)) == (
        same.screening_status, [("pii", "PII detected and kept for review: person ×1")])


def test_fake_pseudonyms_of_the_item_are_kept_and_new_values_replaced(make_project, api, annotator_in):
    """With ``fake`` replacements the premise's pseudonym is a plausible name: copied into the hypothesis it is
    left as it is (not taken for a new name), and the premise keeps its text and findings."""
    project = policy_project(make_project, "nli", k=1, slug="fake-nli", pii={"person": "pseudonymize",
                                                                             "replacement": "fake"})
    item = services.item_create(project=project, payload={"premise": PREMISE}, external_id="fake-1")
    premise, findings = item.payload["premise"], list(item.pii_findings)
    pseudonym = premise.split(" ", 1)[0]
    assert pseudonym != ITEM_NAME and ITEM_PHONE not in premise
    writer = annotator_in(project)
    body = write(api(writer), project, item, {"hypothesis": f"{pseudonym} 기자는 {PHONE}로도 연락을 받는다.",
                                              "label": "neutral"})
    item.refresh_from_db()
    hypothesis = item.payload["hypothesis"]
    assert body["payload"]["hypothesis"] == hypothesis and hypothesis.startswith(f"{pseudonym} 기자는 010-")
    assert PHONE not in hypothesis and (item.payload["premise"], item.pii_findings[:len(findings)]) == (premise,
                                                                                                        findings)
    assert [(f["field"], f["type"]) for f in item.pii_findings[len(findings):]] == [("hypothesis", "phone")]
