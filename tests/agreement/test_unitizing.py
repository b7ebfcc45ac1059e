"""Krippendorff's unitizing alpha against the test cases of DKPro Statistics' unitizing implementation (the one
INCEpTION uses: ``UnitizingAgreementTest`` and ``Krippendorff1995Test``, values and tolerances as they assert
them), and on NER through the ``agreement`` command."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from annotation import services
from annotation.agreement.unitizing import unitizing_alpha
from annotation.models import Annotation
from tests.builders import run_agreement


def study(units: list[tuple[int, int, int, str]], length: int, observers: int):
    """One continuum of ``length``; units as DKPro adds them: (begin, length, observer, category)."""
    frame = pd.DataFrame([(0, o, b, b + n, c) for b, n, o, c in units],
                         columns=["item", "observer", "begin", "end", "category"])
    return unitizing_alpha(frame, np.array([length]), observers)


def test_dkpro_unitizing_example():
    # r0: -11111111-   r1: --1-1-1---
    result = study([(1, 8, 0, "A"), (2, 1, 1, "A"), (4, 1, 1, "A"), (6, 1, 1, "A")], 10, 2)
    a = result.per_category["A"]
    assert a["observed"] == pytest.approx(0.9100, abs=1e-4)
    assert a["expected"] == pytest.approx(0.5351, abs=1e-4)
    assert a["alpha"] == pytest.approx(-0.7003, abs=1e-4)


def test_dkpro_single_unit_and_empty_study():
    assert study([(0, 1, 0, "X")], 20, 3).value == pytest.approx(0.0)
    assert study([], 20, 3).value is None


# Krippendorff (1995: 57), as DKPro builds it: (begin, length, observer, category) on a continuum of 24, stretched.
K1995 = [(2, 8, 0, "A"), (14, 6, 0, "A"), (4, 4, 1, "A"), (15, 2, 1, "A"),
         (0, 18, 0, "B"), (0, 2, 1, "B"), (2, 1, 1, "B"), (3, 1, 1, "B"), (4, 1, 1, "B"), (5, 1, 1, "B"),
         (6, 3, 1, "B"), (9, 1, 1, "B"),
         (2, 6, 0, "C"), (10, 2, 0, "C"), (14, 4, 0, "C"), (20, 2, 0, "C"), (0, 2, 1, "C"), (4, 4, 1, "C"),
         (10, 4, 1, "C"), (16, 2, 1, "C"), (20, 2, 1, "C"),
         (0, 2, 0, "D"), (2, 8, 0, "D"), (10, 4, 0, "D"), (14, 6, 0, "D"), (20, 4, 0, "D"), (0, 4, 1, "D"),
         (4, 4, 1, "D"), (8, 7, 1, "D"), (15, 2, 1, "D"), (17, 7, 1, "D")]


def krippendorff_1995(stretch: float):
    def s(x: int) -> int:
        return int(x * stretch)

    return study([(s(b), s(n), o, c) for b, n, o, c in K1995], s(24), 2).per_category


def test_krippendorff_1995_observed_disagreement():
    per = krippendorff_1995(1)
    for category, observed in (("A", 0.03125), ("B", 2.26736), ("C", 0.02777), ("D", 0.38715)):
        assert per[category]["observed"] == pytest.approx(observed, abs=1e-5), category


def test_krippendorff_1995_expected_disagreement_and_alpha():
    per = krippendorff_1995(1200000 / 24)
    for category, expected, alpha in (("A", 0.06990, 0.553), ("B", 1.17731, -0.926), ("C", 0.08642, 0.679),
                                      ("D", 0.41445, 0.066)):
        assert per[category]["expected"] == pytest.approx(expected, abs=0.005), category
        assert per[category]["alpha"] == pytest.approx(alpha, abs=0.02), category


@pytest.mark.parametrize(("stretch", "expected", "alpha"), [
    (12 / 24, 0.05494, 0.494), (120 / 24, 0.08234, 0.663), (1200 / 24, 0.08600, 0.677),
    (12000 / 24, 0.08638, 0.678)])
def test_krippendorff_1995_varying_lengths(stretch, expected, alpha):
    c = krippendorff_1995(stretch)["C"]
    assert c["observed"] == pytest.approx(0.02777, abs=1e-5)
    assert c["expected"] == pytest.approx(expected, abs=0.005)
    assert c["alpha"] == pytest.approx(alpha, abs=0.02)


@pytest.mark.django_db
def test_ner_unitizing_alpha_gives_partial_credit_for_a_boundary_slip(make_project, make_user):
    project = make_project("ner", k=2, slug="ner-unitizing")
    users = [make_user(f"nu{i}") for i in range(2)]
    sentence = "홍길동은 서울에서 산다"
    exact = {"entities": [{"start": 0, "end": 3, "type": "PS"}, {"start": 5, "end": 7, "type": "LC"}]}
    # the particle 에서 taken into the place: a boundary slip, not a different entity
    slipped = {"entities": [{"start": 0, "end": 3, "type": "PS"}, {"start": 5, "end": 9, "type": "LC"}]}
    for n in range(12):
        item = services.item_create(project=project, payload={"sentence": sentence}, external_id=f"u{n}")
        for user, payload in zip(users, (exact, slipped if n % 2 else exact), strict=True):
            Annotation.objects.create(item=item, annotator=user, stage="label", payload=payload)
    coefficients = {c["name"]: c for c in run_agreement(project.slug)["coefficients"]}
    unitizing = coefficients["krippendorff_alpha_unitizing"]
    assert unitizing["observers"] == 2 and unitizing["units"] == 12 and unitizing["characters"] == 12 * 12
    assert unitizing["per_type"]["PS"] == pytest.approx(1.0)
    # the same computation from the units by hand: one continuum per sentence (no gap runs across two sentences)
    units = [(n, o, 0, 3, "PS") for n in range(12) for o in (0, 1)]
    units += [(n, o, 5, 9 if (o == 1 and n % 2) else 7, "LC") for n in range(12) for o in (0, 1)]
    by_hand = unitizing_alpha(pd.DataFrame(units, columns=["item", "observer", "begin", "end", "category"]),
                              np.full(12, 12), 2)
    assert unitizing["value"] == pytest.approx(by_hand.value)
    assert unitizing["per_type"]["LC"] == pytest.approx(by_hand.per_category["LC"]["alpha"])
    # partial credit: far above the all-or-nothing entity F1 of the slipped type
    assert 0.5 < unitizing["per_type"]["LC"] < 1.0
    assert coefficients["pairwise_entity_f1"]["per_type"]["LC"] == pytest.approx(0.5)


@pytest.mark.django_db
def test_mrc_unitizing_alpha_of_answer_spans(make_project, make_user):
    context = "올여름 장마가 17일 제주도에서 시작됐다."
    item_payload = {"title": "장마", "context": context, "question": "장마는 어디서 시작됐나?", "question_type": 1}
    project = make_project("mrc", k=3, slug="mrc-unitizing")
    users = [make_user(f"mu{i}") for i in range(3)]
    answers = [{"answer": {"text": "제주도", "start": 11}}, {"answer": {"text": "제주도에서", "start": 11}},
               {"answer": None}]
    for n in range(10):
        item = services.item_create(project=project, payload={**item_payload, "question": f"질문 {n}"},
                                    external_id=f"m{n}")
        for user, payload in zip(users, answers if n % 2 else [*answers[:2], answers[0]], strict=True):
            Annotation.objects.create(item=item, annotator=user, stage="validation", payload=payload)
    unitizing = {c["name"]: c for c in run_agreement(project.slug)["coefficients"]}["krippendorff_alpha_unitizing"]
    assert unitizing["observers"] == 3 and unitizing["units"] == 10
    assert unitizing["characters"] == 10 * len(context)
    units = [(n, o, 11, 14 if o != 1 else 16, "answer") for n in range(10) for o in range(3) if o < 2 or n % 2 == 0]
    by_hand = unitizing_alpha(pd.DataFrame(units, columns=["item", "observer", "begin", "end", "category"]),
                              np.full(10, len(context)), 3)
    assert unitizing["value"] == pytest.approx(by_hand.value)
    assert unitizing["per_category"]["answer"] == pytest.approx(by_hand.per_category["answer"]["alpha"])
    assert 0 < unitizing["value"] < 1


def test_unitizing_resample_sums_equal_the_resampled_study():
    """The interval's resamples: αu from the items' summed parts, weighted by how often a resample drew each item,
    equals αu computed afresh on a study where each item is repeated that often (the bilinear unit × gap term
    included)."""
    from annotation.agreement.unitizing import _disagreements, _parts

    rng = np.random.default_rng(5)
    lengths = rng.integers(8, 30, size=12)
    rows = []
    for item, length in enumerate(lengths):
        for observer in range(3):
            at = 0
            while at < length - 2:
                start = at + int(rng.integers(0, 4))
                stop = min(int(length), start + int(rng.integers(1, 6)))
                if start < stop:
                    rows.append((item, observer, start, stop, "AB"[int(rng.integers(0, 2))]))
                at = stop + 1
    units = pd.DataFrame(rows, columns=["item", "observer", "begin", "end", "category"])
    parts = _parts(units, lengths, 3)
    for _ in range(5):
        weights = rng.multinomial(len(lengths), np.full(len(lengths), 1 / len(lengths)))
        observed, expected = _disagreements((weights @ parts.columns)[None, :], parts, 3)
        repeated = np.repeat(np.arange(len(lengths)), weights)
        copies = [units[units["item"] == item].assign(item=copy) for copy, item in enumerate(repeated)]
        study = unitizing_alpha(pd.concat(copies), lengths[repeated], 3)
        for c, category in enumerate(parts.categories):
            fresh = study.per_category[category]
            assert observed[0, c] == pytest.approx(fresh["observed"], rel=1e-9)
            assert expected[0, c] == pytest.approx(fresh["expected"], rel=1e-9)


@pytest.mark.django_db
def test_unitizing_interval_in_the_report(make_project, make_user):
    project = make_project("ner", k=2, slug="ner-unitizing-ci")
    users = [make_user(f"nci{i}") for i in range(2)]
    sentence = "홍길동은 서울에서 산다"
    exact = {"entities": [{"start": 0, "end": 3, "type": "PS"}, {"start": 5, "end": 7, "type": "LC"}]}
    slipped = {"entities": [{"start": 0, "end": 2, "type": "PS"}, {"start": 5, "end": 9, "type": "LC"}]}
    for n in range(30):
        item = services.item_create(project=project, payload={"sentence": sentence}, external_id=f"c{n}")
        for user, payload in zip(users, (exact, slipped if n % 3 == 0 else exact), strict=True):
            Annotation.objects.create(item=item, annotator=user, stage="label", payload=payload)
    report = run_agreement(project.slug)
    unitizing = {c["name"]: c for c in report["coefficients"]}["krippendorff_alpha_unitizing"]
    lo, hi = unitizing["ci95"]
    assert lo < unitizing["value"] < hi <= 1.0
    for entity_type in ("PS", "LC"):
        type_lo, type_hi = unitizing["per_type_ci95"][entity_type]
        assert type_lo <= unitizing["per_type"][entity_type] <= type_hi
        assert type_lo < type_hi
    # the same seed, the same interval
    again = {c["name"]: c for c in run_agreement(project.slug)["coefficients"]}["krippendorff_alpha_unitizing"]
    assert again["ci95"] == unitizing["ci95"]


@pytest.mark.django_db
def test_dashboard_shows_each_types_unitizing_alpha(make_project, make_user, django_capture_on_commit_callbacks):
    from django.test import Client
    from django.urls import reverse

    from tests.site.visible_text import offending_text

    project = make_project("ner", k=2, slug="ner-unitizing-page")
    users = [make_user(f"nup{i}") for i in range(2)]
    exact = {"entities": [{"start": 0, "end": 3, "type": "PS"}, {"start": 5, "end": 7, "type": "LC"}]}
    slipped = {"entities": [{"start": 0, "end": 3, "type": "PS"}, {"start": 5, "end": 9, "type": "LC"}]}
    for n in range(16):
        item = services.item_create(project=project, payload={"sentence": "홍길동은 서울에서 산다"},
                                    external_id=f"p{n}")
        for user, payload in zip(users, (exact, slipped if n % 2 else exact), strict=True):
            Annotation.objects.create(item=item, annotator=user, stage="label", payload=payload)
    url = reverse("annotation:review-dashboard", args=[project.pk])
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(project.created_by)
    with django_capture_on_commit_callbacks(execute=True):
        client.get(url)
    unitizing = {c["name"]: c for c in run_agreement(project.slug)["coefficients"]}["krippendorff_alpha_unitizing"]
    lo, hi = unitizing["per_type_ci95"]["LC"]
    for language, words in (("en", "Krippendorff&#x27;s unitizing alpha of each entity type"),
                            ("ko", "개체 유형별 Krippendorff 단위화 알파")):
        client = Client(HTTP_ACCEPT_LANGUAGE=language)
        client.force_login(project.created_by)
        page = client.get(url).content.decode()
        section = page[page.index('<section class="card breakdown per-subject">'):]
        section = section[:section.index("</section>")]
        assert words in section
        assert f"{unitizing['per_type']['LC']:.3f}" in section and f"[{lo:.3f}, {hi:.3f}]" in section
        if language == "ko":
            assert not offending_text(section), offending_text(section)
