"""The workspace pages: /workspaces/ (a person's workspaces and roles; a superuser makes and
renames them) and the header's switcher (a POST, remembered in the session)."""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from core.middleware import SESSION_WORKSPACE
from core.roles import AuthenticatedHttpRequest, signed_in_required
from core.workspaces import WorkspaceUnknown, current_set
from home.forms import WorkspaceForm, WorkspaceRenameForm
from home.selectors import workspace_rows
from home.services import PeopleError
from home.workspace_services import workspace_create, workspace_rename


def _page(request: HttpRequest, *, form=None, status: int = 200) -> HttpResponse:
    rows = workspace_rows(user=request.user)
    for row in rows:
        row["rename_form"] = WorkspaceRenameForm(initial={"name": row["workspace"].name}, prefix=row["workspace"].slug)
    return render(
        request,
        "home/workspaces.html",
        {"rows": rows, "form": form or WorkspaceForm(prefix="new"), "may_create": request.user.is_superuser},
        status=status,
    )


@signed_in_required
def workspaces(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The person's workspaces with their roles (every one for a superuser, who makes them here)."""
    return _page(request)


@signed_in_required
@require_POST
def workspace_new(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = WorkspaceForm(request.POST, prefix="new")
    if form.is_valid():
        try:
            workspace = workspace_create(
                slug=form.cleaned_data["slug"],
                name=form.cleaned_data["name"],
                first_admin=form.cleaned_data["first_admin"],
                actor=request.user,
            )
        except PeopleError as error:
            form.add_error(None, error.message)
        else:
            messages.success(request, _("Workspace %(name)s made.") % {"name": workspace.name})
            return redirect("workspaces")
    return _page(request, form=form, status=400)


@signed_in_required
@require_POST
def workspace_rename_view(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    rows = {row["workspace"].slug: row["workspace"] for row in workspace_rows(user=request.user)}
    workspace = rows.get(slug)
    form = WorkspaceRenameForm(request.POST, prefix=slug)
    if workspace is None or not form.is_valid():
        messages.error(request, _("Give the workspace a name."))
        return redirect("workspaces")
    try:
        workspace_rename(workspace=workspace, name=form.cleaned_data["name"], actor=request.user)
    except PeopleError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, _("Workspace %(slug)s renamed.") % {"slug": slug})
    return redirect("workspaces")


@signed_in_required
@require_POST
def workspace_switch(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Work in one workspace (its slug) or across all of one's workspaces (""), for this session;
    back to the page the switcher was on. A POST with the CSRF token: no link or other site
    switches a person's workspace."""
    slug = request.POST.get("workspace", "")
    if slug:
        try:
            workspace = current_set(request.user, slug)
        except WorkspaceUnknown as error:
            messages.error(request, error.message)
            return redirect("workspaces")
        request.session[SESSION_WORKSPACE] = workspace.slug
        messages.success(request, _("You now work in %(name)s.") % {"name": workspace.name})
    else:
        request.session.pop(SESSION_WORKSPACE, None)
        messages.success(request, _("You now work across all your workspaces."))
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        back = "/"
    return redirect(back)
