"""Names the dead-code check (.ci/dead_code.py) cannot see used, each with who uses it."""

from annotation.api.schema_hooks import nullable_any
from annotation.services import suggestions_clear
from annotation.sso.backend import SsoBackend
from annotation.tasks import load_agreement_report
from config.client_ip import client_ip
from config.errors import csrf_failure
from datasets_build.dedup import shingles
from exports.baselines.synthetic import write_synthetic_release
from exports.selectors import item_release_refusal

USED_BY_NAME = (
    load_agreement_report,  # Celery's worker_process_init signal calls it in every worker process
    nullable_any,  # SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"] names it
    suggestions_clear,  # run from the Django shell to withdraw every suggestion (docs/assist.md)
    client_ip,  # settings.AXES_CLIENT_IP_CALLABLE names it
    csrf_failure,  # settings.CSRF_FAILURE_VIEW names it
    shingles,  # the reference tests/datasets_build/test_dedup.py holds the numpy signatures equal to
    write_synthetic_release,  # the synthetic releases of bench/baselines.py and the release-check tests
    item_release_refusal,  # ExportsConfig.item_delete_guard names it (annotation.services.item_delete)
    # mozilla-django-oidc's backend reads these attributes; SsoBackend makes them properties read when used
    SsoBackend.OIDC_OP_TOKEN_ENDPOINT,
    SsoBackend.OIDC_OP_USER_ENDPOINT,
    SsoBackend.OIDC_OP_JWKS_ENDPOINT,
)
