from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.routers import SimpleRouter

from . import urls_agreement, views, views_webhooks, views_workspace
from .views_token import ObtainTokenView, SchemaAccess

app_name = "api"

router = SimpleRouter()
router.register("projects", views.ProjectViewSet, basename="project")

project_router = SimpleRouter()
project_router.register("members", views.MembershipViewSet, basename="membership")
project_router.register("guidelines", views.GuidelineViewSet, basename="guideline")
project_router.register("items", views.ItemViewSet, basename="item")
project_router.register("assignments", views.AssignmentViewSet, basename="assignment")
project_router.register("annotations", views.AnnotationViewSet, basename="annotation")
project_router.register("flags", views.FlagViewSet, basename="flag")
project_router.register("audit", views.AuditEventViewSet, basename="audit-event")
project_router.register("webhooks/deliveries", views_webhooks.WebhookDeliveryViewSet, basename="webhook-delivery")
project_router.register("webhooks", views_webhooks.WebhookEndpointViewSet, basename="webhook")

project_urlpatterns = [
    path("guideline/", views.CurrentGuidelineView.as_view(), name="guideline-current"),
    path("guideline/acknowledge/", views.AcknowledgeGuidelineView.as_view(), name="guideline-acknowledge"),
    path("next/", views.NextItemView.as_view(), name="next-item"),
    path("budget/", views.BudgetView.as_view(), name="budget"),
    path("assignments/<int:assignment_pk>/draft/", views_workspace.AssignmentDraftView.as_view(),
         name="assignment-draft"),
    path("", include(urls_agreement.urlpatterns)),
    path("", include(project_router.urls)),
]

urlpatterns = [
    path("auth/token/", ObtainTokenView.as_view(), name="api-token"),
    path("task-types/", views.TaskTypeList.as_view(), name="task-types"),
    path("schema/", SpectacularAPIView.as_view(permission_classes=[SchemaAccess]), name="schema"),
    # The split view serves the init script as its own request (?script): the CSP allows no inline script.
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api:schema", template_name="api/swagger_ui.html",
                                                      permission_classes=[SchemaAccess]),
         name="api-docs"),
    path("projects/<int:project_pk>/", include(project_urlpatterns)),
    path("", include(router.urls)),
]
