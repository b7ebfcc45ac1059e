"""The shortcuts the agreement report takes for speed give what the plain computation gives: the packed read of
the annotations (PostgreSQL) and the portable one (SQLite), headlines of row subsets, grouped and reduced
bootstraps, integer row keys."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from annotation import services
from annotation.agreement import coefficients as co
from annotation.agreement.data import fetch_annotations, load
from annotation.agreement.measures import measure_for
from annotation.models import Annotation
from tests.builders import run_agreement

# -- reading the annotations ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_fetch_reads_numbers_flags_and_text_of_every_annotation(make_project, make_user):
    project = make_project("tc", k=3, slug="tc-fetch")
    users = [make_user(f"reader{i}") for i in range(3)]
    item = services.item_create(project=project, payload={"title": "제목"}, external_id="one")
    Annotation.objects.create(item=item, annotator=users[0], stage="label", payload={"label": "사회"},
                              seconds_spent=12.5, suggestion_shown=True)
    Annotation.objects.create(item=item, annotator=users[1], stage="label", payload={"label": "경제"},
                              seconds_spent=None)
    Annotation.objects.create(item=item, annotator=users[2], stage="label", payload={"other": 1}, imported=True,
                              suggestion_shown=True)

    rows = fetch_annotations(project, {"label": "payload.label"})
    order = np.argsort(rows["annotator"])
    rows = {name: values[order] for name, values in rows.items()}

    assert rows["item"].tolist() == [item.pk] * 3
    assert rows["annotator"].tolist() == [u.pk for u in users]
    assert rows["seconds"][0] == 12.5 and np.isnan(rows["seconds"][1])
    # a suggestion counts as shown only to an annotator of the project, never on an imported annotation
    assert rows["shown"].tolist() == [True, False, False]
    assert rows["imported"].tolist() == [False, False, True]
    assert rows["label"].tolist() == ["사회", "경제", None]
    created = Annotation.objects.get(item=item, annotator=users[0]).created_at
    assert abs(rows["created_at"][0] - pd.Timestamp(created).value) < 1e6  # nanoseconds since 1970

    data = load(project, {"label": "payload.label"})
    assert (data.annotations_made, data.annotations_assisted) == (2, 1)


@pytest.mark.django_db
def test_fetch_of_a_project_without_annotations_is_empty(make_project):
    project = make_project("ner", k=2, slug="ner-empty")
    services.item_create(project=project, payload={"sentence": "빈 문장"}, external_id="e")
    rows = fetch_annotations(project, {"payload": "payload", "sentence": "item.sentence"})
    assert all(len(values) == 0 for values in rows.values())
    report = run_agreement(project.slug)
    assert report["items_counted"] == 0 and report["items_excluded"]["fewer_than_2_annotations"] == 1


# -- headlines of row subsets equal the headline of the subset frame -------------------------------------------


def test_categorical_headline_of_a_mask_equals_the_subset_primary():
    rng = np.random.default_rng(3)
    labels = ["a", "b", "c", "zz"]
    rows = [(i, a, labels[int(rng.integers(0, 4))] if rng.random() > 0.05 else None)
            for i in range(300) for a in range(4) if rng.random() < 0.8]
    measure = measure_for("tc")
    frame = measure.prepare(pd.DataFrame(rows, columns=["item", "annotator", "label"]), {"labels": ["a", "b", "c"]})
    headline = measure.headline(frame, {})
    for mask in (frame["annotator"].to_numpy() != 2, frame["item"].to_numpy() < 120, np.ones(len(frame), bool)):
        expected = measure.primary(frame[mask], {}, n_boot=200)
        got = headline(mask, n_boot=200)
        assert got.value == pytest.approx(expected.value, abs=1e-12)
        assert got.ci95 == pytest.approx(expected.ci95, abs=1e-12)
        assert got.units == expected.units


def test_ner_headline_of_a_mask_equals_the_subset_primary():
    rng = np.random.default_rng(5)
    sentences = {i: "가" * int(rng.integers(0, 30)) for i in range(80)}
    rows, payloads = [], []
    for item, sentence in sentences.items():
        for annotator in range(3):
            entities = []
            if len(sentence) > 4:
                start = int(rng.integers(0, len(sentence) - 3))
                # "EXTRA" is outside the schema and only some rows use it: subsets must renumber the tags
                kind = "EXTRA" if annotator == 2 and item % 7 == 0 else ["PS", "LC"][int(rng.integers(0, 2))]
                entities.append({"start": start, "end": start + int(rng.integers(1, 4)), "type": kind})
            rows.append((item, annotator, None))
            payloads.append({"entities": entities})
    frame = pd.DataFrame(rows, columns=["item", "annotator", "payload"])
    frame["payload"] = payloads
    frame["sentence"] = [sentences[i] for i in frame["item"]]
    measure = measure_for("ner")
    schema = {"labels": ["PS", "LC", "OG"]}
    headline = measure.headline(frame, schema)
    for mask in (frame["annotator"].to_numpy() != 2, frame["item"].to_numpy() % 3 == 0, np.ones(len(frame), bool)):
        expected = measure.primary(frame[mask].reset_index(drop=True), schema, n_boot=100)
        got = headline(mask, n_boot=100)
        assert got.value == pytest.approx(expected.value, abs=1e-12)
        assert got.ci95 == pytest.approx(expected.ci95, abs=1e-12)
        assert got.units == expected.units


def test_ner_spans_taken_from_all_rows_equal_the_subset_decoded():
    """The report decodes every row once and takes the counted rows' part (``Spans.take``): the same arrays as
    decoding the counted rows, also when only the dropped rows use a type outside the schema."""
    rng = np.random.default_rng(9)
    rows, payloads, sentences = [], [], {}
    for item in range(60):
        sentences[item] = "나" * int(rng.integers(0, 25))
        for annotator in range(int(rng.integers(1, 4))):
            entities = []
            if len(sentences[item]) > 3:
                start = int(rng.integers(0, len(sentences[item]) - 2))
                kind = "ZZ" if item % 11 == 0 else ["LC", "PS"][annotator % 2]
                entities.append({"start": start, "end": start + 2, "type": kind})
            rows.append((item, annotator))
            payloads.append({"entities": entities})
    frame = pd.DataFrame(rows, columns=["item", "annotator"])
    frame["payload"] = payloads
    frame["sentence"] = [sentences[i] for i in frame["item"]]
    measure = measure_for("ner")
    schema = {"labels": ["PS", "LC", "OG"]}
    everything = measure.decode(frame, schema)
    for counted in (frame["item"].to_numpy() % 11 != 0, frame["annotator"].to_numpy() != 0,
                    frame.groupby("item")["item"].transform("size").to_numpy() >= 2):
        subset = frame[counted].reset_index(drop=True)
        taken, decoded = everything.take(counted, subset), measure._decode(subset, schema)
        assert taken.types == decoded.types and taken.n_items == decoded.n_items
        for name in ("entity_row", "entity_start", "entity_end", "entity_type", "tag_row", "tag", "tag_unit",
                     "unit_item", "row_item"):
            np.testing.assert_array_equal(getattr(taken, name), getattr(decoded, name), err_msg=name)
        pd.testing.assert_frame_equal(taken.frame, decoded.frame)


def test_ner_timeline_prefixes_reusing_whole_items_equal_the_subset_primary():
    """The all-rows headline keeps whole items' coincidence rows and counts only the items a prefix cuts through
    again; prefixes (and a prefix without one of the types, which takes the plain path) give the subset's alpha."""
    rng = np.random.default_rng(13)
    rows, payloads, sentences = [], [], {}
    for item in range(120):
        sentences[item] = "다" * int(rng.integers(0, 30))
        for annotator in range(int(rng.integers(1, 5))):
            entities = []
            if len(sentences[item]) > 4:
                start = int(rng.integers(0, len(sentences[item]) - 3))
                kind = "OG" if item >= 100 else ["PS", "LC"][int(rng.integers(0, 2))]
                entities.append({"start": start, "end": start + int(rng.integers(1, 4)), "type": kind})
            rows.append((item, annotator))
            payloads.append({"entities": entities})
    frame = pd.DataFrame(rows, columns=["item", "annotator"])
    frame["payload"] = payloads
    # annotations arrive in any order: prefixes cut through items
    frame = frame.sample(frac=1, random_state=3).reset_index(drop=True)
    frame["sentence"] = [sentences[i] for i in frame["item"]]
    measure = measure_for("ner")
    schema = {"labels": ["PS", "LC"]}
    everything, _ = measure.headlines(frame, frame, np.ones(len(frame), dtype=bool), schema)
    position = np.arange(len(frame))
    for end in (len(frame) // 4, len(frame) // 2, len(frame) - 7, len(frame)):
        prefix = position < end
        mask = prefix & (np.bincount(frame["item"][prefix], minlength=120) >= 2)[frame["item"]]
        expected = measure.primary(frame[mask].reset_index(drop=True), schema, n_boot=100)
        got = everything(mask, n_boot=100)
        assert got.value == pytest.approx(expected.value, abs=1e-12)
        assert got.ci95 == pytest.approx(expected.ci95, abs=1e-12)
        assert got.units == expected.units
    without_og = frame["item"].to_numpy() < 100
    assert everything(without_og).value == pytest.approx(measure.primary(frame[without_og], schema).value, abs=1e-12)


# -- coefficients ------------------------------------------------------------------------------------------------


def test_distinct_rows_by_integer_keys_match_the_projection_order():
    rng = np.random.default_rng(1)
    counts = rng.integers(0, 4, (5000, 6))
    distinct, inverse, multiplicity = co.distinct_rows(counts)
    np.testing.assert_array_equal(distinct[inverse], counts)
    projected = (distinct.astype(float) * np.random.default_rng(0).random(6)).sum(axis=1)
    assert (np.diff(projected) > 0).all()  # the order the float path gives
    floats, _, float_multiplicity = co.distinct_rows(counts.astype(float))
    np.testing.assert_array_equal(floats, distinct)
    np.testing.assert_array_equal(float_multiplicity, multiplicity)
    # weights: as if each row were repeated
    weights = rng.integers(1, 4, len(counts))
    _, _, weighted = co.distinct_rows(counts, weights)
    _, _, repeated = co.distinct_rows(np.repeat(counts, weights, axis=0))
    np.testing.assert_array_equal(weighted, repeated)


def test_grouped_items_give_the_alpha_and_interval_of_items_one_by_one():
    rng = np.random.default_rng(2)
    counts = rng.multinomial(4, [0.5, 0.3, 0.2], size=3000)
    domain = np.arange(3)
    grouped = co.alpha_with_ci(counts, None, len(counts), domain, "nominal", n_boot=300, package=False)
    one_by_one = co.alpha_with_ci(counts, np.arange(len(counts)), len(counts), domain, "nominal", n_boot=300,
                                  package=False)
    assert grouped[0] == pytest.approx(one_by_one[0], abs=1e-12)
    assert grouped[1] == pytest.approx(one_by_one[1], abs=1e-12)


def test_nominal_interval_from_reduced_sums_equals_the_full_formula():
    rng = np.random.default_rng(4)
    counts = rng.multinomial(3, [0.6, 0.2, 0.1, 0.1], size=2000)
    rows, multiplicity = co.item_rows(counts, None, len(counts))
    full = co.bootstrap_sums(rows, lambda s: co.alpha_from_coincidences(s.reshape(-1, 4, 4), np.arange(4), "nominal"),
                             n_boot=400, weights=multiplicity)
    reduced = co.alpha_with_ci(counts, None, len(counts), np.arange(4), "nominal", n_boot=400, package=False)[1]
    assert reduced == pytest.approx(full, abs=1e-12)


def test_drawing_items_and_drawing_distinct_rows_give_the_same_interval(monkeypatch):
    rng = np.random.default_rng(6)
    per_item = rng.random((1500, 5))  # every row distinct: the item-drawing path
    statistic = (lambda s: s[:, 0] / s[:, 1:].sum(axis=1))  # noqa: E731
    monkeypatch.setattr(co, "MAX_BINOMIALS", 0)
    drawn_items = co.bootstrap_sums(per_item, statistic, n_boot=4000)
    monkeypatch.setattr(co, "MAX_BINOMIALS", 10 ** 12)
    multinomial = co.bootstrap_sums(per_item, statistic, n_boot=4000)
    assert drawn_items != multinomial  # other random numbers…
    assert drawn_items == pytest.approx(multinomial, abs=0.002)  # …the same distribution
    value = statistic(per_item.sum(axis=0)[None, :])[0]
    assert drawn_items[0] < value < drawn_items[1]
