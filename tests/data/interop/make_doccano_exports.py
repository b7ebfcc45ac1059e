"""Make the doccano fixtures: three small projects (text classification, sequence labelling, relation
extraction) with Korean examples and three annotators, labelled through doccano's REST API and exported
with its JSONL export (a ZIP with one file per annotator). See README.md for how doccano was started.

usage: python make_doccano_exports.py BASE_URL ADMIN_PASSWORD OUT_DIR   (needs requests)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from doccano_client import annotators, login

BASE, ADMIN_PASS, OUT = sys.argv[1], sys.argv[2], Path(sys.argv[3])
ANNOTATORS = ("kim", "lee", "park")


admin = login(BASE, "admin", ADMIN_PASS)
roles = {r["name"]: r["id"] for r in admin.get(f"{BASE}/v1/roles").json()}
users = annotators(BASE, admin, ANNOTATORS)


def project(name: str, project_type: str, resourcetype: str, **extra: Any) -> int:
    r = admin.post(f"{BASE}/v1/projects", json={"name": name, "description": "Goldset interop fixture",
                                                 "guideline": "", "project_type": project_type,
                                                 "resourcetype": resourcetype, **extra})
    assert r.status_code == 201, r.text
    pid = r.json()["id"]
    for uid, _ in users.values():
        admin.post(f"{BASE}/v1/projects/{pid}/members", json={"user": uid, "role": roles["annotator"]})
    return pid


def types(pid: int, kind: str, names: list[str]) -> dict[str, int]:
    ids = {}
    for i, text in enumerate(names):
        r = admin.post(f"{BASE}/v1/projects/{pid}/{kind}", json={"text": text, "background_color": "#209cee",
                                                                 "text_color": "#ffffff", "suffix_key": None,
                                                                 "prefix_key": None, "id": None, "order": i})
        assert r.status_code == 201, r.text
        ids[text] = r.json()["id"]
    return ids


def examples(pid: int, texts: list[str]) -> list[int]:
    ids = []
    for text in texts:
        r = admin.post(f"{BASE}/v1/projects/{pid}/examples", json={"text": text, "meta": {}})
        assert r.status_code == 201, r.text
        ids.append(r.json()["id"])
    return ids


def post(user: str, pid: int, example: int, what: str, body: dict[str, Any]) -> int:
    r = users[user][1].post(f"{BASE}/v1/projects/{pid}/examples/{example}/{what}", json=body)
    assert r.status_code == 201, r.text
    return r.json()["id"]


def export(pid: int, dest: Path) -> None:
    r = admin.post(f"{BASE}/v1/projects/{pid}/download", json={"format": "JSONL", "exportApproved": False})
    task_id = r.json()["task_id"]
    while not admin.get(f"{BASE}/v1/tasks/status/{task_id}").json()["ready"]:
        time.sleep(0.5)
    dest.write_bytes(admin.get(f"{BASE}/v1/projects/{pid}/download?taskId={task_id}").content)


OUT.mkdir(parents=True, exist_ok=True)

# Text classification → Goldset tc (YNAT's categories).
tc = project("ynat-interop", "DocumentClassification", "TextClassificationProject")
categories = types(tc, "category-types", ["정치", "경제", "사회", "스포츠", "IT과학"])
tc_examples = examples(tc, ["국회, 내년도 예산안 본회의서 처리", "코스피 2,500선 회복…외국인 순매수",
                            "손흥민 시즌 10호 골…토트넘 3연승", "삼성전자 차세대 반도체 공정 공개"])
tc_labels = {"kim": ["정치", "경제", "스포츠", "IT과학"], "lee": ["정치", "경제", "스포츠", "경제"],
             "park": ["정치", "사회", "스포츠", None]}
for user, labels in tc_labels.items():
    for example, label in zip(tc_examples, labels, strict=True):
        if label:
            post(user, tc, example, "categories", {"label": categories[label]})
export(tc, OUT / "doccano_tc.zip")

# Sequence labelling → Goldset ner (KLUE-NER's types; offsets are characters).
ner = project("ner-interop", "SequenceLabeling", "SequenceLabelingProject")
span_types = types(ner, "span-types", ["PS", "LC", "OG", "DT", "TI", "QT"])
ner_texts = ["이순신은 1545년 한성에서 태어났다.", "삼성전자는 수원에 본사를 두고 있다.",
             "김연아는 밴쿠버 올림픽에서 금메달을 땄다."]
ner_examples = examples(ner, ner_texts)
ner_spans = {
    "kim": [[("이순신", "PS"), ("1545년", "DT"), ("한성", "LC")], [("삼성전자", "OG"), ("수원", "LC")],
            [("김연아", "PS"), ("밴쿠버", "LC")]],
    "lee": [[("이순신", "PS"), ("1545년", "DT"), ("한성", "LC")], [("삼성전자", "OG")],
            [("김연아", "PS"), ("밴쿠버 올림픽", "OG")]],
    "park": [[("이순신", "PS"), ("한성", "LC")], [("삼성전자", "OG"), ("수원", "LC")], []],
}
for user, per_example in ner_spans.items():
    for example, text, spans in zip(ner_examples, ner_texts, per_example, strict=True):
        for word, kind in spans:
            start = text.index(word)
            post(user, ner, example, "spans", {"label": span_types[kind], "start_offset": start,
                                               "end_offset": start + len(word)})
export(ner, OUT / "doccano_ner.zip")

# Relation extraction → Goldset re (KLUE-RE's entity types and relation names).
rel = project("re-interop", "SequenceLabeling", "SequenceLabelingProject", use_relation=True)
entity_types = types(rel, "span-types", ["PER", "ORG", "LOC", "DAT"])
relation_types = types(rel, "relation-types", ["per:employee_of", "org:founded_by", "org:place_of_headquarters",
                                               "no_relation"])
re_texts = ["이병철은 1938년 삼성상회를 대구에 세웠다.", "손흥민은 토트넘 홋스퍼에서 뛰고 있다."]
re_examples = examples(rel, re_texts)
re_labels = {
    "kim": [[("삼성상회", "ORG", "이병철", "PER", "org:founded_by"), ("삼성상회", "ORG", "대구", "LOC",
                                                                  "org:place_of_headquarters")],
            [("손흥민", "PER", "토트넘 홋스퍼", "ORG", "per:employee_of")]],
    "lee": [[("삼성상회", "ORG", "이병철", "PER", "org:founded_by"), ("삼성상회", "ORG", "대구", "LOC", "no_relation")],
            [("손흥민", "PER", "토트넘 홋스퍼", "ORG", "per:employee_of")]],
    "park": [[("삼성상회", "ORG", "이병철", "PER", "org:founded_by")], []],
}
for user, per_example in re_labels.items():
    for example, text, relations in zip(re_examples, re_texts, per_example, strict=True):
        spans: dict[tuple[str, str], int] = {}
        for subject, subject_type, obj, obj_type, relation in relations:
            for word, kind in ((subject, subject_type), (obj, obj_type)):
                if (word, kind) not in spans:
                    start = text.index(word)
                    spans[(word, kind)] = post(user, rel, example, "spans", {
                        "label": entity_types[kind], "start_offset": start, "end_offset": start + len(word)})
            post(user, rel, example, "relations", {"from_id": spans[(subject, subject_type)],
                                                   "to_id": spans[(obj, obj_type)], "type": relation_types[relation]})
export(rel, OUT / "doccano_re.zip")
print("written:", *sorted(p.name for p in OUT.glob("doccano_*.zip")))
