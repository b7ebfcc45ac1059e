"""Upload a Goldset NER release's labelstudio/train.json into Label Studio 1.23.2 (project with the release's
config.xml, Import dialog's upload) and export it (JSON, all tasks). README.md says how Label Studio was
started; it logs in as the browser does (1.23 turns legacy API tokens off).
usage: python make_labelstudio_ner_release_roundtrip.py BASE EMAIL PASSWORD RELEASE_JSON CONFIG_XML EXPORT_JSON TITLE"""
import sys
import time
from pathlib import Path

import requests

BASE, EMAIL, PASSWORD, REL, CFG, OUT, TITLE = sys.argv[1:8]
api = requests.Session()
api.get(f"{BASE}/user/login/")
api.post(f"{BASE}/user/login/", data={"email": EMAIL, "password": PASSWORD,
                                      "csrfmiddlewaretoken": api.cookies["csrftoken"]},
         headers={"Referer": f"{BASE}/user/login/"})
api.headers.update({"X-CSRFToken": api.cookies["csrftoken"], "Referer": BASE})
assert api.get(f"{BASE}/api/current-user/whoami").status_code == 200, "login failed"
r = api.post(f"{BASE}/api/projects", json={"title": TITLE, "label_config": Path(CFG).read_text("utf-8")})
assert r.status_code == 201, r.text
pid = r.json()["id"]
t = time.time()
with open(REL, "rb") as handle:
    r = api.post(f"{BASE}/api/projects/{pid}/import", files={"file": (Path(REL).name, handle)})
print("import", r.status_code, r.text[:400], round(time.time() - t, 1), "s")
assert r.status_code == 201, r.text
r = api.get(f"{BASE}/api/projects/{pid}/export", params={"exportType": "JSON", "download_all_tasks": "true"})
assert r.status_code == 200, r.text
Path(OUT).write_bytes(r.content)
print("written", OUT, len(r.content))
