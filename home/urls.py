"""Pages and API routes that span the apps: home, the researcher dashboard, exports."""

from django.urls import path

from home import views
from home.api import ExportApi, ExportBundleApi

urlpatterns = [
    path("", views.home, name="home"),
    path("dashboard/", views.dashboard, name="dashboard"),
    path("people/", views.people, name="people"),
    path("people/accounts/", views.account_new, name="people-account-new"),
    path("people/<int:user_id>/roles/", views.account_roles, name="people-roles"),
    path("people/<int:user_id>/active/", views.account_active, name="people-active"),
    path("people/invitations/", views.invitation_new, name="people-invitation-new"),
    path(
        "people/invitations/<int:invitation_id>/withdraw/", views.invitation_withdraw, name="people-invitation-withdraw"
    ),
    # The token rides in the query string, which the recommended access log leaves out.
    path("invite/", views.invitation_accept_page, name="invitation-accept"),
    # Links handed out when the token was part of the path: redirected to the form above.
    path("invite/<str:token>/", views.invitation_old_link, name="invitation-accept-path"),
]

api_urlpatterns = [
    # Before the tables' route, which would take "bundle" for a table's name.
    path("exports/bundle/", ExportBundleApi.as_view(), name="api-export-bundle"),
    path("exports/<slug:what>/", ExportApi.as_view(), name="api-export"),
]
