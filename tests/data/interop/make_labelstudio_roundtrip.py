"""The Label Studio round trip of Goldset's NER and RE releases (README.md says how Label Studio was started
and how the release files were built from ``labelstudio_roundtrip_items_*.jsonl``).

For each task: a Label Studio project is created with the release's ``labelstudio/config.xml``, the release's
``labelstudio/train.json`` is uploaded through Label Studio's import (the file, as a user would), two more
users annotate some tasks next to the imported annotation (one disagrees, one draws a relation leftwards,
one skips a task), and the project is exported with Label Studio's JSON export
(``labelstudio_roundtrip_<task>.json``). The release's doccano JSONL is uploaded too, into another project
with the same config, as it is and as a JSON array, and exported (``labelstudio_of_doccano_<task>.json``):
what Label Studio makes of it.

usage: python make_labelstudio_roundtrip.py BASE_URL ADMIN_EMAIL ADMIN_PASSWORD FOLDER   (needs requests;
FOLDER holds the release files named as in README.md, and receives the exports)
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import requests

BASE, EMAIL, PASSWORD, FOLDER = sys.argv[1], sys.argv[2], sys.argv[3], Path(sys.argv[4])
# Label Studio 1.23 turns legacy API tokens off: the script logs in as the browser does (session + CSRF).
api = requests.Session()
api.get(f"{BASE}/user/login/")
api.post(f"{BASE}/user/login/", data={"email": EMAIL, "password": PASSWORD,
                                      "csrfmiddlewaretoken": api.cookies["csrftoken"]},
         headers={"Referer": f"{BASE}/user/login/"})
api.headers.update({"X-CSRFToken": api.cookies["csrftoken"], "Referer": BASE})
assert api.get(f"{BASE}/api/current-user/whoami").status_code == 200, "login failed"


def user(name: str) -> int:
    known = api.get(f"{BASE}/api/users/").json()
    for found in known:
        if found["email"] == f"{name}@example.com":
            return found["id"]
    r = api.post(f"{BASE}/api/users/", json={"username": name, "email": f"{name}@example.com",
                                             "first_name": name, "last_name": "annotator"})
    assert r.status_code == 201, r.text
    return r.json()["id"]


USERS = {name: user(name) for name in ("kim", "lee")}


def project(title: str, config: str) -> int:
    r = api.post(f"{BASE}/api/projects", json={"title": title, "label_config": config})
    assert r.status_code == 201, r.text
    return r.json()["id"]


def upload(pid: int, path: Path) -> dict[str, Any]:
    """The project's Import dialog: the file as it is."""
    with path.open("rb") as handle:
        r = api.post(f"{BASE}/api/projects/{pid}/import", files={"file": (path.name, handle)})
    print(path.name, "→", r.status_code, r.text[:500])
    assert r.status_code == 201, r.text
    return r.json()


def tasks_by_guid(pid: int) -> dict[str, dict[str, Any]]:
    found = api.get(f"{BASE}/api/tasks", params={"project": pid, "page_size": 100}).json()
    found = found["tasks"] if isinstance(found, dict) else found
    return {t["data"]["guid"]: api.get(f"{BASE}/api/tasks/{t['id']}").json() for t in found}


def annotate(task: dict[str, Any], name: str, result: list[dict[str, Any]], cancelled: bool = False) -> None:
    r = api.post(f"{BASE}/api/tasks/{task['id']}/annotations/",
                 json={"result": result, "completed_by": USERS[name], "was_cancelled": cancelled})
    assert r.status_code == 201, r.text


def imported(task: dict[str, Any]) -> list[dict[str, Any]]:
    """A copy of the result of the annotation the import made."""
    (annotation,) = task["annotations"]
    return copy.deepcopy(annotation["result"])


def renamed(result: list[dict[str, Any]], prefix: str) -> list[dict[str, Any]]:
    """``result`` with its ids made the annotator's own (relations follow)."""
    for item in result:
        for key in ("id", "from_id", "to_id"):
            if key in item:
                item[key] = f"{prefix}-{item[key]}"
    return result


def relation_of(result: list[dict[str, Any]]) -> dict[str, Any]:
    (found,) = [r for r in result if r["type"] == "relation"]
    return found


def export(pid: int, name: str, *, all_tasks: bool = False) -> None:
    """Label Studio's JSON export; by default it leaves out tasks nobody annotated (``all_tasks`` keeps them)."""
    params = {"exportType": "JSON", **({"download_all_tasks": "true"} if all_tasks else {})}
    r = api.get(f"{BASE}/api/projects/{pid}/export", params=params)
    assert r.status_code == 200, r.text
    (FOLDER / name).write_bytes(r.content)


def span(text: str, word: str, kind: str, span_id: str) -> dict[str, Any]:
    start = text.index(word)
    return {"id": span_id, "from_name": "label", "to_name": "text", "type": "labels",
            "value": {"start": start, "end": start + len(word), "text": word, "labels": [kind]}}


# NER: kim leaves out one quantity, lee marks two entities of the first sentence only and skips the third.
pid = project("goldset-ner-roundtrip", (FOLDER / "goldset_labelstudio_ner.config.xml").read_text("utf-8"))
upload(pid, FOLDER / "goldset_labelstudio_ner.json")
tasks = tasks_by_guid(pid)
for guid, task in tasks.items():
    result = [r for r in imported(task) if not (guid == "lsrt-ner-2" and r["value"]["labels"] == ["QT"])]
    annotate(task, "kim", renamed(result, "kim"))
first = tasks["lsrt-ner-1"]["data"]["text"]
annotate(tasks["lsrt-ner-1"], "lee", [span(first, "김민준", "PS", "lee-a"), span(first, "한빛전자", "OG", "lee-b")])
annotate(tasks["lsrt-ner-3"], "lee", [], cancelled=True)
export(pid, "labelstudio_roundtrip_ner.json")

# RE: kim agrees on the first pair and calls the last one colleagues; lee draws the first relation from
# object to subject (direction left) and disagrees on the fourth.
pid = project("goldset-re-roundtrip", (FOLDER / "goldset_labelstudio_re.config.xml").read_text("utf-8"))
upload(pid, FOLDER / "goldset_labelstudio_re.json")
tasks = tasks_by_guid(pid)
annotate(tasks["lsrt-re-1"], "kim", renamed(imported(tasks["lsrt-re-1"]), "kim"))
last = renamed(imported(tasks["lsrt-re-7"]), "kim")
relation_of(last)["labels"] = ["per:colleagues"]
annotate(tasks["lsrt-re-7"], "kim", last)
leftwards = renamed(imported(tasks["lsrt-re-1"]), "lee")
drawn = relation_of(leftwards)
drawn.update(from_id=drawn["to_id"], to_id=drawn["from_id"], direction="left")
annotate(tasks["lsrt-re-1"], "lee", leftwards)
fourth = renamed(imported(tasks["lsrt-re-4"]), "lee")
relation_of(fourth)["labels"] = ["per:title"]
annotate(tasks["lsrt-re-4"], "lee", fourth)
export(pid, "labelstudio_roundtrip_re.json")

# The doccano JSONL of the same releases, through the same import: Label Studio 1.23.2 refuses the file
# (".jsonl extension is not supported"); its lines as one JSON array (.json) are taken, as task data.
for task_name in ("ner", "re"):
    config = (FOLDER / f"goldset_labelstudio_{task_name}.config.xml").read_text("utf-8")
    jsonl = FOLDER / f"goldset_doccano_{task_name}.jsonl"
    r = api.post(f"{BASE}/api/projects/{project(f'goldset-doccano-jsonl-{task_name}', config)}/import",
                 files={"file": (jsonl.name, jsonl.read_bytes())})
    print(jsonl.name, "→", r.status_code, r.text[:500])
    as_array = FOLDER / f"goldset_doccano_{task_name}.as-array.json"
    as_array.write_text(json.dumps([json.loads(line) for line in jsonl.read_text("utf-8").splitlines()],
                                   ensure_ascii=False), encoding="utf-8")
    pid = project(f"goldset-doccano-{task_name}", config)
    upload(pid, as_array)
    as_array.unlink()
    export(pid, f"labelstudio_of_doccano_{task_name}.json", all_tasks=True)
print("written:", *sorted(p.name for p in FOLDER.glob("labelstudio_*.json")))
