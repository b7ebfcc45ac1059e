"""The test provider's settings, from the environment its fixture sets: the port, the database file, the RSA
signing key made for the run."""

import os
from pathlib import Path

PORT = int(os.environ["PROVIDER_PORT"])
ISSUER = f"http://127.0.0.1:{PORT}/o"

SECRET_KEY = "provider-test-only"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
ROOT_URLCONF = "tests.sso.provider.urls"
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "oauth2_provider",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
TEMPLATES = [{
    "BACKEND": "django.template.backends.django.DjangoTemplates",
    "DIRS": [Path(__file__).parent / "templates"],
    "APP_DIRS": True,
    "OPTIONS": {"context_processors": ["django.template.context_processors.request",
                                       "django.contrib.auth.context_processors.auth"]},
}]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ["PROVIDER_DB"]}}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
USE_TZ = True
LOGIN_URL = "/accounts/login/"
# Goldset runs on the same machine: the provider's cookies must not share the browser's cookie names with it.
SESSION_COOKIE_NAME = "provider_sessionid"
CSRF_COOKIE_NAME = "provider_csrftoken"

OAUTH2_PROVIDER = {
    "OIDC_ENABLED": True,
    "OIDC_ISS_ENDPOINT": ISSUER,
    "OIDC_RSA_PRIVATE_KEY": os.environ["PROVIDER_RSA_KEY"],
    "OIDC_RP_INITIATED_LOGOUT_ENABLED": True,
    "OIDC_RP_INITIATED_LOGOUT_ALWAYS_PROMPT": False,
    "PKCE_REQUIRED": False,
    "SCOPES": {"openid": "OpenID Connect", "email": "Email", "profile": "Profile"},
    "OAUTH2_VALIDATOR_CLASS": "tests.sso.provider.validator.Validator",
}
