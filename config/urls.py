"""The project's routes. Each app owns its pages (`<app>/urls.py`) and API (`<app>/api_urls.py`)."""

from typing import Any

from django.conf import settings
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.urls import URLPattern, URLResolver, include, path
from django.utils.csp import CSP
from django.views.decorators.csp import csp_override
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.permissions import IsAuthenticated

from core import api_schema  # noqa: F401 - the schema's description of the session sign-in
from core.api import ApiRootApi, MeApi
from core.token_api import TokenDetailApi, TokenListApi
from home import urls as home_urls
from judging import api_urls as judging_api_urls

# Swagger UI with its start-up script served as a file (the split view), so the page runs under
# the site's script policy; only its own small inline <style> block needs styles relaxed here.
docs_csp: dict[str, Any] = {**settings.SECURE_CSP, "style-src": [CSP.SELF, CSP.UNSAFE_INLINE]}
api_docs = csp_override(docs_csp)(
    login_required(SpectacularSwaggerSplitView.as_view(url_name="api-schema", permission_classes=[IsAuthenticated]))
)

# A database that cannot be reached answers 503 with Retry-After, not 500 (core/views.py).
handler500 = "core.views.server_error"

api_patterns: list[URLPattern | URLResolver] = [
    # First: the annotators' next and vote come twice a round from every annotator, and Django
    # tries the patterns in turn (no other API route starts with campaigns/ or annotate/).
    path("", include("annotation.api_urls")),
    path("", ApiRootApi.as_view(), name="api-root"),
    path("me/", MeApi.as_view(), name="api-me"),
    path("tokens/", TokenListApi.as_view(), name="api-tokens"),
    path("tokens/<int:token_id>/", TokenDetailApi.as_view(), name="api-token"),
    path("", include(judging_api_urls.before_curation)),
    path("", include("curation.api_urls")),
    path("", include("judging.api_urls")),
    path("", include("llm.api_urls")),
    path("", include(home_urls.api_urlpatterns)),
    # The schema and its docs describe every endpoint: signed-in people only.
    path("schema/", SpectacularAPIView.as_view(permission_classes=[IsAuthenticated]), name="api-schema"),
    path("docs/", api_docs, name="api-docs"),
]

urlpatterns = [
    # First, for the same reason; nothing else starts with api/.
    path("api/", include(api_patterns)),
    path("", include(home_urls.urlpatterns)),
    path("accounts/login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("i18n/", include("django.conf.urls.i18n")),
    path("admin/", admin.site.urls),
    path("", include("llm.urls")),
    path("", include("core.urls")),
    # Before curation: judging's `datasets/<name>/answers/` would otherwise be read as a dataset
    # named "<name>/answers" by curation's `datasets/<name>/`.
    path("", include("judging.urls")),
    path("", include("curation.urls")),
    path("", include("annotation.urls")),
]
