"""The checker of Korean pages (tests/site/visible_text.py) sees what a Korean reader would stumble on and lets
clean Korean, proper names, key names, users' data and marked English subtrees pass."""

from __future__ import annotations

import pytest

from tests.site.visible_text import offending_text


def page(body: str) -> str:
    return (f'<!doctype html><html lang="ko"><head><meta charset="utf-8"><title>일치도 · Goldset</title>'
            f'<script>const names = {{"krippendorff_alpha": "x"}};</script><style>.needs_review {{}}</style>'
            f'</head><body>{body}</body></html>')


@pytest.mark.parametrize("body, expected", [
    ("<p>137 item</p>", "English: 137 item"),
    ("<td>entropy of the labels (0 = unanimous, 1 = uniform)</td>", "English: entropy of the labels"),
    ("<td>{'label': 'IT과학'}</td>", "raw data: {'label': 'IT과학'}"),
    ('<pre>{"start_idx": 3, "end_idx": 5}</pre>', "raw data"),
    ('<span class="badge">needs_review</span>', "identifier: needs_review"),
    ("<th>krippendorff_alpha</th>", "identifier: krippendorff_alpha"),
    ("<li>fewer_than_2_annotations</li>", "identifier: fewer_than_2_annotations"),
    ("<td>nominal</td>", "English: nominal"),
    ("<td>clear</td>", "English: clear"),
    ('<input placeholder="Search items">', "English: Search items"),
    ('<button aria-label="Close dialog">×</button>', "English: Close dialog"),
    ('<img alt="Agreement plot" src="p.png">', "English: Agreement plot"),
    ('<input type="submit" value="Save">', "English: Save"),
    ('<span title="much faster than others">⚠</span>', "English: much faster than others"),
    ("<svg><text>annotators</text></svg>", "English: annotators"),
    ('<p hidden>imported 3 items and 0 annotations</p>', "English: imported 3 items"),
    ("<template><p>Nothing yet</p></template>", "English: Nothing yet"),
    ('<div lang="ko"><p>정답 규칙: span_majority</p></div>', "identifier: span_majority"),
    # a subtree closed early leaves the rest of the page checked
    ('<div lang="en"><p>An English card</p></div><p>Guideline versions used</p>', "English: Guideline versions"),
])
def test_it_catches_identifiers_raw_data_and_english(body, expected):
    found = offending_text(page(body))
    assert any(expected in finding for finding in found), found


def test_clean_korean_passes():
    body = ('<nav><a href="/">Goldset</a> <a href="/projects/1/agreement/">일치도</a></nav>'
            '<main><h1>데모 · KLUE-TC 주제 분류</h1><table><tr><th>Krippendorff 알파 (명목)</th><td>0.86</td></tr>'
            '<tr><th>매크로 F1</th><td>81.8</td></tr><tr><td>Fleiss 카파</td><td>α = 0.91, n = 137</td></tr></table>'
            '<p>항목 137개 · JSON, CSV, Parquet 파일 · <a href="/api/docs/">API</a> · 태그 PS, NP_SBJ</p>'
            '<p>단축키 <kbd>Alt+G</kbd>, <kbd>Enter</kbd> · 파일 klue/train.jsonl, ynat-v1.1_dev.json</p>'
            '<span title="판정 필요">⚠</span><input placeholder="항목 검색"><button type="submit">저장</button>'
            '<div lang="en"><h2>Dataset card</h2><p>Raters appear in the files under opaque ids.</p></div>'
            '<p>Label Studio, doccano 형식</p><td>SHA-256 8ec2f82d5951…</td><td>9193ec8929a4841b3ae540b28a3cddd5</td>'
            '<form><button name="language" value="ko">한국어</button><textarea>{"label": "IT과학"}</textarea></form>'
            '<p>지침 v1, 배포 v0.1.0</p></main>')
    assert offending_text(page(body)) == []


def test_the_users_data_is_exempt_where_it_occurs_and_only_there():
    body = "<h1>Demo KLUE-TC (Topic classification)</h1><td>sim-gaeun</td><td>ynat-v1_dev_00001</td>"
    data = ["Demo KLUE-TC (Topic classification)", "sim-gaeun", "ynat-v1_dev_00001"]
    assert offending_text(page(body), data=data) == []
    assert offending_text(page(body + "<p>Topic classification</p>"), data=data) == [
        "English: Topic classification"]
    # a name is blanked as a whole word only: "sim" does not hide "simulated"
    assert offending_text(page("<p>simulated annotators</p>"), data=["sim"]) == ["English: simulated annotators"]


def test_script_style_and_invisible_attributes_are_not_read():
    body = ('<div class="needs_review" data-status="needs_adjudication" id="start_idx">정답</div>'
            '<script type="application/json">{"label": "IT과학"}</script><a href="/x?sort=start_idx">정렬</a>')
    assert offending_text(page(body)) == []
