"""API views: resolve the project, check the caller's role, call a service or selector, serialise."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import selectors, services
from ..models import Assignment, AuditObject, Flag, Guideline, Item, Membership, Project
from ..permissions import ANNOTATE, CURATE, MANAGE, MEMBERS, can_create_projects
from ..task_types import all_task_types
from . import serializers as s


class ProjectScoped:
    """Mixin for views under ``/api/projects/{project_pk}/``.

    ``roles`` maps a viewset action (or HTTP method, lower-case, for plain views) to the roles allowed.
    Outsiders get 404 so project ids do not leak; members without the role get 403.
    """

    roles: dict[str, frozenset[str]] = {}
    project: Project
    role: str | None
    #: The caller's role and guideline standing, read with the project (one query).
    access: selectors.ProjectAccess

    def get_queryset(self) -> QuerySet:
        if getattr(self, "swagger_fake_view", False):  # schema generation: no request user, no project
            return self.serializer_class.Meta.model.objects.none()
        return self.project_queryset()

    def project_queryset(self) -> QuerySet:
        raise NotImplementedError

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)  # type: ignore[misc]
        project_id = kwargs["project_pk"]
        # A token's query read the project already (api/authentication.py); a session's did not.
        read = getattr(request, "projects_read", {})
        found = read[project_id] if project_id in read else selectors.project_with_access(project_id, request.user)
        if found is None:
            raise NotFound("No such project.")
        self.project, self.access = found
        self.role = self.access.role
        if self.role is None:
            raise NotFound("No such project.")
        key = getattr(self, "action", None) or request.method.lower()
        if self.role not in self.roles.get(key, frozenset()):
            raise PermissionDenied(f"Your role ({self.role}) may not do this in project {self.project.slug}.")


@extend_schema(responses=s.TaskTypeSerializer(many=True))
class TaskTypeList(APIView):
    """The eight KLUE task types with their stages and default label schemas."""

    def get(self, request: Request) -> Response:
        return Response([t.describe() for t in all_task_types()])


class ProjectViewSet(viewsets.ModelViewSet):
    serializer_class = s.ProjectSerializer

    def get_queryset(self) -> QuerySet[Project]:
        if getattr(self, "swagger_fake_view", False):
            return Project.objects.none()
        return selectors.projects_for_user(self.request.user).order_by("id")

    def get_object(self) -> Project:
        project = super().get_object()
        if self.action in {"update", "partial_update", "destroy"} and selectors.role_in_project(
            self.request.user, project
        ) not in MANAGE:
            raise PermissionDenied("Only the project's managers may change it.")
        return project

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        # Checked before the body is validated: the slug's uniqueness check would otherwise tell anyone
        # whether a project with that slug exists.
        if not can_create_projects(request.user):
            raise PermissionDenied("You may not create projects.")
        return super().create(request, *args, **kwargs)

    def perform_create(self, serializer: s.ProjectSerializer) -> None:
        data = serializer.validated_data
        if selectors.project_slug_taken(data["slug"]):
            raise ValidationError({"slug": [f"a project with slug {data['slug']!r} already exists"]})
        serializer.instance = services.project_create(
            name=data["name"], slug=data["slug"], task_type=data["task_type"], created_by=self.request.user,
            annotators_per_item=data.get("annotators_per_item", 3), label_schema=data.get("label_schema") or None,
            description=data.get("description", ""), options=data.get("options"),
        )

    def perform_update(self, serializer: s.ProjectSerializer) -> None:
        serializer.instance = services.project_update(project=serializer.instance,
                                                      changes=dict(serializer.validated_data), by=self.request.user)

    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        services.project_delete(project=self.get_object())
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(responses=OpenApiResponse(description="Items, screening and per-stage counts."))
    @action(detail=True, methods=["get"])
    def progress(self, request: Request, pk: str) -> Response:
        project = self.get_object()
        role = selectors.role_in_project(request.user, project)
        if role in CURATE:
            return Response(selectors.project_progress(project))
        mine: dict[str, object] = {**selectors.annotator_progress(project, request.user)}
        if mine["remaining"] == 0:  # the workspace's empty queue: why, and where to go on
            after = selectors.next_project_with_work(request.user, after=project)
            mine["held_by_others"] = selectors.items_held_by_others(project, request.user)
            mine["next_project"] = None if after is None else {
                "id": after.pk, "name": after.name, "url": reverse("annotation:annotate", args=[after.pk])}
        return Response(mine)


class MembershipViewSet(ProjectScoped, mixins.ListModelMixin, mixins.CreateModelMixin, mixins.UpdateModelMixin,
                        mixins.DestroyModelMixin, viewsets.GenericViewSet):
    roles = {"list": CURATE, "create": MANAGE, "update": MANAGE, "partial_update": MANAGE, "destroy": MANAGE}
    serializer_class = s.MembershipSerializer

    def project_queryset(self) -> QuerySet[Membership]:
        return selectors.project_members(self.project)

    def get_serializer_class(self) -> type:
        return s.MembershipUpdateSerializer if self.action in {"update", "partial_update"} else s.MembershipSerializer

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = s.MembershipSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        username = serializer.validated_data["user"]["username"]
        user = selectors.user_by_username(username)
        if user is None:
            raise ValidationError({"username": [f"no user named {username!r}"]})
        membership = services.membership_set(project=self.project, user=user,
                                             role=serializer.validated_data["role"])
        return Response(s.MembershipSerializer(membership).data, status=status.HTTP_201_CREATED)

    def update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        membership = self.get_object()
        serializer = s.MembershipUpdateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        membership = services.membership_set(project=self.project, user=membership.user,
                                             role=serializer.validated_data["role"])
        return Response(s.MembershipSerializer(membership).data)

    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        services.membership_remove(membership=self.get_object())
        return Response(status=status.HTTP_204_NO_CONTENT)


class GuidelineViewSet(ProjectScoped, mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin,
                       viewsets.GenericViewSet):
    """All versions, for managers and maintainers; managers write drafts and publish them."""

    roles = {"list": CURATE, "retrieve": CURATE, "create": MANAGE, "publish": MANAGE}
    serializer_class = s.GuidelineSerializer

    def project_queryset(self) -> QuerySet[Guideline]:
        return selectors.guideline_versions(self.project)

    @extend_schema(request=s.GuidelineCreateSerializer, responses={201: s.GuidelineSerializer})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = s.GuidelineCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        guideline = services.guideline_create(
            project=self.project, instructions=data["instructions"], ethics=data["ethics"], pii=data["pii"],
            change_note=data.get("change_note", ""), created_by=request.user,
        )
        if data["publish"]:
            guideline = services.guideline_publish(guideline=guideline, by=request.user)
        return Response(s.GuidelineSerializer(guideline).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses=s.GuidelineSerializer)
    @action(detail=True, methods=["post"])
    def publish(self, request: Request, project_pk: str, pk: str) -> Response:
        guideline = services.guideline_publish(guideline=self.get_object(), by=request.user)
        return Response(s.GuidelineSerializer(guideline).data)


class CurrentGuidelineView(ProjectScoped, APIView):
    """The guideline in force, for everyone in the project."""

    roles = {"get": MEMBERS}

    @extend_schema(responses=s.GuidelineSerializer)
    def get(self, request: Request, project_pk: str) -> Response:
        guideline = selectors.current_guideline(self.project)
        if guideline is None:
            raise NotFound("This project has no published guideline yet.")
        data = s.GuidelineSerializer(guideline).data
        data["acknowledged"] = selectors.has_acknowledged_current(request.user, self.project)
        return Response(data)


class AcknowledgeGuidelineView(ProjectScoped, APIView):
    roles = {"post": MEMBERS}

    @extend_schema(request=None, responses={201: s.AcknowledgementSerializer})
    def post(self, request: Request, project_pk: str) -> Response:
        ack = services.guideline_acknowledge(user=request.user, project=self.project)
        return Response(s.AcknowledgementSerializer(ack).data, status=status.HTTP_201_CREATED)


class ItemViewSet(ProjectScoped, mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin,
                  mixins.DestroyModelMixin, viewsets.GenericViewSet):
    """Items with their metadata; annotators reach items only through their assignments."""

    roles = {"list": CURATE, "retrieve": CURATE, "create": MANAGE, "destroy": MANAGE}
    serializer_class = s.ItemSerializer

    @extend_schema(parameters=[
        OpenApiParameter("q", str, required=False, description="Items whose text (the task type's text fields) "
                         "contains this, ignoring case; any substring, Korean included."),
        *[OpenApiParameter(name, str, required=False) for name in ("split", "screening_status", "external_id")]])
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)

    def project_queryset(self) -> QuerySet[Item]:
        params = self.request.query_params
        if len(params.get("q", "")) > selectors.SEARCH_MAX_CHARS:
            raise ValidationError({"q": [f"at most {selectors.SEARCH_MAX_CHARS} characters"]})
        return selectors.item_list(self.project, split=params.get("split"),
                                   screening_status=params.get("screening_status"),
                                   external_id=params.get("external_id"), text=params.get("q", ""))

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = s.ItemSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        item = services.item_create(
            project=self.project, payload=data["payload"], external_id=data.get("external_id", ""),
            split=data.get("split", ""), group_key=data.get("group_key", ""),
        )
        return Response(s.ItemSerializer(item).data, status=status.HTTP_201_CREATED)

    @extend_schema(responses={204: OpenApiResponse(description="Deleted, with its annotations (audited)."),
                              409: OpenApiResponse(description="A published release may hold the item.")})
    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        services.item_delete(item=self.get_object(), by=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class NextItemView(ProjectScoped, APIView):
    """The caller's next assignment with its item; 204 when nothing is left for them."""

    roles = {"get": ANNOTATE}

    @extend_schema(responses={200: s.NextItemSerializer, 204: OpenApiResponse(description="Nothing left."),
                              403: OpenApiResponse(description="Acknowledge the current guideline first."),
                              409: OpenApiResponse(description="The queue is too busy right now; ask again.")})
    def get(self, request: Request, project_pk: str) -> Response:
        assignment = services.assignment_next(project=self.project, user=request.user, access=self.access)
        if assignment is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        # Chosen by the queue; whether it shows a model's suggestion is decided here, once per assignment.
        suggestion = services.suggestion_decide(assignment)
        return Response(s.NextItemSerializer(assignment, context={"suggestion": suggestion}).data)


class AssignmentViewSet(ProjectScoped, mixins.ListModelMixin, viewsets.GenericViewSet):
    """The caller's own assignments in the project (their queue history)."""

    roles = {"list": ANNOTATE, "skip": ANNOTATE}
    serializer_class = s.AssignmentSerializer

    def project_queryset(self) -> QuerySet[Assignment]:
        return selectors.assignments_of(self.request.user, self.project)

    @extend_schema(request=s.SkipSerializer, responses=s.AssignmentSerializer)
    @action(detail=True, methods=["post"])
    def skip(self, request: Request, project_pk: str, pk: str) -> Response:
        serializer = s.SkipSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        assignment = services.assignment_skip(assignment=self.get_object(),
                                              reason=serializer.validated_data["reason"])
        return Response(s.AssignmentSerializer(assignment).data)


# One instance of each for every submission: a serializer deep-copies its fields per instance (a measurable share
# of a submission's CPU, docs/performance.md), and run_validation / to_representation keep no state on it.
_SUBMIT_INPUT = s.AnnotationSubmitSerializer()
_ANNOTATION_OUTPUT = s.AnnotationSerializer()


class AnnotationViewSet(ProjectScoped, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Annotators read only their own annotations; managers and maintainers read all."""

    roles = {"list": MEMBERS, "retrieve": MEMBERS, "create": ANNOTATE, "mine": ANNOTATE,
             "partial_update": ANNOTATE}
    serializer_class = s.AnnotationSerializer

    @extend_schema(responses=s.OwnAnnotationSerializer(many=True))
    @action(detail=False, methods=["get"])
    def mine(self, request: Request, project_pk: str) -> Response:
        """The caller's own submissions, most recently changed first, each saying whether it can still be
        revised (until its item's gold is decided)."""
        page = self.paginate_queryset(selectors.own_annotations(request.user, self.project))
        return self.get_paginated_response(
            s.OwnAnnotationSerializer(page, many=True, context={"task": self.project.task}).data)

    @extend_schema(request=s.AnnotationReviseSerializer, responses={
        200: s.AnnotationSerializer,
        404: OpenApiResponse(description="Not one of your annotations."),
        409: OpenApiResponse(description="The item's gold is decided; the annotation can no longer change.")})
    def partial_update(self, request: Request, project_pk: str, pk: str) -> Response:
        """Revise one of the caller's own annotations (its ``payload``), until its item's gold is decided."""
        data = s.AnnotationReviseSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        annotation = services.annotation_revise(project=self.project, user=request.user,
                                                annotation_id=int(pk) if pk.isdigit() else 0,
                                                payload=data.validated_data["payload"], access=self.access)
        return Response(_ANNOTATION_OUTPUT.to_representation(annotation))

    def project_queryset(self) -> QuerySet:
        qs = selectors.annotations_visible_to(self.request.user, self.project)
        item = self.request.query_params.get("item")
        return qs.filter(item_id=item) if item and item.isdigit() else qs

    @extend_schema(request=s.AnnotationSubmitSerializer, responses={
        201: s.AnnotationSubmittedSerializer, 200: s.AnnotationSubmittedSerializer,
        409: OpenApiResponse(description="A late submission: the lease ran out and the item is complete.")})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Submit; the answer carries the caller's next assignment as ``next/`` would give it (``"next"``:
        null when nothing is left; absent when the client must ask ``next/``), so one round trip suffices."""
        data = _SUBMIT_INPUT.run_validation(request.data)
        submission = services.annotation_submit_and_next(
            project=self.project, user=request.user, item_id=data["item"], payload=data["payload"],
            stage=data.get("stage") or None, seconds_spent=data.get("seconds_spent"), access=self.access,
        )
        body = _ANNOTATION_OUTPUT.to_representation(submission.annotation)
        if submission.next_offered:
            body["next"] = None if submission.next is None else s.NextItemSerializer(
                submission.next, context={"suggestion": services.suggestion_decide(submission.next)}).data
        return Response(body, status=status.HTTP_201_CREATED if submission.created else status.HTTP_200_OK)


class FlagViewSet(ProjectScoped, mixins.ListModelMixin, mixins.CreateModelMixin, viewsets.GenericViewSet):
    """Raise a flag on an item (PII, toxic, biased, copyright, other); managers resolve them."""

    roles = {"list": MEMBERS, "create": MEMBERS, "resolve": MANAGE}
    serializer_class = s.FlagSerializer

    def project_queryset(self) -> QuerySet[Flag]:
        return selectors.flags_visible_to(self.request.user, self.project)

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = s.FlagSerializer(data=request.data, context={"project": self.project})
        serializer.is_valid(raise_exception=True)
        item = serializer.validated_data["item"]
        if self.role not in CURATE and not selectors.was_assigned(request.user, item):
            raise ValidationError({"item": ["you can flag only items assigned to you"]})
        flag = services.flag_create(item=item, user=request.user, kind=serializer.validated_data["kind"],
                                    note=serializer.validated_data.get("note", ""))
        return Response(s.FlagSerializer(flag).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=s.FlagResolveSerializer, responses=s.FlagSerializer)
    @action(detail=True, methods=["post"])
    def resolve(self, request: Request, project_pk: str, pk: str) -> Response:
        serializer = s.FlagResolveSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        flag = services.flag_resolve(flag=self.get_object(), resolution=serializer.validated_data["resolution"],
                                     by=request.user, note=serializer.validated_data["note"])
        return Response(s.FlagSerializer(flag).data)


@extend_schema(parameters=[OpenApiParameter("object_type", str, enum=AuditObject.values,
                                            description="Only events about this kind of object.")])
class AuditEventViewSet(ProjectScoped, mixins.ListModelMixin, viewsets.GenericViewSet):
    """The project's audit trail (who changed which annotation, gold decision, guideline, release or import,
    when, before and after); managers only."""

    roles = {"list": MANAGE}
    serializer_class = s.AuditEventSerializer

    def project_queryset(self) -> QuerySet:
        return selectors.audit_events(self.project, object_type=self.request.query_params.get("object_type"))


class BudgetView(ProjectScoped, APIView):
    """The annotation budget: k by split and subset (changed with the project's PATCH, ``options.budget``), how
    many items get each k, and the items assigned to chosen annotators (``POST``: assign; managers)."""

    roles = {"get": CURATE, "post": MANAGE}

    @extend_schema(responses=s.BudgetSummarySerializer)
    def get(self, request: Request, project_pk: str) -> Response:
        return Response(s.BudgetSummarySerializer(selectors.budget_summary(self.project)).data)

    @extend_schema(request=s.AssignItemsSerializer, responses=s.AssignedSerializer)
    def post(self, request: Request, project_pk: str) -> Response:
        body = s.AssignItemsSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        items = services.items_chosen(self.project, item_ids=data.get("items"), where=data.get("where"))
        count = services.items_assign(project=self.project, items=items, annotators=data["annotators"],
                                      by=request.user)
        return Response(s.AssignedSerializer({"items": count, "annotators": sorted(set(data["annotators"]))}).data)
