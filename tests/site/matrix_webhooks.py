"""Matrix rows for a project's webhooks: managers only (the secret and the deliveries are theirs)."""

from tests.site.matrix import Case, managers

P = "api/projects/<int:project_pk>/"
#: A global address literal: the SSRF check resolves it without DNS and lets it pass.
PUBLIC_URL = "https://93.184.215.14/goldset-hook"


def _p(sc, rest: str = "") -> str:
    return f"/api/projects/{sc.project.id}/{rest}"


CASES = [
    Case(P + "webhooks/", "get", lambda sc: _p(sc, "webhooks/"), managers(200)),
    Case(P + "webhooks/", "post", lambda sc: _p(sc, "webhooks/"), managers(201),
         body=lambda sc: {"url": PUBLIC_URL, "events": ["release.published"]}),
    Case(P + "webhooks/<pk>/", "delete", lambda sc: _p(sc, f"webhooks/{sc.extra['webhook']}/"), managers(204)),
    Case(P + "webhooks/deliveries/", "get", lambda sc: _p(sc, "webhooks/deliveries/"), managers(200)),
    Case(P + "webhooks/deliveries/<pk>/replay/", "post",
         lambda sc: _p(sc, f"webhooks/deliveries/{sc.extra['webhook_delivery']}/replay/"), managers(202)),
]


def prepare(sc) -> None:
    """An endpoint with one delivery (never sent: the test's transaction does not commit)."""
    from annotation.webhooks import services as webhooks

    endpoint = webhooks.endpoint_create(project=sc.project, url=PUBLIC_URL, events=["release.built"],
                                        by=sc.users["manager"])
    delivery, = webhooks.emit(sc.project, "release.built", {"release": 1, "version": "1.0.0", "status": "passed"})
    sc.extra.update(webhook=endpoint.id, webhook_delivery=delivery.id)
