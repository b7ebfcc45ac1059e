"""Fixtures: a real OpenID Connect provider for the SSO tests (tests/sso/provider/: django-oauth-toolkit in OIDC
mode, RS256 key made for the run) in a subprocess on 127.0.0.1, and Goldset's settings pointing at it.

The provider serves on a free port of 18100-18199 and registers Goldset's live server as its client. The tests
skip, saying why, when the provider's package is missing or the provider does not start. tests/sso/conftest.py
and the browser test (tests/browser/test_sso_login.py) import the fixtures.
"""

from __future__ import annotations

import html
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
PORTS = range(18100, 18200)


def _free_port() -> int:
    for port in PORTS:
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    pytest.skip("no free port in 18100-18199 for the OIDC provider")


@dataclass
class Provider:
    url: str
    goldset_url: str

    @property
    def issuer(self) -> str:
        return f"{self.url}/o"

    def tokens(self, username: str, *, client_id: str = "goldset", nonce: str | None = None) -> dict[str, Any]:
        """The tokens an authorization-code grant gives ``client_id`` for ``username`` (signing in at the provider's
        page and allowing the client on its consent page, as a browser would)."""
        import requests

        from tests.sso.provider import CLIENTS, PASSWORD

        redirect_uri = f"{self.goldset_url}/accounts/sso/callback/"
        session = requests.Session()
        login = session.get(f"{self.url}/accounts/login/", timeout=10)
        session.post(f"{self.url}/accounts/login/", timeout=10, allow_redirects=False, data={
            "csrfmiddlewaretoken": _hidden(login.text)["csrfmiddlewaretoken"], "username": username,
            "password": PASSWORD, "next": "/"}, headers={"Referer": login.url})
        query = {"response_type": "code", "client_id": client_id, "redirect_uri": redirect_uri,
                 "scope": "openid email profile", "state": "s", **({"nonce": nonce} if nonce else {})}
        consent = session.get(f"{self.issuer}/authorize/?{urlencode(query)}", timeout=10)
        fields = _hidden(consent.text)
        answer = session.post(consent.url, data={**fields, "allow": "Authorize"}, timeout=10,
                              allow_redirects=False, headers={"Referer": consent.url})
        code = parse_qs(urlsplit(answer.headers["Location"]).query)["code"][0]
        token = session.post(f"{self.issuer}/token/", timeout=10, data={
            "grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri,
            "client_id": client_id, "client_secret": CLIENTS[client_id]})
        token.raise_for_status()
        return token.json()


def _hidden(page: str) -> dict[str, str]:
    fields = {}
    for tag in re.findall(r"<input[^>]*>", page):
        name = re.search(r'name="([^"]*)"', tag)
        value = re.search(r'value="([^"]*)"', tag)
        if name and 'type="hidden"' in tag:
            fields[name.group(1)] = html.unescape(value.group(1)) if value else ""
    return fields


@pytest.fixture(scope="session")
def provider(live_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Provider]:
    pytest.importorskip("oauth2_provider", reason="django-oauth-toolkit (a dev dependency) runs the test provider")
    import requests
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    port = _free_port()
    folder = tmp_path_factory.mktemp("oidc-provider")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.sso.provider.settings", "PROVIDER_PORT": str(port),
           "PROVIDER_DB": str(folder / "provider.sqlite3"), "PROVIDER_RSA_KEY": key,
           "GOLDSET_URL": live_server.url}
    env.pop("DATABASE_URL", None)
    log = (folder / "provider.log").open("wb")
    process = subprocess.Popen([sys.executable, "-m", "tests.sso.provider.serve"], cwd=ROOT, env=env,
                               stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    try:
        while True:
            if process.poll() is not None:
                pytest.skip(f"the OIDC provider exited with {process.returncode}: "
                            f"{(folder / 'provider.log').read_text(errors='replace')[-2000:]}")
            try:
                if requests.get(f"{url}/o/.well-known/openid-configuration", timeout=2).ok:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                pytest.skip("the OIDC provider did not answer within 60 s")
            time.sleep(0.3)
        yield Provider(url=url, goldset_url=live_server.url)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


@pytest.fixture
def sso(settings: Any, provider: Provider) -> Provider:
    """Goldset configured for the provider, the endpoints read from its discovery document."""
    settings.GOLDSET_OIDC_CLIENT_ID = "goldset"
    settings.GOLDSET_OIDC_CLIENT_SECRET = "goldset-secret"
    settings.GOLDSET_OIDC_ISSUER = provider.issuer
    settings.GOLDSET_OIDC_PROVIDER_NAME = "Lab ID"
    settings.AXES_ENABLED = True
    return provider

