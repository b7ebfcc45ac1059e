"""Goldset settings, read from the environment.

Embedded default (nothing set): SQLite file in the project folder, Celery tasks run eagerly, DEBUG on.
Real deployment: ``DJANGO_ENV=production`` (or ``DJANGO_SETTINGS_MODULE=config.settings_production``)
with ``DATABASE_URL``, ``CELERY_BROKER_URL``, ``SECRET_KEY`` and ``ALLOWED_HOSTS``.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.utils.translation import gettext_lazy as _

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    return default if value is None else value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str) -> list[str]:
    return [part.strip() for part in os.environ.get(name, default).split(",") if part.strip()]


PRODUCTION = os.environ.get("DJANGO_ENV", "").lower() == "production"

DEBUG = env_bool("DEBUG", not PRODUCTION)
SECRET_KEY = os.environ.get("SECRET_KEY", "" if PRODUCTION else "goldset-insecure-development-key-change-me")
if PRODUCTION and not SECRET_KEY:
    raise RuntimeError("SECRET_KEY must be set when DJANGO_ENV=production")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "" if PRODUCTION else "localhost,127.0.0.1,[::1],testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")
#: A form sent from an expired page: the site's 403 page in the reader's language, saying to reload.
CSRF_FAILURE_VIEW = "config.errors.csrf_failure"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "annotation",
    "datasets_build",
    "exports",
    "demo",
    "axes",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # NUL characters in the path, query or form fields are a 400 before anything reaches the database.
    "config.middleware.RejectNulMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # A lost database connection becomes a 503 with Retry-After (see config/middleware.py).
    "config.middleware.DatabaseUnavailableMiddleware",
    # A full disk or a failing storage becomes a 507 / 503 (JSON on API routes), not a 500.
    "config.middleware.StorageErrorMiddleware",
    # Last, so it sees the lockout flag set by the authentication backend and answers 429.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{BASE_DIR / 'goldset.sqlite3'}"),
        conn_max_age=int(os.environ.get("DB_CONN_MAX_AGE", "0")),
        # A kept connection is checked before each request reuses it, so one broken by a database
        # restart is replaced instead of failing the first request after the restart.
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Wait for the writer lock instead of failing at once when the demo server and a job overlap.
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 20
    # Write-ahead log: a large import's pages spill to the log without a sync each time (the rollback journal
    # synced before every spill), and readers are not blocked by the import's writes. synchronous=FULL keeps
    # every commit durable (one sync of the log per commit); the cache and temporary tables sized for an
    # import's batches (docs/performance.md, "The embedded default").
    DATABASES["default"]["OPTIONS"]["init_command"] = (
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA cache_size=-65536; PRAGMA temp_store=MEMORY")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_USER_MODEL = "annotation.User"

PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Login rate limiting (django-axes): five failures for one username from one address lock that pair out
# for 15 minutes. The backend comes first so a locked-out pair is refused before the password is checked;
# the DRF token endpoint authenticates through the same backends, so its failures count too.
# The password backend refuses when GOLDSET_LOCAL_LOGIN is off and single sign-on is on; the SSO backend answers
# only the provider's callback (annotation/sso/).
AUTHENTICATION_BACKENDS = [
    "config.auth_backends.RequestOptionalAxesBackend",
    "config.auth_backends.LocalPasswordBackend",
    "annotation.sso.backend.SsoBackend",
]
AXES_ENABLED = env_bool("AXES_ENABLED", True)
AXES_FAILURE_LIMIT = int(os.environ.get("AXES_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = timedelta(minutes=int(os.environ.get("AXES_COOLOFF_MINUTES", "15")))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
# Lockouts are lifted with `manage.py axes_reset_username <name>` (or axes_reset); axes' read-only admin
# pages stay off so the admin only lists models that can be added and changed.
AXES_ENABLE_ADMIN = False
# Failures are counted per real client: behind GOLDSET_TRUSTED_PROXY_COUNT reverse proxies the client address is
# read from X-Forwarded-For (see config/client_ip.py). 0 everywhere until the operator counts the proxies in front:
# with gunicorn reachable directly, a trusted header would let every attempt name its own address (and a victim's).
GOLDSET_TRUSTED_PROXY_COUNT = int(os.environ.get("GOLDSET_TRUSTED_PROXY_COUNT", "0"))
AXES_CLIENT_IP_CALLABLE = "config.client_ip.client_ip"
# A refused single sign-on is recorded like a failed password login; the provider's one-time code and state in
# the callback's query are masked in the record.
AXES_SENSITIVE_PARAMETERS = ["code", "state"]

# Single sign-on with OpenID Connect (mozilla-django-oidc; config/oidc.py, annotation/sso/, docs/deployment.md
# "Single sign-on"). Off unless GOLDSET_OIDC_CLIENT_ID is set. The endpoints are read from the issuer's discovery
# document unless given one by one.
GOLDSET_OIDC_CLIENT_ID = os.environ.get("GOLDSET_OIDC_CLIENT_ID", "")
GOLDSET_OIDC_CLIENT_SECRET = os.environ.get("GOLDSET_OIDC_CLIENT_SECRET", "")
GOLDSET_OIDC_ISSUER = os.environ.get("GOLDSET_OIDC_ISSUER", "")
GOLDSET_OIDC_AUTHORIZATION_ENDPOINT = os.environ.get("GOLDSET_OIDC_AUTHORIZATION_ENDPOINT", "")
GOLDSET_OIDC_TOKEN_ENDPOINT = os.environ.get("GOLDSET_OIDC_TOKEN_ENDPOINT", "")
GOLDSET_OIDC_USERINFO_ENDPOINT = os.environ.get("GOLDSET_OIDC_USERINFO_ENDPOINT", "")
GOLDSET_OIDC_JWKS_ENDPOINT = os.environ.get("GOLDSET_OIDC_JWKS_ENDPOINT", "")
GOLDSET_OIDC_END_SESSION_ENDPOINT = os.environ.get("GOLDSET_OIDC_END_SESSION_ENDPOINT", "")
#: Where API bearer tokens are checked to be this client's (RFC 7662); without one, the user-info endpoint alone
#: vouches for them.
GOLDSET_OIDC_INTROSPECTION_ENDPOINT = os.environ.get("GOLDSET_OIDC_INTROSPECTION_ENDPOINT", "")
#: Other clients of the provider (a command-line tool's) whose access tokens the API accepts besides Goldset's own.
GOLDSET_OIDC_API_CLIENTS = env_list("GOLDSET_OIDC_API_CLIENTS", "")
GOLDSET_OIDC_SCOPES = os.environ.get("GOLDSET_OIDC_SCOPES", "openid email profile")
GOLDSET_OIDC_SIGNING_ALGS = env_list("GOLDSET_OIDC_SIGNING_ALGS", "RS256")
#: The provider's name on the login page's button ("Sign in with <name>").
GOLDSET_OIDC_PROVIDER_NAME = os.environ.get("GOLDSET_OIDC_PROVIDER_NAME", "")
#: ``claim:value=project-slug/role`` rules separated by ``;``; empty: no role ever comes from the provider.
GOLDSET_OIDC_ROLE_MAP = os.environ.get("GOLDSET_OIDC_ROLE_MAP", "")
GOLDSET_OIDC_TIMEOUT = float(os.environ.get("GOLDSET_OIDC_TIMEOUT", "10"))
#: Off (with SSO configured): the login page offers only SSO and the password backend refuses.
GOLDSET_LOCAL_LOGIN = env_bool("GOLDSET_LOCAL_LOGIN", True)
# mozilla-django-oidc's own settings, fixed: the callback is Goldset's, the flow uses a nonce and PKCE, and the
# ID token is kept in the session for the provider's logout.
OIDC_AUTHENTICATION_CALLBACK_URL = "annotation:sso-callback"
OIDC_USE_NONCE = True
OIDC_USE_PKCE = True
OIDC_STORE_ID_TOKEN = True
OIDC_CREATE_USER = True
OIDC_TIMEOUT = GOLDSET_OIDC_TIMEOUT

# Content Security Policy (django-csp 4): only our own scripts, styles and images; no framing, no plugins.
# Inline scripts must carry the per-request nonce ({{ request.csp_nonce }}).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "frame-ancestors": ["'none'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
    },
}

LOGIN_URL = "annotation:login"
LOGIN_REDIRECT_URL = "annotation:home"
LOGOUT_REDIRECT_URL = "annotation:login"

LANGUAGE_CODE = "en"
LANGUAGES = [("en", _("English")), ("ko", _("Korean"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = os.environ.get("TIME_ZONE", "Asia/Seoul")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if PRODUCTION
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
    # Uploads (imports, predictions files) and release folders (config/storage.py): on the local disk under
    # MEDIA_ROOT unless a bucket is configured below.
    "uploads": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "releases": {"BACKEND": "config.storage.ReleaseFolderStorage"},
}
MEDIA_ROOT = Path(os.environ.get("GOLDSET_MEDIA_ROOT", BASE_DIR / "media"))

# An S3-compatible bucket for uploads and releases (django-storages): then web processes and workers share
# nothing but the database, the broker and the bucket. Credentials come the usual boto3 way
# (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or an instance role).
AWS_STORAGE_BUCKET_NAME = os.environ.get("AWS_STORAGE_BUCKET_NAME", "")
if AWS_STORAGE_BUCKET_NAME:
    from config.storage import bucket_storages

    STORAGES.update(bucket_storages(
        AWS_STORAGE_BUCKET_NAME, endpoint_url=os.environ.get("AWS_S3_ENDPOINT_URL") or None,
        region_name=os.environ.get("AWS_S3_REGION_NAME") or None,
        addressing_style=os.environ.get("AWS_S3_ADDRESSING_STYLE") or None))

# API tokens (``POST /api/auth/token/``) are valid this many days; a password change revokes them at once.
GOLDSET_API_TOKEN_DAYS = int(os.environ.get("GOLDSET_API_TOKEN_DAYS", "30"))

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first, so an anonymous request gets 401 with a WWW-Authenticate header.
        "annotation.api.authentication.TokenAuthentication",
        # ``Authorization: Bearer <access token>`` from the SSO provider; nothing while SSO is off.
        "annotation.sso.authentication.BearerAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # JSON bodies nested too deeply or holding NUL characters are refused with 400 (annotation/api/parsers.py).
    "DEFAULT_PARSER_CLASSES": [
        "annotation.api.parsers.CheckedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    # Service errors (and the domain's other refusals) become responses here, never in the views.
    "EXCEPTION_HANDLER": "annotation.api.exceptions.exception_handler",
}
# The OpenAPI schema (/api/schema/) and docs (/api/docs/) need a login in production; /healthz stays open.
GOLDSET_API_SCHEMA_PUBLIC = env_bool("GOLDSET_API_SCHEMA_PUBLIC", not PRODUCTION)
SPECTACULAR_SETTINGS = {
    "TITLE": "Goldset API",
    "DESCRIPTION": "Build KLUE-style NLU benchmark datasets: projects, guidelines, items, the annotation "
    "queue, annotations and flags.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI is served from our own static files, never from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # The payloads Goldset POSTs to a project's webhook endpoints (OpenAPI 3.1 ``webhooks``).
    "OAS_VERSION": "3.1.0",
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums",
                             "annotation.api.schema_hooks.nullable_any"],
    "ENUM_NAME_OVERRIDES": {"WebhookEventEnum": "annotation.webhooks.models.WebhookEvent"},
    "WEBHOOKS": [f"annotation.webhooks.schema.{event}" for event in (
        "IMPORT_FINISHED", "IMPORT_FAILED", "RELEASE_BUILT", "RELEASE_PUBLISHED", "AGREEMENT_READY",
        "ADJUDICATION_QUEUE_ABOVE")],
}

# Celery: eager in-process without a broker, real workers with one.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
# The queue jobs go to, the web app's and those a job queues itself (a webhook's delivery after an import): a
# worker started with ``-Q`` on another queue must queue its own follow-up jobs there too.
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_TASK_DEFAULT_QUEUE", "celery")
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND", CELERY_BROKER_URL or None)
# A worker that dies mid-task leaves the message unacknowledged, so another worker redoes it.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TRACK_STARTED = True
# With Redis, a message taken by a worker whose main process died (killed, OOM, machine lost) goes back to
# the queue only after this many seconds unacknowledged. It must be longer than the longest job: a job
# still running past it is handed to a second worker too (the jobs tolerate that, at the cost of the work).
# A killed pool child is different: its worker requeues the message at once (reject on worker lost).
_visibility_timeout = int(os.environ.get("CELERY_VISIBILITY_TIMEOUT", "3600"))
_restore_every = min(60, max(1, _visibility_timeout // 4))
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": _visibility_timeout,
    # Sweep for such messages a few times per timeout (kombu's default sweeps every 100 s) ...
    "unacked_restore_interval": _restore_every,
    "unacked_restore_throttle": 1,
    # ... and let a worker killed during a sweep hold up the others' sweeps for seconds, not 5 minutes.
    "unacked_mutex_expire": max(5, _restore_every),
}

# Imports: files from this size on are prepared (parsed, validated, screened) in worker processes, this many
# (0: one per core, at most 4); see datasets_build/processes.py.
GOLDSET_IMPORT_PARALLEL_MIN_MB = float(os.environ.get("GOLDSET_IMPORT_PARALLEL_MIN_MB", "1"))
GOLDSET_IMPORT_PROCESSES = int(os.environ.get("GOLDSET_IMPORT_PROCESSES", "0"))
# The largest record an import reads, in KiB of characters (a JSONL line, a CSV row, a KLUE record or TSV
# sentence): a larger one is refused before it is parsed. KLUE's largest records are a few KiB.
GOLDSET_IMPORT_MAX_RECORD_KB = int(os.environ.get("GOLDSET_IMPORT_MAX_RECORD_KB", "1024"))
# A ZIP import (doccano's export) is refused before anything is decompressed when its members would expand to
# more than this many MB together, or a member over 1 MiB to more than this many times its compressed size
# (a real export compresses about 5 to 15 times; a ZIP bomb, thousands).
GOLDSET_IMPORT_ZIP_MAX_MB = int(os.environ.get("GOLDSET_IMPORT_ZIP_MAX_MB", "1024"))
GOLDSET_IMPORT_ZIP_MAX_RATIO = int(os.environ.get("GOLDSET_IMPORT_ZIP_MAX_RATIO", "100"))
# The largest upload (import files, predictions files), in MB.
GOLDSET_MAX_UPLOAD_MB = int(os.environ.get("GOLDSET_MAX_UPLOAD_MB", "200"))
# An import reports at most this many bad records (and writes nothing when there is one).
GOLDSET_IMPORT_MAX_ERRORS = int(os.environ.get("GOLDSET_IMPORT_MAX_ERRORS", "100"))
# Estimated Jaccard similarity from which an imported item is a near duplicate of an earlier one.
GOLDSET_NEAR_DUPLICATE_THRESHOLD = float(os.environ.get("GOLDSET_NEAR_DUPLICATE_THRESHOLD", "0.8"))
# The salt of stored PII finding hashes; empty: one derived from SECRET_KEY.
GOLDSET_PII_SALT = os.environ.get("GOLDSET_PII_SALT", "")
# Kiwi (the threat screener's and DP's analyser) allocates through its own mimalloc, which by default keeps
# memory it freed for later use: told to hand it back at once, a process that lets go of the analyser
# (datasets_build.morph.analyser_let_go) gets that memory back. mimalloc reads it when Kiwi is first
# imported, which is after the settings; a value set outside is kept.
os.environ.setdefault("MIMALLOC_PURGE_DELAY", "0")
# Toxicity and bias screeners run on every imported item (dotted paths of classes; docs/screening.md).
GOLDSET_SCREENERS = env_list("GOLDSET_SCREENERS", "datasets_build.screening.lexicon.LexiconScreener,"
                             "datasets_build.screening.threats.ThreatScreener")

# Releases: where those built from the browser or the API go (empty: MEDIA_ROOT/releases), and the dev records
# below which the baseline check gives no verdict.
GOLDSET_RELEASE_ROOT = os.environ.get("GOLDSET_RELEASE_ROOT", "")
GOLDSET_RELEASE_CHECK_MIN_DEV = int(os.environ.get("GOLDSET_RELEASE_CHECK_MIN_DEV", "20"))

# Annotation queue: how long an item handed to an annotator stays reserved for them.
# Webhook endpoints on loopback, link-local, private or reserved addresses (and plain http://) are refused unless
# this is on: for a receiver inside the institution's own network.
GOLDSET_WEBHOOKS_ALLOW_PRIVATE = env_bool("GOLDSET_WEBHOOKS_ALLOW_PRIVATE", False)
GOLDSET_LEASE_MINUTES = int(os.environ.get("GOLDSET_LEASE_MINUTES", "30"))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO" if PRODUCTION else "WARNING")},
}

if PRODUCTION:
    if GOLDSET_TRUSTED_PROXY_COUNT > 0:
        # Only a counted proxy's X-Forwarded-Proto says the client used HTTPS; without one, a client could claim it.
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    # A health check from inside the network may use plain HTTP.
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "31536000"))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_CONTENT_TYPE_NOSNIFF = True
    SECURE_REFERRER_POLICY = "same-origin"
    X_FRAME_OPTIONS = "DENY"
    SESSION_COOKIE_HTTPONLY = True
    SESSION_COOKIE_SAMESITE = "Lax"
    CSRF_COOKIE_SAMESITE = "Lax"
    SESSION_COOKIE_AGE = int(os.environ.get("SESSION_COOKIE_AGE", str(12 * 3600)))

CELERY_BEAT_SCHEDULE = {
    "expire-leases": {"task": "annotation.expire_leases", "schedule": 300.0},
    # Model-assisted annotation: retrain suggesters whose project gained ``retrain_every`` gold items.
    "suggester-retrain-due": {"task": "exports.suggester_retrain_due", "schedule": 600.0},
}
