"""Upload a Goldset NER release's doccano JSONL into doccano 1.8.4 (its import, as its web page does) and
export it again (JSONL export: a ZIP with one <user>.jsonl per member). README.md says how doccano was started.
usage: python make_doccano_ner_release_roundtrip.py BASE_URL ADMIN_PASSWORD RELEASE_JSONL EXPORT_ZIP PROJECT_NAME"""
import sys
import time
from pathlib import Path

import requests

BASE, ADMIN_PASS, RELEASE, EXPORT, NAME = sys.argv[1], sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]), sys.argv[5]
token = requests.post(f"{BASE}/v1/auth/login/", json={"username": "admin", "password": ADMIN_PASS}).json()["key"]
s = requests.Session()
s.headers["Authorization"] = "Token " + token


def wait(task_id):
    while not (state := s.get(f"{BASE}/v1/tasks/status/{task_id}").json())["ready"]:
        time.sleep(1)
    return state


r = s.post(f"{BASE}/v1/projects", json={"name": NAME, "description": "Goldset release round trip", "guideline": "",
                                        "project_type": "SequenceLabeling", "resourcetype": "SequenceLabelingProject"})
assert r.status_code == 201, r.text
pid = r.json()["id"]
with RELEASE.open("rb") as handle:
    upload = s.post(f"{BASE}/v1/fp/process/", files={"filepond": handle}).text
r = s.post(f"{BASE}/v1/projects/{pid}/upload", json={
    "uploadIds": [upload], "format": "JSONL", "task": "SequenceLabeling", "column_data": "text",
    "column_label": "label", "delimiter": ",", "encoding": "utf_8"})
state = wait(r.json()["task_id"])
print("import:", state)
print("examples in doccano:", s.get(f"{BASE}/v1/projects/{pid}/examples?limit=1").json()["count"])
r = s.post(f"{BASE}/v1/projects/{pid}/download", json={"format": "JSONL", "exportApproved": False})
task_id = r.json()["task_id"]
print("export:", wait(task_id))
EXPORT.write_bytes(s.get(f"{BASE}/v1/projects/{pid}/download?taskId={task_id}").content)
print("written", EXPORT, EXPORT.stat().st_size)
