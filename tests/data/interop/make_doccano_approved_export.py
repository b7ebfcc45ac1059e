"""Make the doccano fixture of an export of approved examples: a sequence-labelling project where kim labels the
first sentence and confirms it and the second (which has no entities), and lee labels and confirms the third;
exported twice with doccano's JSONL export, with "Export only approved documents" (``exportApproved``) ticked and
not. See README.md for how doccano was started.

usage: python make_doccano_approved_export.py BASE_URL ADMIN_PASSWORD OUT_DIR   (needs requests)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from doccano_client import annotators, login

BASE, ADMIN_PASS, OUT = sys.argv[1], sys.argv[2], Path(sys.argv[3])


admin = login(BASE, "admin", ADMIN_PASS)
roles = {r["name"]: r["id"] for r in admin.get(f"{BASE}/v1/roles").json()}
users = annotators(BASE, admin, ("kim", "lee"))

r = admin.post(f"{BASE}/v1/projects", json={"name": "ner-approved", "description": "Goldset interop fixture",
                                             "guideline": "", "project_type": "SequenceLabeling",
                                             "resourcetype": "SequenceLabelingProject"})
assert r.status_code == 201, r.text
pid = r.json()["id"]
for uid, _ in users.values():
    admin.post(f"{BASE}/v1/projects/{pid}/members", json={"user": uid, "role": roles["annotator"]})
kinds = {}
for i, text in enumerate(["PS", "LC", "OG"]):
    r = admin.post(f"{BASE}/v1/projects/{pid}/span-types", json={
        "text": text, "background_color": "#209cee", "text_color": "#ffffff", "suffix_key": None,
        "prefix_key": None, "id": None, "order": i})
    assert r.status_code == 201, r.text
    kinds[text] = r.json()["id"]
texts = ["이순신은 1545년 한성에서 태어났다.", "오늘은 아무 일도 없었다.", "삼성전자는 수원에 본사를 두고 있다."]
ids = []
for text in texts:
    r = admin.post(f"{BASE}/v1/projects/{pid}/examples", json={"text": text, "meta": {}})
    assert r.status_code == 201, r.text
    ids.append(r.json()["id"])


def span(user: str, n: int, word: str, kind: str) -> None:
    start = texts[n].index(word)
    r = users[user][1].post(f"{BASE}/v1/projects/{pid}/examples/{ids[n]}/spans", json={
        "label": kinds[kind], "start_offset": start, "end_offset": start + len(word)})
    assert r.status_code == 201, r.text


def confirm(user: str, n: int) -> None:
    """The annotator's "mark as done" (the check button): the example's state, confirmed by this user."""
    r = users[user][1].post(f"{BASE}/v1/projects/{pid}/examples/{ids[n]}/states", json={})
    assert r.status_code == 201, r.text


span("kim", 0, "이순신", "PS")
confirm("kim", 0)
confirm("kim", 1)  # no entities in it: confirmed as it is
span("lee", 2, "삼성전자", "OG")
confirm("lee", 2)


def export(approved: bool, dest: Path) -> None:
    r = admin.post(f"{BASE}/v1/projects/{pid}/download", json={"format": "JSONL", "exportApproved": approved})
    task_id = r.json()["task_id"]
    while not admin.get(f"{BASE}/v1/tasks/status/{task_id}").json()["ready"]:
        time.sleep(0.5)
    dest.write_bytes(admin.get(f"{BASE}/v1/projects/{pid}/download?taskId={task_id}").content)


OUT.mkdir(parents=True, exist_ok=True)
export(True, OUT / "doccano_ner_approved.zip")
export(False, OUT / "doccano_ner_all.zip")
print("written:", OUT / "doccano_ner_approved.zip", OUT / "doccano_ner_all.zip")
