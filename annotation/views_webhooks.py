"""The project's Webhooks page (managers only): register and remove endpoints, see every delivery with its
attempts (failures first in mind), replay one."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods

from .models import WebhookEvent
from .permissions import MANAGE
from .services import ServiceError
from .views import _posted_id, _project_context, project_for
from .webhooks import selectors as webhook_selectors
from .webhooks import services as webhooks

DELIVERIES_PER_PAGE = 25


class WebhookEndpointForm(forms.Form):
    url = forms.URLField(label=gettext_lazy("Endpoint URL"), max_length=500, assume_scheme="https",
                         widget=forms.URLInput(attrs={"placeholder": "https://"}))
    events = forms.MultipleChoiceField(label=gettext_lazy("Events"), choices=WebhookEvent.choices,
                                       widget=forms.CheckboxSelectMultiple)
    adjudication_threshold = forms.IntegerField(
        label=gettext_lazy("Adjudication queue threshold"), min_value=0, max_value=2_000_000_000, required=False,
        help_text=gettext_lazy("With the adjudication queue event: told when more items than this wait."))


@login_required
@require_http_methods(["GET", "POST"])
def project_webhooks(request: HttpRequest, project_id: int) -> HttpResponse:
    project, role = project_for(request, project_id, MANAGE)
    action = request.POST.get("action") if request.method == "POST" else None
    form = WebhookEndpointForm(request.POST if action == "create" else None)
    created = confirming = None
    if action == "delete":
        endpoint = get_object_or_404(webhook_selectors.endpoints(project), pk=_posted_id(request, "endpoint"))
        # Deleting takes two steps: the first shows what is lost; only the confirmation's POST deletes.
        if request.POST.get("confirm") != "delete":
            confirming = endpoint
        else:
            webhooks.endpoint_delete(endpoint)
            messages.success(request, _("Webhook endpoint removed."))
            return redirect("annotation:project-webhooks", project.pk)
    if action == "replay":
        delivery = get_object_or_404(webhook_selectors.deliveries(project), pk=_posted_id(request, "delivery"))
        webhooks.delivery_replay(delivery)
        messages.success(request, _("Delivery %(id)s queued again.") % {"id": delivery.pk})
        return redirect("annotation:project-webhooks", project.pk)
    if action == "create" and form.is_valid():
        try:
            created = webhooks.endpoint_create(project=project, url=form.cleaned_data["url"],
                                               events=form.cleaned_data["events"], by=request.user,
                                               adjudication_threshold=form.cleaned_data["adjudication_threshold"])
        except ServiceError as error:
            form.add_error(error.field if error.field in form.fields else None, error.message)
        else:
            form = WebhookEndpointForm()  # the secret is shown once, in this answer, never stored in the session
    failed_only = request.GET.get("status") == "failed"
    page = Paginator(webhook_selectors.deliveries(project, failed_only=failed_only),
                     DELIVERIES_PER_PAGE).get_page(request.GET.get("page"))
    context = _project_context(project, role, "webhooks")
    labels = dict(WebhookEvent.choices)
    endpoints = [{"endpoint": endpoint, "events": [labels.get(event, event) for event in endpoint.events]}
                 for endpoint in webhook_selectors.endpoints(project)]
    context.update({"form": form, "created": created, "endpoints": endpoints, "page": page,
                    "failed_only": failed_only, "confirming": confirming})
    return render(request, "annotation/project_webhooks.html", context)
