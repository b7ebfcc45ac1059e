"""Model-assisted annotation in the browser: the NER and DP widgets pre-fill from the suggestion, mark the
parts still as suggested, Alt+A takes the suggestion as is, and the stored annotation records which parts
the annotator accepted and which they changed."""

from __future__ import annotations

import pytest

from annotation import services
from annotation.assist import SuggestionRow
from annotation.models import Annotation

from .conftest import screenshot, settle, sign_in_and_acknowledge, submit_and_reload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NER_SENTENCES = ["김철수는 서울에서 삼성전자에 다닌다.", "박영희가 부산에 갔다."]
NER_SUGGESTIONS = [
    {"entities": [{"start": 0, "end": 3, "type": "PS"}, {"start": 5, "end": 7, "type": "LC"},
                  {"start": 10, "end": 14, "type": "OG"}]},
    {"entities": [{"start": 0, "end": 3, "type": "PS"}, {"start": 5, "end": 7, "type": "LC"}]},
]


def suggest(seeded, payloads) -> None:
    stage = seeded.project.task.suggestion_stages[0]
    result = services.suggestions_replace(project=seeded.project, model_version="test-model-1", source="upload", rows=[
        SuggestionRow(item.pk, stage, payload, 0.83, 0.2) for item, payload in zip(seeded.items, payloads,
                                                                                   strict=True)])
    assert result["stored"] == len(payloads), result
    services.assist_settings_update(project=seeded.project, show=True, fraction=1.0)


def annotation_of(seeded, index: int) -> Annotation:
    return Annotation.objects.get(item=seeded.items[index], annotator=seeded.annotator)


def test_ner_prefills_from_the_suggestion_and_records_accepted_spans(page, seed) -> None:
    seeded = seed("ner", payloads=[{"sentence": s} for s in NER_SENTENCES])
    suggest(seeded, NER_SUGGESTIONS)
    sign_in_and_acknowledge(page, seeded)
    banner = page.locator("#ws-suggestion")
    assert banner.is_visible() and "test-model-1" in banner.inner_text() and "83%" in banner.inner_text()
    assert "Alt+A" in page.locator("#ws-shortcuts").inner_text()
    chips = page.locator(".entity-list li")
    assert [chips.nth(i).get_attribute("data-type") for i in range(3)] == ["PS", "LC", "OG"]
    assert [chips.nth(i).get_attribute("data-suggested") for i in range(3)] == ["true", "true", "true"]
    assert page.locator(".span-text .ch.mark.suggested").count() == 3 + 2 + 4
    # The annotator disagrees on 서울: select it (characters 5–6) and make it an organisation.
    for _ in range(5):
        page.keyboard.press("ArrowRight")
    page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("3")  # OG
    assert [chips.nth(i).get_attribute("data-suggested") for i in range(3)] == ["true", "false", "true"]
    screenshot(page, "assist-ner")
    assert submit_and_reload(page) == seeded.items[1].pk
    first = annotation_of(seeded, 0)
    assert first.suggestion_shown and first.suggestion_accepted is False
    assert [(p["start"], p["status"], p.get("how")) for p in first.suggestion_parts["parts"]] == [
        (0, "accepted", None), (5, "changed", "type"), (10, "accepted", None)]
    assert first.payload["entities"][1] == {"start": 5, "end": 7, "type": "OG"}

    # The second suggestion is right: Alt+A takes it as is.
    assert page.locator(".entity-list li[data-suggested=true]").count() == 2
    page.keyboard.press("Alt+a")
    page.wait_for_selector("#ws-empty")
    settle(page)
    second = annotation_of(seeded, 1)
    assert second.suggestion_shown and second.suggestion_accepted is True
    assert second.payload == NER_SUGGESTIONS[1]
    assert (second.suggestion_parts["accepted"], second.suggestion_parts["changed"]) == (2, 0)


DP_TOKENS = [("나는", "NP+JX"), ("밥을", "NNG+JKO"), ("먹었다.", "VV+EP+EF+SF")]


def test_dp_prefills_arcs_from_the_suggestion_and_records_accepted_arcs(page, seed) -> None:
    tokens = [{"index": i + 1, "form": form, "lemma": form, "pos": pos} for i, (form, pos) in enumerate(DP_TOKENS)]
    payload = {"sentence": " ".join(f for f, _ in DP_TOKENS), "tokens": tokens}
    seeded = seed("dp", payloads=[payload, payload])
    suggestion = {"heads": [3, 3, 0], "deprels": ["NP_SBJ", "NP_OBJ", "VP"]}
    suggest(seeded, [suggestion, suggestion])
    sign_in_and_acknowledge(page, seeded)
    assert page.locator("#ws-suggestion").is_visible()
    heads = page.locator(".dp-table input.head")
    deprels = page.locator(".dp-table input.deprel")
    assert [heads.nth(i).input_value() for i in range(3)] == ["3", "3", "0"]
    assert [deprels.nth(i).input_value() for i in range(3)] == ["NP_SBJ", "NP_OBJ", "VP"]
    rows = page.locator(".dp-table tbody tr")
    assert [rows.nth(i).get_attribute("data-suggested") for i in range(3)] == ["true", "true", "true"]
    assert page.locator(".dp-arcs path.suggested").count() == 3
    # Token 1 is selected: N attaches it to the next eojeol instead of the suggested head 3.
    page.keyboard.press("n")
    assert heads.nth(0).input_value() == "2"
    assert [rows.nth(i).get_attribute("data-suggested") for i in range(3)] == ["false", "true", "true"]
    screenshot(page, "assist-dp")
    assert submit_and_reload(page) == seeded.items[1].pk
    first = annotation_of(seeded, 0)
    assert first.suggestion_shown and first.suggestion_accepted is False
    assert first.payload == {"heads": [2, 3, 0], "deprels": ["NP_SBJ", "NP_OBJ", "VP"]}
    assert [(p["token"], p["status"], p.get("how")) for p in first.suggestion_parts["parts"]] == [
        (1, "changed", "head"), (2, "accepted", None), (3, "accepted", None)]
