"""Make the Label Studio fixtures: three small projects (choices, labels, labels + relations) with Korean
tasks, annotated by three users through Label Studio's REST API and exported with its JSON export. See
README.md for how Label Studio was started.

usage: python make_labelstudio_exports.py BASE_URL ADMIN_EMAIL ADMIN_PASSWORD OUT_DIR   (needs requests)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import requests

BASE, EMAIL, PASSWORD, OUT = sys.argv[1], sys.argv[2], sys.argv[3], Path(sys.argv[4])
# Label Studio 1.23 turns legacy API tokens off: the script logs in as the browser does (session + CSRF).
api = requests.Session()
api.get(f"{BASE}/user/login/")
api.post(f"{BASE}/user/login/", data={"email": EMAIL, "password": PASSWORD,
                                      "csrfmiddlewaretoken": api.cookies["csrftoken"]},
         headers={"Referer": f"{BASE}/user/login/"})
api.headers.update({"X-CSRFToken": api.cookies["csrftoken"], "Referer": BASE})
assert api.get(f"{BASE}/api/current-user/whoami").status_code == 200, "login failed"

users: dict[str, int] = {}
for name in ("kim", "lee", "park"):
    r = api.post(f"{BASE}/api/users/", json={"username": name, "email": f"{name}@example.com",
                                             "first_name": name, "last_name": "annotator"})
    assert r.status_code == 201, r.text
    users[name] = r.json()["id"]


def project(title: str, config: str, texts: list[str]) -> tuple[int, list[int]]:
    r = api.post(f"{BASE}/api/projects", json={"title": title, "label_config": config})
    assert r.status_code == 201, r.text
    pid = r.json()["id"]
    r = api.post(f"{BASE}/api/projects/{pid}/import", json=[{"text": t} for t in texts])
    assert r.status_code == 201, r.text
    tasks = api.get(f"{BASE}/api/tasks", params={"project": pid, "page_size": 100}).json()
    tasks = tasks["tasks"] if isinstance(tasks, dict) else tasks
    by_text = {t["data"]["text"]: t["id"] for t in tasks}
    return pid, [by_text[t] for t in texts]


def annotate(task: int, user: str, result: list[dict[str, Any]], cancelled: bool = False) -> None:
    r = api.post(f"{BASE}/api/tasks/{task}/annotations/", json={"result": result, "completed_by": users[user],
                                                                "was_cancelled": cancelled})
    assert r.status_code == 201, r.text


def export(pid: int, dest: Path) -> None:
    r = api.get(f"{BASE}/api/projects/{pid}/export", params={"exportType": "JSON"})
    assert r.status_code == 200, r.text
    dest.write_bytes(r.content)


def choice(name: str) -> dict[str, Any]:
    return {"from_name": "category", "to_name": "text", "type": "choices", "value": {"choices": [name]}}


def span(text: str, word: str, kind: str, span_id: str) -> dict[str, Any]:
    start = text.index(word)
    return {"id": span_id, "from_name": "label", "to_name": "text", "type": "labels",
            "value": {"start": start, "end": start + len(word), "text": word, "labels": [kind]}}


def relation(source: str, target: str, name: str) -> dict[str, Any]:
    return {"from_id": source, "to_id": target, "type": "relation", "direction": "right", "labels": [name]}


OUT.mkdir(parents=True, exist_ok=True)

# Choices → Goldset tc.
categories = ["정치", "경제", "사회", "스포츠", "IT과학"]
tc_config = ('<View><Text name="text" value="$text"/><Choices name="category" toName="text" choice="single">'
             + "".join(f'<Choice value="{c}"/>' for c in categories) + "</Choices></View>")
tc_texts = ["국회, 내년도 예산안 본회의서 처리", "코스피 2,500선 회복…외국인 순매수",
            "손흥민 시즌 10호 골…토트넘 3연승"]
pid, tasks = project("ynat-interop", tc_config, tc_texts)
for user, labels in {"kim": ["정치", "경제", "스포츠"], "lee": ["정치", "사회", "스포츠"],
                     "park": ["정치", "경제", None]}.items():
    for task, label in zip(tasks, labels, strict=True):
        annotate(task, user, [choice(label)] if label else [], cancelled=label is None)
export(pid, OUT / "labelstudio_tc.json")

# Labels (character offsets) → Goldset ner.
ner_config = ('<View><Labels name="label" toName="text">' + "".join(
    f'<Label value="{t}"/>' for t in ("PS", "LC", "OG", "DT", "TI", "QT")) + '</Labels><Text name="text" '
    'value="$text"/></View>')
ner_texts = ["이순신은 1545년 한성에서 태어났다.", "김연아는 밴쿠버 올림픽에서 금메달을 땄다."]
pid, tasks = project("ner-interop", ner_config, ner_texts)
ner_spans = {"kim": [[("이순신", "PS"), ("1545년", "DT"), ("한성", "LC")], [("김연아", "PS"), ("밴쿠버", "LC")]],
             "lee": [[("이순신", "PS"), ("1545년", "DT")], [("김연아", "PS"), ("밴쿠버 올림픽", "OG")]],
             "park": [[("이순신", "PS"), ("한성", "LC")], []]}
for user, per_task in ner_spans.items():
    for task, text, spans in zip(tasks, ner_texts, per_task, strict=True):
        annotate(task, user, [span(text, w, k, f"{user}{task}{i}") for i, (w, k) in enumerate(spans)])
export(pid, OUT / "labelstudio_ner.json")

# Labels + relations → Goldset re.
relations = ["per:employee_of", "org:founded_by", "org:place_of_headquarters", "no_relation"]
re_config = ("<View><Relations>" + "".join(f'<Relation value="{r}"/>' for r in relations) + "</Relations>"
             '<Labels name="label" toName="text">' + "".join(f'<Label value="{t}"/>' for t in ("PER", "ORG", "LOC"))
             + '</Labels><Text name="text" value="$text"/></View>')
re_texts = ["이병철은 1938년 삼성상회를 대구에 세웠다.", "손흥민은 토트넘 홋스퍼에서 뛰고 있다."]
pid, tasks = project("re-interop", re_config, re_texts)
first, second = re_texts
for user, label in {"kim": "org:place_of_headquarters", "lee": "no_relation", "park": None}.items():
    result = [span(first, "삼성상회", "ORG", f"{user}a"), span(first, "이병철", "PER", f"{user}b"),
              relation(f"{user}a", f"{user}b", "org:founded_by")]
    if label:
        result += [span(first, "대구", "LOC", f"{user}c"), relation(f"{user}a", f"{user}c", label)]
    annotate(tasks[0], user, result)
    annotate(tasks[1], user, [span(second, "손흥민", "PER", f"{user}d"),
                              span(second, "토트넘 홋스퍼", "ORG", f"{user}e"),
                              relation(f"{user}d", f"{user}e", "per:employee_of")])
export(pid, OUT / "labelstudio_re.json")
print("written:", *sorted(p.name for p in OUT.glob("labelstudio_*.json")))
