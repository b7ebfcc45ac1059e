"""Single sign-on with OpenID Connect: the identity links (models), the login backend and API authentication built
on mozilla-django-oidc, and the login, callback and logout views. Configuration: config/oidc.py."""
