"""Agreement broken down per label (one-vs-rest α), per annotator pair (Cohen's κ) and per guideline version,
through the ``agreement`` command, against ``krippendorff`` and scikit-learn."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from annotation import services
from annotation.agreement import breakdowns
from annotation.agreement.measures.base import MIN_SHARED, Categories
from annotation.models import Annotation
from tests.agreement.breakdown_data import LABELS, bulk_annotations, guideline_version, noisy_labels
from tests.builders import run_agreement


@pytest.mark.django_db
def test_per_label_alpha_equals_the_package_on_the_binarised_matrix(make_project, make_user):
    project = make_project("tc", k=3, slug="per-label")
    users = [make_user(f"pl{i}") for i in range(4)]
    labels = noisy_labels(np.random.default_rng(3), 300, [0.9, 0.8, 0.7, 0.5])
    bulk_annotations(project, labels, users)

    report = run_agreement(project.slug)

    section = report["per_label"]
    assert section["kind"] == "label" and section["level"] == "nominal"
    pairable = (labels >= 0).sum(axis=1) >= 2
    assert section["items"] == int(pairable.sum())
    by_label = {entry["label"]: entry for entry in section["labels"]}
    for code, label in enumerate(LABELS):
        binarised = np.where(labels < 0, np.nan, (labels == code).astype(float)).T  # coders × units
        entry = by_label[label]
        assert entry["value"] == pytest.approx(krippendorff.alpha(reliability_data=binarised,
                                                                  level_of_measurement="nominal"), abs=1e-12)
        lo, hi = entry["ci95"]
        assert lo < entry["value"] < hi and hi - lo < 0.5
        assert entry["annotations"] == int(((labels == code) & pairable[:, None]).sum())
        assert entry["items"] == int(((labels == code) & pairable[:, None]).any(axis=1).sum())
    # the old keys stay
    assert {"coefficients", "pairs", "confusion", "annotator_quality", "timeline"} <= report.keys()


def test_per_label_interval_is_seeded_and_a_never_used_label_has_no_value():
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 2, 400)  # labels 0 and 1 only; label 2 is never used
    categories = Categories(["a", "b", "c"], codes, np.repeat(np.arange(200), 2), 200, np.tile([1, 2], 200))
    first = breakdowns.per_label(categories, seed=1, n_boot=500)
    assert first == breakdowns.per_label(categories, seed=1, n_boot=500)
    assert first["labels"][2] == {"label": "c", "items": 0, "annotations": 0, "value": None, "ci95": [None, None]}
    # with two labels in use, each one-vs-rest α is the overall α
    overall = krippendorff.alpha(reliability_data=codes.reshape(200, 2).T.astype(float), level_of_measurement="nominal")
    assert first["labels"][0]["value"] == pytest.approx(overall) == first["labels"][1]["value"]


@pytest.mark.django_db
def test_sts_per_band_alpha_bins_the_scores(make_project, make_user):
    project = make_project("sts", k=3, slug="per-band")
    users = [make_user(f"pb{i}") for i in range(3)]
    rng = np.random.default_rng(5)
    truth = rng.uniform(0, 5, 200)
    scores = np.clip(np.round(truth[:, None] + rng.normal(0, 0.6, (200, 3)), 1), 0, 5)
    bulk_annotations(project, scores, users, score=True)

    section = run_agreement(project.slug)["per_label"]

    assert section["kind"] == "score band" and [e["label"] for e in section["labels"]] == [
        "0–1", "1–2", "2–3", "3–4", "4–5"]
    bands = np.minimum(np.floor(scores), 4)
    for band, entry in enumerate(section["labels"]):
        binarised = (bands == band).astype(float).T
        assert entry["value"] == pytest.approx(krippendorff.alpha(reliability_data=binarised,
                                                                  level_of_measurement="nominal"), abs=1e-12)
        assert entry["annotations"] == int((bands == band).sum())


@pytest.mark.django_db
def test_pair_kappa_equals_scikit_learn_with_intervals_and_the_minimum(make_project, make_user):
    project = make_project("tc", k=3, slug="per-pair")
    users = [make_user(f"pp{i}") for i in range(4)]
    labels = noisy_labels(np.random.default_rng(11), 200, [0.95, 0.8, 0.6, 0.9], missing=0.1)
    labels[:, 3] = -1
    labels[:MIN_SHARED - 1, 3] = labels[:MIN_SHARED - 1, 0]  # the fourth shares too few items with anyone
    bulk_annotations(project, labels, users)

    section = run_agreement(project.slug)["pair_kappa"]

    assert section["min_shared_items"] == MIN_SHARED and section["metric"] == "cohen_kappa"
    ids = [u.pk for u in users]
    assert section["pairs_below_minimum"] == 3
    assert {(p["a"], p["b"]) for p in section["pairs"]} == {(ids[0], ids[1]), (ids[0], ids[2]), (ids[1], ids[2])}
    for pair in section["pairs"]:
        i, j = ids.index(pair["a"]), ids.index(pair["b"])
        both = (labels[:, i] >= 0) & (labels[:, j] >= 0)
        assert pair["items"] == int(both.sum())
        assert pair["value"] == pytest.approx(cohen_kappa_score(labels[both, i], labels[both, j]), abs=1e-12)
        lo, hi = pair["ci95"]
        assert lo < pair["value"] < hi
    kappas = {(ids.index(p["a"]), ids.index(p["b"])): p["value"] for p in section["pairs"]}
    assert kappas[(0, 1)] > kappas[(1, 2)]  # the worst annotator's pair agrees least


@pytest.mark.django_db
def test_guideline_versions_compared_with_a_bootstrap_interval(make_project, make_user):
    project = make_project("tc", k=3, slug="per-version")
    users = [make_user(f"pv{i}") for i in range(3)]
    v1, v2, v3 = guideline_version(project, 1), guideline_version(project, 2), guideline_version(project, 3)
    rng = np.random.default_rng(7)
    unclear = noisy_labels(rng, 150, [0.6, 0.55, 0.5], missing=0)
    clear = noisy_labels(rng, 150, [0.95, 0.95, 0.9], missing=0)
    few = noisy_labels(rng, 10, [0.95, 0.95, 0.9], missing=0)
    bulk_annotations(project, unclear, users, guideline=v1, prefix="a")
    bulk_annotations(project, clear, users, guideline=v2, prefix="b")
    bulk_annotations(project, few, users, guideline=v3, prefix="c")
    bulk_annotations(project, clear[:20], users, prefix="d")  # no version recorded (imported before any guideline)

    section = run_agreement(project.slug)["guideline_versions"]

    assert section["min_items"] == breakdowns.MIN_VERSION_ITEMS
    assert section["annotations_without_version"] == 60
    versions = {entry["version"]: entry for entry in section["versions"]}
    for version, labels in ((1, unclear), (2, clear), (3, few)):
        expected = krippendorff.alpha(reliability_data=labels.T.astype(float), level_of_measurement="nominal")
        assert versions[version]["value"] == pytest.approx(expected, abs=1e-9)
        assert versions[version]["items"] == len(labels) and versions[version]["annotations"] == labels.size
    helped, small = section["changes"]
    assert (helped["from"], helped["to"]) == (1, 2) and helped["verdict"] == breakdowns.IMPROVED
    assert helped["difference"] == pytest.approx(versions[2]["value"] - versions[1]["value"])
    assert 0 < helped["ci95"][0] < helped["difference"] < helped["ci95"][1]
    assert small["verdict"] == breakdowns.TOO_FEW  # 10 items under version 3


@pytest.mark.django_db
def test_no_clear_difference_between_versions_of_the_same_quality(make_project, make_user):
    project = make_project("tc", k=3, slug="same-version")
    users = [make_user(f"sv{i}") for i in range(3)]
    v1, v2 = guideline_version(project, 1), guideline_version(project, 2)
    rng = np.random.default_rng(8)
    labels = noisy_labels(rng, 100, [0.8, 0.8, 0.8], missing=0)
    bulk_annotations(project, labels, users, guideline=v1, prefix="a")
    bulk_annotations(project, rng.permutation(labels), users, guideline=v2, prefix="b")  # the same answers, other items
    (change,) = run_agreement(project.slug)["guideline_versions"]["changes"]
    assert change["difference"] == pytest.approx(0, abs=1e-12)
    assert change["verdict"] == breakdowns.UNCLEAR and change["ci95"][0] < 0 < change["ci95"][1]


@pytest.mark.django_db
def test_structured_tasks_get_versions_but_no_label_breakdown(make_project, make_user):
    project = make_project("ner", k=2, slug="ner-version")
    users = [make_user(f"nv{i}") for i in range(2)]
    guideline = guideline_version(project, 1)
    for n in range(3):
        item = services.item_create(project=project, payload={"sentence": "홍길동은 서울에 산다"}, external_id=f"n{n}")
        for user in users:
            Annotation.objects.create(item=item, annotator=user, stage="label", guideline=guideline,
                                      payload={"entities": [{"start": 0, "end": 3, "type": "PS"}]})
    report = run_agreement(project.slug)
    assert report["per_label"] is None and report["pair_kappa"] is None
    (version,) = report["guideline_versions"]["versions"]
    assert version["version"] == 1 and version["items"] == 3 and version["value"] is not None


@pytest.mark.django_db
def test_ner_per_type_f1_has_bootstrap_intervals(make_project, make_user):
    project = make_project("ner", k=2, slug="ner-types")
    users = [make_user(f"nt{i}") for i in range(2)]
    sentence = "홍길동은 서울에 산다"
    person, place = {"start": 0, "end": 3, "type": "PS"}, {"start": 5, "end": 7, "type": "LC"}
    rng = np.random.default_rng(1)
    for n in range(40):
        item = services.item_create(project=project, payload={"sentence": sentence}, external_id=f"t{n}")
        # both always mark the person; the second marks the place on a random half of the sentences
        answers = [[person, place], [person, place] if rng.random() < 0.5 else [person]]
        for user, entities in zip(users, answers, strict=True):
            Annotation.objects.create(item=item, annotator=user, stage="label", payload={"entities": entities})
    f1 = next(c for c in run_agreement(project.slug)["coefficients"] if c["name"] == "pairwise_entity_f1")
    assert f1["per_type"]["PS"] == 1.0 and f1["per_type_ci95"]["PS"] == [1.0, 1.0]
    lo, hi = f1["per_type_ci95"]["LC"]
    assert lo < f1["per_type"]["LC"] < hi and lo > 0.4 and hi < 1.0


@pytest.mark.django_db
def test_dst_per_slot_alpha_has_bootstrap_intervals(make_project, make_user):
    project = make_project("dst", k=2, slug="dst-slots")
    users = [make_user(f"ds{i}") for i in range(2)]
    dialogue = {"domains": ["숙소"], "dialogue": [{"role": "user", "text": "서울 동쪽의 저렴한 숙소 있나요?"}]}
    cheap, east = "숙소-가격대-저렴", "숙소-지역-서울 동쪽"
    rng = np.random.default_rng(2)
    for n in range(40):
        item = services.item_create(project=project, payload=dialogue, external_id=f"d{n}")
        second = [cheap, east] if rng.random() < 0.6 else [cheap]
        for user, state in zip(users, ([cheap, east], second), strict=True):
            Annotation.objects.create(item=item, annotator=user, stage="label", payload={"states": [state]})
    alpha = next(c for c in run_agreement(project.slug)["coefficients"] if c["name"] == "krippendorff_alpha_slots")
    area = alpha["per_slot"]["숙소-지역"]
    assert area["ci95"][0] < area["alpha"] < area["ci95"][1]
    assert alpha["per_slot"]["숙소-가격대"]["ci95"] == [None, None]  # one value only: α and its interval undefined


@pytest.mark.django_db
def test_dp_per_relation_alpha_equals_the_package_with_sentence_intervals(make_project, make_user):
    project = make_project("dp", k=3, slug="dp-relations")
    users = [make_user(f"dr{i}") for i in range(3)]
    tokens = [{"index": i + 1, "form": f, "lemma": f, "pos": "NNG"} for i, f in enumerate(["철수가", "밥을", "먹었다"])]
    rng = np.random.default_rng(6)
    relations = []  # per sentence, per annotator: the three DEPRELs
    for n in range(40):
        item = services.item_create(project=project, payload={"sentence": "철수가 밥을 먹었다", "tokens": tokens},
                                    external_id=f"r{n}")
        given = []
        for user in users:
            # the object is sometimes called an adjunct; subject and predicate are always agreed
            deprels = ["NP_SBJ", "NP_AJT" if rng.random() < 0.3 else "NP_OBJ", "VP"]
            Annotation.objects.create(item=item, annotator=user, stage="label",
                                      payload={"heads": [3, 3, 0], "deprels": deprels})
            given.append(deprels)
        relations.append(given)
    deprels = next(c for c in run_agreement(project.slug)["coefficients"] if c["name"] == "krippendorff_alpha_deprels")
    # reliability matrix: annotators × eojeol of all sentences, binarised per relation
    matrix = np.array([[r for sentence in relations for r in sentence[a]] for a in range(3)])
    for relation in ("NP_OBJ", "NP_AJT"):
        expected = krippendorff.alpha(reliability_data=(matrix == relation).astype(float),
                                      level_of_measurement="nominal")
        assert deprels["per_relation"][relation] == pytest.approx(expected, abs=1e-12)
        lo, hi = deprels["per_relation_ci95"][relation]
        assert lo < deprels["per_relation"][relation] < hi
    # the predicate is always agreed: α 1 in every resample
    assert deprels["per_relation"]["VP"] == 1.0 and deprels["per_relation_ci95"]["VP"] == [1.0, 1.0]
