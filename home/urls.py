"""Pages and API routes that span the apps: home, the researcher dashboard, exports."""

from django.urls import path

from home import views, workspace_views
from home.api import ExportApi, ExportBundleApi
from home.workspace_api import MemberApi, MemberListApi, WorkspaceListApi

urlpatterns = [
    path("", views.home, name="home"),
    path("dashboard/", views.dashboard, name="dashboard"),
    path("archived/", views.archived, name="archived"),
    path("people/", views.people, name="people"),
    path("people/accounts/", views.account_new, name="people-account-new"),
    path("people/<int:user_id>/roles/", views.account_roles, name="people-roles"),
    path("people/<int:user_id>/active/", views.account_active, name="people-active"),
    path("people/<int:user_id>/remove/", views.member_leave, name="people-remove"),
    path("people/members/", views.member_new, name="people-member-new"),
    path("workspaces/", workspace_views.workspaces, name="workspaces"),
    path("workspaces/new/", workspace_views.workspace_new, name="workspace-new"),
    path("workspaces/switch/", workspace_views.workspace_switch, name="workspace-switch"),
    path("workspaces/<slug:slug>/rename/", workspace_views.workspace_rename_view, name="workspace-rename"),
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
    path("workspaces/", WorkspaceListApi.as_view(), name="api-workspaces"),
    path("workspaces/<slug:slug>/members/", MemberListApi.as_view(), name="api-workspace-members"),
    path("workspaces/<slug:slug>/members/<str:username>/", MemberApi.as_view(), name="api-workspace-member"),
]
