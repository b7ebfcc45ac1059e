"""API of a project's webhooks: managers register and remove endpoints (the secret is shown once, in the
creation's answer), read the deliveries with every attempt, and replay one."""

from __future__ import annotations

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from ..models import WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookEvent
from ..permissions import MANAGE
from ..webhooks import selectors as webhook_selectors
from ..webhooks import services as webhooks
from .views import ProjectScoped


class WebhookEndpointSerializer(serializers.ModelSerializer):
    failed = serializers.IntegerField(read_only=True, help_text="Deliveries whose attempts are all spent.")

    class Meta:
        model = WebhookEndpoint
        fields = ["id", "url", "events", "adjudication_threshold", "active", "created_at", "failed"]
        read_only_fields = fields


class WebhookEndpointCreateSerializer(serializers.Serializer):
    url = serializers.URLField(max_length=500)
    events = serializers.MultipleChoiceField(choices=WebhookEvent.choices)
    adjudication_threshold = serializers.IntegerField(
        min_value=0, max_value=2_000_000_000, required=False, allow_null=True,
        help_text="With adjudication.queue_above: told when more items than this wait for adjudication.")


class WebhookEndpointCreatedSerializer(WebhookEndpointSerializer):
    secret = serializers.CharField(read_only=True, help_text="Signs every delivery; shown only in this answer.")

    class Meta(WebhookEndpointSerializer.Meta):
        fields = [*WebhookEndpointSerializer.Meta.fields, "secret"]
        read_only_fields = fields


class WebhookAttemptSerializer(serializers.ModelSerializer):
    class Meta:
        model = WebhookAttempt
        fields = ["at", "status_code", "duration_ms", "error", "ok"]


class WebhookDeliverySerializer(serializers.ModelSerializer):
    attempts = WebhookAttemptSerializer(many=True, read_only=True)

    class Meta:
        model = WebhookDelivery
        fields = ["id", "endpoint", "event", "status", "created_at", "payload", "attempts"]
        read_only_fields = fields


class WebhookEndpointViewSet(ProjectScoped, mixins.ListModelMixin, mixins.DestroyModelMixin,
                             viewsets.GenericViewSet):
    """The project's webhook endpoints; managers only."""

    roles = {"list": MANAGE, "create": MANAGE, "destroy": MANAGE}
    lookup_value_regex = "[0-9]+"
    serializer_class = WebhookEndpointSerializer

    def project_queryset(self) -> QuerySet:
        return webhook_selectors.endpoints(self.project)

    @extend_schema(request=WebhookEndpointCreateSerializer, responses={201: WebhookEndpointCreatedSerializer})
    def create(self, request: Request, project_pk: int) -> Response:
        given = WebhookEndpointCreateSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        endpoint = webhooks.endpoint_create(project=self.project, url=given.validated_data["url"],
                                            events=sorted(given.validated_data["events"]), by=request.user,
                                            adjudication_threshold=given.validated_data.get("adjudication_threshold"))
        endpoint.failed = 0
        return Response(WebhookEndpointCreatedSerializer(endpoint).data, status=status.HTTP_201_CREATED)

    def perform_destroy(self, instance: WebhookEndpoint) -> None:
        webhooks.endpoint_delete(instance)


class WebhookDeliveryViewSet(ProjectScoped, mixins.ListModelMixin, viewsets.GenericViewSet):
    """Every delivery of the project's events, newest first, with its attempts; managers only."""

    roles = {"list": MANAGE, "replay": MANAGE}
    lookup_value_regex = "[0-9]+"
    serializer_class = WebhookDeliverySerializer

    def project_queryset(self) -> QuerySet:
        params = self.request.query_params
        endpoint = params.get("endpoint") or ""
        return webhook_selectors.deliveries(self.project, endpoint_id=int(endpoint) if endpoint.isdigit() else None,
                                            failed_only=params.get("status") == "failed")

    @extend_schema(parameters=[OpenApiParameter("endpoint", int, required=False),
                               OpenApiParameter("status", str, enum=["failed"], required=False)])
    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(request=None, responses={202: WebhookDeliverySerializer})
    @action(detail=True, methods=["post"])
    def replay(self, request: Request, project_pk: int, pk: int) -> Response:
        """Send the delivery again: a new round of attempts, signed with a fresh timestamp."""
        delivery = get_object_or_404(webhook_selectors.deliveries(self.project), pk=pk)
        webhooks.delivery_replay(delivery)
        return Response(WebhookDeliverySerializer(delivery).data, status=status.HTTP_202_ACCEPTED)
