"""Set the provider up (its database, its users, Goldset's client registrations) and serve it until killed.

Environment: PROVIDER_PORT, PROVIDER_DB, PROVIDER_RSA_KEY, and GOLDSET_URL (the Goldset live server the clients
redirect back to)."""

import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.sso.provider.settings")
django.setup()

from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from oauth2_provider.models import Application  # noqa: E402

from tests.sso.provider import CLIENTS, PASSWORD, USERS  # noqa: E402


def set_up(goldset_url: str) -> None:
    call_command("migrate", verbosity=0)
    for username, email in USERS.items():
        User.objects.create_user(username, email=email, password=PASSWORD, first_name=username.title())
    for client_id, secret in CLIENTS.items():
        Application.objects.create(
            name=client_id, client_id=client_id, client_secret=secret,
            client_type=Application.CLIENT_CONFIDENTIAL,
            authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
            redirect_uris=f"{goldset_url}/accounts/sso/callback/",
            post_logout_redirect_uris=f"{goldset_url}/accounts/login/",
            algorithm=Application.RS256_ALGORITHM, skip_authorization=False)


if __name__ == "__main__":
    set_up(os.environ["GOLDSET_URL"].rstrip("/"))
    call_command("runserver", f"127.0.0.1:{os.environ['PROVIDER_PORT']}", use_reloader=False, verbosity=0)
