"""API of the annotator's workspace: the server copy of a draft (the browser keeps its own in local storage)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import selectors, services
from ..models import Assignment, Draft
from ..permissions import ANNOTATE
from .views import ProjectScoped


class DraftSerializer(serializers.ModelSerializer):
    payload = serializers.JSONField()
    seconds_spent = serializers.FloatField(required=False, default=0, min_value=0)

    class Meta:
        model = Draft
        fields = ["assignment", "payload", "seconds_spent", "updated_at"]
        read_only_fields = ["assignment", "updated_at"]


class AssignmentDraftView(ProjectScoped, APIView):
    """GET the saved draft of one of the caller's assignments (204 when none), PUT to replace it."""

    roles = {"get": ANNOTATE, "put": ANNOTATE}
    serializer_class = DraftSerializer

    def _assignment(self, assignment_pk: int) -> Assignment:
        assignment = selectors.assignment_of(self.request.user, self.project, assignment_pk)
        if assignment is None:  # someone else's assignment is as absent as a missing one
            raise NotFound("No such assignment of yours in this project.")
        return assignment

    @extend_schema(responses={200: DraftSerializer, 204: OpenApiResponse(description="No draft saved.")})
    def get(self, request: Request, project_pk: int, assignment_pk: int) -> Response:
        draft = selectors.draft_for(self._assignment(assignment_pk))
        if draft is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(DraftSerializer(draft).data)

    @extend_schema(request=DraftSerializer, responses={200: DraftSerializer,
                                                       409: OpenApiResponse(description="Already submitted.")})
    def put(self, request: Request, project_pk: int, assignment_pk: int) -> Response:
        assignment = self._assignment(assignment_pk)
        serializer = DraftSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        draft = services.draft_save(assignment=assignment, payload=serializer.validated_data["payload"],
                                    seconds_spent=serializer.validated_data["seconds_spent"])
        return Response(DraftSerializer(draft).data)
