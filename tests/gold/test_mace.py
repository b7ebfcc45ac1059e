"""MACE as a project's gold rule: the estimator against crowd-kit's on simulated annotators, and a project that
picks it on its settings page and computes its gold on the gold page and through the API."""

from __future__ import annotations

import html

import numpy as np
import pytest

from annotation import services
from annotation.gold.mace import mace
from annotation.models import Annotation, GoldLabel
from tests.annotation.settings_form import manager_of, posted, settings_url
from tests.builders import client_for
from tests.gold.simulated import COMPETENCE, simulated

#: Simulated annotators: who knows the answer how often (θ); the rest spam with a preference of their own.




@pytest.mark.filterwarnings("ignore:The inplace keyword")
def test_mace_agrees_with_crowd_kit_on_simulated_annotators():
    pd = pytest.importorskip("pandas")
    crowdkit = pytest.importorskip("crowdkit.aggregation")
    for seed in (7, 11, 23):
        labels, truth = simulated(seed)
        ours = mace(labels, 3)
        items, annotators = np.nonzero(labels >= 0)
        frame = pd.DataFrame({"task": items, "worker": annotators, "label": labels[items, annotators]})
        # crowd-kit draws every restart from the same random_state, so one restart is all of them.
        theirs = crowdkit.MACE(method="em", n_restarts=1, n_iter=100, random_state=0).fit(frame)
        their_labels = theirs.labels_.sort_index().to_numpy()
        worker_order = np.argsort(pd.factorize(frame["worker"])[1].to_numpy())
        their_competence = theirs.spamming_[worker_order, 1]  # column 1: the probability of knowing
        # The figures docs/agreement.md states: 0.985, 0.965, 0.963 of the labels and r = 0.998, 0.994, 0.973.
        assert (their_labels == ours.labels).mean() >= 0.96, seed
        assert np.corrcoef(their_competence, ours.competence)[0, 1] >= 0.97, seed
        # Where the two differ, ours (the best of ten starts) is no further from the truth.
        assert (ours.labels == truth).mean() >= (their_labels == truth).mean(), seed
        assert np.corrcoef(COMPETENCE, ours.competence)[0, 1] >= 0.97, seed
        assert (ours.labels == truth).mean() >= 0.95, seed
        assert np.allclose(ours.posteriors.sum(axis=1), 1)


def test_mace_beats_the_majority_when_most_annotators_spam():
    labels, truth = simulated(5, per_item=7)
    votes = np.stack([(labels == k).sum(axis=1) for k in range(3)], axis=1)
    majority = (votes.argmax(axis=1) == truth).mean()
    fit = mace(labels, 3)
    assert (fit.labels == truth).mean() > majority + 0.03
    # The same data give the same fit: fixed seed, the best of the same restarts.
    again = mace(labels, 3)
    assert np.array_equal(fit.posteriors, again.posteriors) and np.array_equal(fit.competence, again.competence)


def test_a_small_example_by_hand():
    # Two annotators agree on both items, a third contradicts them: the two come out competent, the third not,
    # and each item's posterior favours the pair's label.
    fit = mace(np.array([[0, 0, 1], [1, 1, 0], [0, 0, 1], [1, 1, 0]]), 2)
    assert fit.labels.tolist() == [0, 1, 0, 1]
    assert fit.competence[0] > 0.9 and fit.competence[1] > 0.9 and fit.competence[2] < 0.1


@pytest.mark.django_db
def test_a_project_picks_mace_and_computes_its_gold_on_the_gold_page_and_through_the_api(make_project, make_user,
                                                                                         api):
    project = make_project("tc", k=5, slug="gold-mace")
    manager = manager_of(project)
    client = client_for(manager)
    page = html.unescape(client.get(settings_url(project), HTTP_ACCEPT_LANGUAGE="ko").content.decode())
    assert 'value="mace"' in page and "MACE(주석자가 추측하지 않고 답을 아는 빈도로 주석자마다 가중치를 줌)" in page
    response = client.post(settings_url(project), posted(project, gold_rule="mace"))
    assert response.status_code == 302, response.content.decode()
    project.refresh_from_db()
    assert project.options["gold_rule"] == "mace"

    labels, truth = simulated(3, n_items=60, n_classes=3)
    names = ["정치", "경제", "사회"]
    users = [make_user(f"mace-u{j}") for j in range(labels.shape[1])]
    items = []
    for i, row in enumerate(labels):
        item = services.item_create(project=project, payload={"title": f"제목 {i}"}, external_id=f"m{i}")
        items.append(item)
        for user, value in zip(users, row, strict=True):
            if value >= 0:
                Annotation.objects.create(item=item, annotator=user, stage="label", payload={"label": names[value]})

    shown = client.post(f"/projects/{project.pk}/gold/compute/", HTTP_ACCEPT_LANGUAGE="ko", follow=True)
    assert shown.status_code == 200
    golds = {g.item_id: g for g in GoldLabel.objects.filter(item__project=project)}
    # The service codes the labels in sorted order and the annotators by id (their creation order here).
    coded = sorted(names)
    fit = mace(np.array([[coded.index(names[v]) if v >= 0 else -1 for v in row] for row in labels]), 3)
    for i, item in enumerate(items):
        gold = golds[item.pk]
        assert gold.rule == "mace"
        assert set(gold.detail["annotator_competence"]) == {str(u.pk) for u, v in zip(users, labels[i],
                                                                                       strict=True) if v >= 0}
        assert sum(gold.detail["posteriors"].values()) == pytest.approx(1, abs=1e-5)
        assert [gold.detail["posteriors"][c] for c in coded] == pytest.approx(fit.posteriors[i].tolist(), abs=1e-6)
        if gold.status == "resolved":
            assert gold.payload["label"] == max(gold.detail["posteriors"], key=gold.detail["posteriors"].get)
    resolved = [i for i, item in enumerate(items) if golds[item.pk].status == "resolved"]
    correct = sum(golds[items[i].pk].payload["label"] == names[truth[i]] for i in resolved)
    assert len(resolved) >= 50 and correct / len(resolved) >= 0.9
    gold_page = html.unescape(client.get(f"/projects/{project.pk}/gold/", HTTP_ACCEPT_LANGUAGE="ko").content.decode())
    assert "MACE 모형" in gold_page

    computed = api(manager).post(f"/api/projects/{project.pk}/gold/")
    assert computed.status_code == 200, computed.content
    assert sum(computed.json()["statuses"].values()) == 60
    listed = api(manager).get(f"/api/projects/{project.pk}/gold/")
    assert listed.status_code == 200
    first = listed.json()["results"][0]
    assert first["rule"] == "mace" and "annotator_competence" in first["detail"]


@pytest.mark.django_db
def test_mace_is_refused_for_a_task_without_categorical_gold(make_project):
    project = make_project("ner", slug="gold-mace-ner")
    project.options = {"gold_rule": "mace"}
    project.save()
    with pytest.raises(services.ServiceError, match="MACE applies to categorical tasks, not ner"):
        from annotation.gold.services import gold_compute

        gold_compute(project)
