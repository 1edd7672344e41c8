"""Pages that span the apps: the home page that routes each person, the researcher dashboard, and
the people pages (accounts, roles, one-time invitation links)."""

from functools import wraps
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model, login
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from annotation.selectors import campaign_list_with_counts
from core.list_workspaces import list_workspaces
from core.models import Workspace
from core.roles import AuthenticatedHttpRequest, Role, has_role, roles_of
from core.workspaces import administers, current_of, is_everywhere, places_of, workspace_for_new, workspaces_of
from curation.access import researcher_required
from curation.datasets.selectors import dataset_list_with_counts
from curation.studies.selectors import study_list_with_counts
from home.forms import AcceptInvitationForm, AccountForm, InvitationForm, MemberForm, RolesForm
from home.selectors import archived_work, invitation_list, people_list, people_workspaces
from home.services import (
    PeopleError,
    account_active_refusal,
    account_active_set,
    account_create,
    account_roles_set,
    invitation_accept,
    invitation_create,
    invitation_for_token,
    invitation_revoke,
    invitation_workspace,
)
from home.workspace_services import member_add, member_remove, member_remove_refusal, member_roles_refusal
from judging.results.selectors import run_list_with_progress

WORK_PAGES = {
    Role.RESEARCHER: "dashboard",
    Role.REVIEWER: "curation:review",
    Role.ANNOTATOR: "annotation:index",
}


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """Send a person with one role straight to their work; show a choice to those with several."""
    held = [role for role in Role if role in roles_of(request.user)]
    if len(held) == 1:
        return redirect(WORK_PAGES[held[0]])
    work = [(role.label, WORK_PAGES[role]) for role in held]
    return render(request, "home.html", {"work": work})


@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    """The researcher's overview, of the workspaces where they are a researcher. A person who
    belongs to no workspace sees it empty (and nothing else); other roles are sent away (403)."""
    if not has_role(request.user, Role.RESEARCHER) and places_of(request.user):
        raise PermissionDenied
    user = request.user
    slugs = dict(workspaces_of(user, Role.RESEARCHER.value).values_list("pk", "slug"))
    # Across several workspaces, `?workspace=` keeps every list below to one (core.list_workspaces).
    workspaces = list_workspaces(request, Role.RESEARCHER.value)
    return render(
        request,
        "dashboard.html",
        {
            "studies": workspaces.narrow(study_list_with_counts(user=user))[:20],
            "datasets": workspaces.narrow(dataset_list_with_counts(user=user))[:20],
            "runs": workspaces.narrow(run_list_with_progress(user=user))[:20],
            "campaigns": workspaces.narrow(campaign_list_with_counts(user=user))[:20],
            "no_workspace": not places_of(user) and not is_everywhere(user),
            "workspace_slugs": slugs,
            "show_workspace": current_of(user) is None and len(slugs) > 1,
            "workspaces": workspaces,
        },
    )


@researcher_required
def archived(request: HttpRequest) -> HttpResponse:
    """The archived datasets, runs, campaigns and studies of the person's workspaces, each with
    when it can be restored until and a link to its page (where Restore is)."""
    rows = archived_work(user=request.user)
    return render(request, "home/archived.html", {"rows": rows, "archive_days": settings.ARCHIVE_DAYS})


# ---------------------------------------------------------------- people and invitations


class WorkspaceSwitched(Exception):
    """A form of /people/ drawn for one workspace, sent after the person switched to another."""


def _workspace_chosen(request: HttpRequest) -> Workspace:
    """The workspace /people/ shows: the current one (the header's switcher), else the person's
    default one. A form carries the workspace it was drawn for (`workspace`); sent after the
    person switched to another, it is refused (WorkspaceSwitched); 404 for a workspace they may
    not see."""
    choices = people_workspaces(user=request.user)
    current = current_of(request.user)
    slug = request.POST.get("workspace", "") if request.method == "POST" else ""
    if slug and current is not None and slug != current.slug:
        raise WorkspaceSwitched(slug)
    if slug:
        chosen = next((workspace for workspace in choices if workspace.slug == slug), None)
    elif current is not None:
        chosen = current if current in choices else None
    else:
        chosen = workspace_for_new(request.user, Role.RESEARCHER.value) or (choices[0] if choices else None)
    if chosen is None:
        raise Http404("No such workspace.")
    return chosen


def people_view(view):
    """A view of /people/: a form drawn for another workspace than the current one is refused
    (400, saying which), nothing changed."""

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        try:
            return view(request, *args, **kwargs)
        except WorkspaceSwitched as switched:
            context = {"drawn": str(switched), "current": current_of(request.user)}
            return render(request, "core/workspace_changed.html", context, status=400)

    return wrapped


def _may_change(actor, person) -> bool:
    """Whether the people page offers changes of this account: never of one with more rights."""
    if person.is_superuser:
        return actor.is_superuser
    return not person.is_staff or actor.is_staff or actor.is_superuser


def _people_page(
    request: AuthenticatedHttpRequest,
    *,
    account_form=None,
    invitation_form=None,
    member_form=None,
    status=200,
    created_link="",
):
    workspace = _workspace_chosen(request)
    admin = administers(request.user, workspace.pk)
    users = people_list(workspace=workspace)
    people = []
    for person in users:
        editable = admin and _may_change(request.user, person)
        if editable:
            editable = not member_roles_refusal(workspace=workspace, user=person, actor=request.user)
        people.append(
            {
                "user": person,
                "form": RolesForm(
                    initial={"roles": person.role_names, "admin": person.is_workspace_admin}, prefix=f"p{person.pk}"
                ),
                # What this page offers: only what the viewer may do (the services check again).
                "editable": editable,
                "removable": editable
                and not member_remove_refusal(workspace=workspace, user=person, actor=request.user),
                "may_activate": editable and not account_active_refusal(user=person, actor=request.user),
            }
        )
    return render(
        request,
        "home/people.html",
        {
            "people": people,
            "workspace": workspace,
            "workspaces": people_workspaces(user=request.user),
            "is_admin": admin,
            "account_form": account_form or AccountForm(prefix="account"),
            "member_form": member_form or MemberForm(prefix="member"),
            "invitation_form": invitation_form or InvitationForm(prefix="invite"),
            "invitations": invitation_list(workspace=workspace),
            "created_link": created_link,
            "now": timezone.now(),
        },
        status=status,
    )


def _back_to_people(workspace: Workspace) -> HttpResponse:
    return redirect("people")


def _confirm(request: HttpRequest, *, question: str, action: str, button: str, fields: dict) -> HttpResponse:
    """The step before an action that cannot be taken back: the same form again, with `confirm`."""
    return render(
        request,
        "home/confirm.html",
        {"question": question, "action": action, "button": button, "fields": fields, "back": reverse("people")},
    )


@researcher_required
@people_view
def people(request: AuthenticatedHttpRequest) -> HttpResponse:
    """A workspace's members and their roles there, a form for a new account and one for an
    invitation link (both into the workspace); only its admins change anything."""
    return _people_page(request)


@researcher_required
@require_POST
@people_view
def account_new(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = AccountForm(request.POST, prefix="account")
    workspace = _workspace_chosen(request)
    if form.is_valid():
        try:
            user = account_create(
                username=form.cleaned_data["username"],
                password=form.cleaned_data["password1"],
                roles=form.cleaned_data["roles"],
                actor=request.user,
                workspace=workspace,
            )
        except PeopleError as error:
            form.add_error("username", str(error))
        else:
            messages.success(request, _("Account %(name)s created.") % {"name": user.username})
            return _back_to_people(workspace)
    return _people_page(request, account_form=form, status=400)


@researcher_required
@require_POST
@people_view
def account_roles(request: AuthenticatedHttpRequest, user_id: int) -> HttpResponse:
    workspace = _workspace_chosen(request)
    # Only the workspace's members are found here: an account elsewhere is "not found".
    person = get_object_or_404(get_user_model(), pk=user_id, memberships__workspace=workspace)
    form = RolesForm(request.POST, prefix=f"p{person.pk}")
    if not form.is_valid():
        messages.error(request, _("Choose roles from the list."))
        return _back_to_people(workspace)
    admin = form.cleaned_data["admin"] if request.POST.get(f"p{person.pk}-admin_shown") else None
    try:
        roles = account_roles_set(
            user=person, roles=form.cleaned_data["roles"], actor=request.user, workspace=workspace, admin=admin
        )
    except PeopleError as error:
        messages.error(request, str(error))
    else:
        labels = ", ".join(str(Role(role).label) for role in roles) or _("none")
        messages.success(request, _("Roles of %(name)s: %(roles)s.") % {"name": person.username, "roles": labels})
    return _back_to_people(workspace)


@researcher_required
@require_POST
@people_view
def account_active(request: AuthenticatedHttpRequest, user_id: int) -> HttpResponse:
    workspace = _workspace_chosen(request)
    person = get_object_or_404(get_user_model(), pk=user_id, memberships__workspace=workspace)
    active = request.POST.get("active") == "1"
    if not active and request.POST.get("confirm") != "1":
        return _confirm(
            request,
            question=_("Deactivate %(name)s? They can no longer log in (in any workspace); their work stays.")
            % {"name": person.username},
            action=reverse("people-active", args=[person.pk]),
            button=_("Deactivate %(name)s") % {"name": person.username},
            fields={"workspace": workspace.slug, "active": "0"},
        )
    try:
        account_active_set(user=person, active=active, actor=request.user)
    except PeopleError as error:
        messages.error(request, str(error))
    else:
        message = _("%(name)s can log in again.") if active else _("%(name)s is deactivated and can no longer log in.")
        messages.success(request, message % {"name": person.username})
    return _back_to_people(workspace)


@researcher_required
@require_POST
@people_view
def member_new(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Add an existing account (by user name) to the workspace with roles (its admins)."""
    form = MemberForm(request.POST, prefix="member")
    workspace = _workspace_chosen(request)
    if form.is_valid():
        try:
            membership = member_add(
                workspace=workspace,
                username=form.cleaned_data["username"],
                roles=form.cleaned_data["roles"],
                admin=form.cleaned_data["admin"],
                actor=request.user,
            )
        except PeopleError as error:
            form.add_error("username", str(error))
        else:
            messages.success(
                request,
                _("%(name)s is now a member of %(workspace)s.")
                % {"name": membership.user.username, "workspace": workspace.name},
            )
            return _back_to_people(workspace)
    return _people_page(request, member_form=form, status=400)


@researcher_required
@require_POST
@people_view
def member_leave(request: AuthenticatedHttpRequest, user_id: int) -> HttpResponse:
    """Take a member out of the workspace, after a confirmation step (its admins)."""
    workspace = _workspace_chosen(request)
    person = get_object_or_404(get_user_model(), pk=user_id, memberships__workspace=workspace)
    if request.POST.get("confirm") != "1":
        refusal = member_remove_refusal(workspace=workspace, user=person, actor=request.user)
        if refusal:
            messages.error(request, refusal)
            return _back_to_people(workspace)
        return _confirm(
            request,
            question=_("Remove %(name)s from %(workspace)s? They lose its roles; their account and their work stay.")
            % {"name": person.username, "workspace": workspace.name},
            action=reverse("people-remove", args=[person.pk]),
            button=_("Remove %(name)s") % {"name": person.username},
            fields={"workspace": workspace.slug},
        )
    try:
        member_remove(workspace=workspace, user=person, actor=request.user)
    except PeopleError as error:
        messages.error(request, str(error))
    else:
        messages.success(
            request,
            _("%(name)s is no longer a member of %(workspace)s.")
            % {"name": person.username, "workspace": workspace.name},
        )
    return _back_to_people(workspace)


@researcher_required
@require_POST
@people_view
def invitation_new(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Make a one-time link and show it once: only its hash is kept."""
    form = InvitationForm(request.POST, prefix="invite")
    workspace = _workspace_chosen(request)
    if form.is_valid():
        try:
            _invitation, token = invitation_create(
                roles=form.cleaned_data["roles"],
                note=form.cleaned_data["note"],
                days=form.cleaned_data["days"],
                actor=request.user,
                workspace=workspace,
            )
        except PeopleError as error:
            form.add_error(None, str(error))
        else:
            link = invitation_link(request, token)
            return _people_page(request, created_link=link)
    return _people_page(request, invitation_form=form, status=400)


@researcher_required
@require_POST
@people_view
def invitation_withdraw(request: AuthenticatedHttpRequest, invitation_id: int) -> HttpResponse:
    workspace = _workspace_chosen(request)
    invitation = get_object_or_404(invitation_list(workspace=workspace, limit=None), pk=invitation_id)
    try:
        invitation_revoke(invitation=invitation, actor=request.user)
    except PeopleError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, _("The invitation is withdrawn; its link no longer works."))
    return _back_to_people(workspace)


def invitation_link(request: HttpRequest, token: str) -> str:
    """The one-time link: the token in the query string, which the recommended access log (README,
    "Deployment") never records; the page's form posts back to the same address."""
    return request.build_absolute_uri(f"{reverse('invitation-accept')}?{urlencode({'token': token})}")


def invitation_old_link(request: HttpRequest, token: str) -> HttpResponse:
    """A link from before the token moved to the query string: the same invitation, at its new
    address. The old path is masked in the access log by config.access_log."""
    return HttpResponseRedirect(f"{reverse('invitation-accept')}?{urlencode({'token': token})}")


@never_cache
def invitation_accept_page(request: HttpRequest) -> HttpResponse:
    """The invitee's page: choose a username and a password, then start with the invited roles."""
    token = request.GET.get("token", "")
    invitation = invitation_for_token(token) if token else None
    state = invitation.state() if invitation else "unknown"
    if invitation is None or state != "open":
        return render(request, "home/invitation_closed.html", {"state": state}, status=410 if invitation else 404)
    form = AcceptInvitationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            user = invitation_accept(
                token=token, username=form.cleaned_data["username"], password=form.cleaned_data["password1"]
            )
        except PeopleError as error:
            form.add_error(None, str(error))
        else:
            login(request, user, backend="core.auth.RoleLoadingBackend")
            messages.success(request, _("Welcome, %(name)s. Your account is ready.") % {"name": user.username})
            return redirect("home")
    roles = [Role(role).label for role in invitation.roles]
    return render(
        request,
        "home/invitation_accept.html",
        {
            "form": form,
            "roles": roles,
            "expires_at": invitation.expires_at,
            "workspace": invitation_workspace(invitation=invitation),
        },
        status=400 if form.errors else 200,
    )
