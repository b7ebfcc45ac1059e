"""What the doccano fixture scripts share: signing in to a running doccano 1.8.4 through its REST API and creating
the annotator accounts (``make_doccano_exports.py``, ``make_doccano_approved_export.py``)."""

from __future__ import annotations

import requests

PASSWORD = "Xinterop123!"


def login(base: str, user: str, password: str) -> requests.Session:
    token = requests.post(f"{base}/v1/auth/login/", json={"username": user, "password": password}).json()["key"]
    session = requests.Session()
    session.headers["Authorization"] = "Token " + token
    return session


def annotators(base: str, admin: requests.Session, names: tuple[str, ...]) -> dict[str, tuple[int, requests.Session]]:
    """Each annotator's doccano user id and signed-in session (created if new)."""
    users = {}
    for name in names:
        r = admin.post(f"{base}/v1/users/create", json={"username": name, "email": f"{name}@example.com",
                                                         "password1": PASSWORD, "password2": PASSWORD})
        assert r.status_code in (201, 400), r.text
        session = login(base, name, PASSWORD)
        users[name] = (session.get(f"{base}/v1/me").json()["id"], session)
    return users
