"""The agreement report as CSV, from the dashboard's link and the API: the same numbers as the JSON report (and so
as the dashboard), every coefficient, label, pair and guideline version; managers only."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from django.urls import reverse

from annotation import services
from annotation.agreement.report_csv import COLUMNS, report_csv
from annotation.models import Annotation, Role
from tests.agreement.breakdown_data import bulk_annotations, guideline_version, noisy_labels
from tests.builders import client_for, run_agreement

pytestmark = pytest.mark.django_db


def rows_of(body: bytes) -> list[dict[str, str]]:
    text = body.decode("utf-8")
    assert text.startswith("\ufeff")  # spreadsheets read the Korean labels as UTF-8
    reader = csv.DictReader(io.StringIO(text[1:]))
    assert reader.fieldnames == COLUMNS
    return list(reader)


def number(cell: str) -> float | None:
    return None if cell == "" else float(cell)


@pytest.fixture
def versioned(make_project, make_user, add_member, django_capture_on_commit_callbacks):
    project = make_project("tc", k=3, slug="csv-tc")
    coders = [add_member(project, make_user(f"csv-coder{i}"), Role.ANNOTATOR) for i in range(3)]
    rng = np.random.default_rng(4)
    for version, accuracy in ((1, [0.6, 0.6, 0.5]), (2, [0.9, 0.95, 0.9])):
        bulk_annotations(project, noisy_labels(rng, 60, accuracy, missing=0), coders,
                         guideline=guideline_version(project, version), prefix=f"v{version}-")
    with django_capture_on_commit_callbacks(execute=True):
        client_for(project.created_by).get(reverse("annotation:review-dashboard", args=[project.pk]))
    return project, coders


def test_csv_holds_the_reports_numbers(versioned, api):
    project, coders = versioned
    report = api(project.created_by).get(f"/api/projects/{project.pk}/agreement/").json()
    response = api(project.created_by).get(f"/api/projects/{project.pk}/agreement/csv/")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    assert 'filename="csv-tc-agreement.csv"' in response["Content-Disposition"]
    rows = rows_of(response.content)
    by_key = {(r["section"], r["name"], r["subject"]): r for r in rows}

    for coefficient in report["coefficients"]:
        row = by_key[("coefficient", coefficient["name"], "")]
        assert number(row["value"]) == coefficient["value"]
        assert [number(row["ci95_low"]), number(row["ci95_high"])] == coefficient["ci95"]
    for entry in report["per_label"]["labels"]:
        row = by_key[("per_label", "one_vs_rest_alpha", entry["label"])]
        assert number(row["value"]) == entry["value"]
        assert [number(row["ci95_low"]), number(row["ci95_high"])] == entry["ci95"]
        assert int(row["items"]) == entry["items"] and int(row["annotations"]) == entry["annotations"]
    names = report["annotator_names"]
    assert len(report["pair_kappa"]["pairs"]) == 3
    for pair in report["pair_kappa"]["pairs"]:
        row = by_key[("pair", "cohen_kappa", f"{names[str(pair['a'])]} × {names[str(pair['b'])]}")]
        assert number(row["value"]) == pair["value"] and int(row["items"]) == pair["items"]
        assert [number(row["ci95_low"]), number(row["ci95_high"])] == pair["ci95"]
    for entry in report["guideline_versions"]["versions"]:
        row = by_key[("guideline_version", entry["name"], f"v{entry['version']}")]
        assert number(row["value"]) == entry["value"] and int(row["items"]) == entry["items"]
    change = report["guideline_versions"]["changes"][0]
    row = by_key[("version_change", "difference", "v1 → v2")]
    assert number(row["value"]) == change["difference"] and row["note"] == change["verdict"]

    # a client that asks for CSV gets it
    asked = api(project.created_by).get(f"/api/projects/{project.pk}/agreement/csv/", HTTP_ACCEPT="text/csv")
    assert asked.status_code == 200 and asked.content == response.content
    # the dashboard links to the same file
    dashboard = client_for(project.created_by).get(reverse("annotation:review-dashboard", args=[project.pk]))
    link = reverse("annotation:review-csv", args=[project.pk])
    assert f'href="{link}"' in dashboard.content.decode()
    assert client_for(project.created_by).get(link).content == response.content
    # annotators never see agreement
    assert api(coders[0]).get(f"/api/projects/{project.pk}/agreement/csv/").status_code == 403
    assert client_for(coders[0]).get(link).status_code == 403


def test_csv_of_ner_has_each_types_unitizing_alpha(make_project, make_user):
    project = make_project("ner", k=2, slug="csv-ner")
    users = [make_user(f"csvn{i}") for i in range(2)]
    exact = {"entities": [{"start": 0, "end": 3, "type": "PS"}, {"start": 5, "end": 7, "type": "LC"}]}
    slipped = {"entities": [{"start": 0, "end": 3, "type": "PS"}, {"start": 5, "end": 9, "type": "LC"}]}
    for n in range(20):
        item = services.item_create(project=project, payload={"sentence": "홍길동은 서울에서 산다"},
                                    external_id=f"c{n}")
        for user, payload in zip(users, (exact, slipped if n % 2 else exact), strict=True):
            Annotation.objects.create(item=item, annotator=user, stage="label", payload=payload)
    report = run_agreement(project.slug)
    unitizing = {c["name"]: c for c in report["coefficients"]}["krippendorff_alpha_unitizing"]
    rows = {(r["section"], r["name"], r["subject"]): r for r in rows_of(("\ufeff" + report_csv(report)).encode())}
    row = rows[("per_type", "krippendorff_alpha_unitizing", "LC")]
    assert number(row["value"]) == unitizing["per_type"]["LC"]
    assert [number(row["ci95_low"]), number(row["ci95_high"])] == unitizing["per_type_ci95"]["LC"]


def test_no_report_yet_is_a_404_on_the_page(make_project):
    project = make_project("tc", slug="csv-none")
    assert client_for(project.created_by).get(reverse("annotation:review-csv", args=[project.pk])).status_code == 404


def test_a_label_is_never_a_spreadsheet_formula():
    report = {"per_label": {"kind": "label", "labels": [
        {"label": "=HYPERLINK(\"x\")", "value": 0.5, "ci95": [0.4, 0.6], "items": 3, "annotations": 4}]}}
    row = next(csv.DictReader(io.StringIO(report_csv(report))))
    assert row["subject"] == "'=HYPERLINK(\"x\")" and row["value"] == "0.5"
