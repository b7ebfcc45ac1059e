from tests.sso.oidc_provider import provider, sso  # noqa: F401 (fixtures)
