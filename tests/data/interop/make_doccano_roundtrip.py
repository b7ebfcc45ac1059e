"""Upload Goldset's doccano releases (goldset_release_re.jsonl) into doccano 1.8.4
through its import (the same upload as its web page), and export the projects again with its JSONL export.
See README.md for how doccano was started.

usage: python make_doccano_roundtrip.py BASE_URL ADMIN_PASSWORD DATA_DIR   (needs requests)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import requests

BASE, ADMIN_PASS, DATA = sys.argv[1], sys.argv[2], Path(sys.argv[3])
token = requests.post(f"{BASE}/v1/auth/login/", json={"username": "admin", "password": ADMIN_PASS}).json()["key"]
admin = requests.Session()
admin.headers["Authorization"] = "Token " + token


def wait(task_id: str) -> dict:
    while not (state := admin.get(f"{BASE}/v1/tasks/status/{task_id}").json())["ready"]:
        time.sleep(0.5)
    return state


def round_trip(name: str, release: Path, task: str, export: Path, **extra: object) -> None:
    r = admin.post(f"{BASE}/v1/projects", json={"name": name, "description": "Goldset release round trip",
                                                 "guideline": "", "project_type": "SequenceLabeling",
                                                 "resourcetype": "SequenceLabelingProject", **extra})
    assert r.status_code == 201, r.text
    pid = r.json()["id"]
    with release.open("rb") as handle:
        upload = admin.post(f"{BASE}/v1/fp/process/", files={"filepond": handle}).text
    r = admin.post(f"{BASE}/v1/projects/{pid}/upload", json={
        "uploadIds": [upload], "format": "JSONL", "task": task, "column_data": "text", "column_label": "label",
        "delimiter": ",", "encoding": "utf_8"})
    state = wait(r.json()["task_id"])
    assert not (state.get("result") or {}).get("error"), state
    r = admin.post(f"{BASE}/v1/projects/{pid}/download", json={"format": "JSONL", "exportApproved": False})
    task_id = r.json()["task_id"]
    wait(task_id)
    export.write_bytes(admin.get(f"{BASE}/v1/projects/{pid}/download?taskId={task_id}").content)


round_trip("re-roundtrip", DATA / "goldset_release_re.jsonl", "RelationExtraction", DATA / "doccano_roundtrip_re.zip",
           use_relation=True)
print("written: doccano_roundtrip_re.zip")
