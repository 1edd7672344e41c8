"""Pages of the core app."""

from django.urls import path

from core import views

app_name = "core"

urlpatterns = [
    path("audit/", views.audit_log, name="audit"),
    path("account/tokens/", views.account_tokens, name="tokens"),
    path("account/tokens/<int:token_id>/revoke/", views.account_token_revoke, name="token-revoke"),
]
