"""A real OpenID Connect provider for the SSO tests: a small Django project running django-oauth-toolkit in OIDC
mode, started in a subprocess on 127.0.0.1 by tests/sso/conftest.py (``python -m tests.sso.provider.serve``)."""

#: The provider's people (all with this password) and the clients registered with it.
PASSWORD = "provider-pw-123"
USERS = {"alice": "alice@example.org", "mallory": "mallory@example.org", "bob": "bob@example.org"}
CLIENTS = {"goldset": "goldset-secret", "other-app": "other-secret"}
