"""Pages that span the apps: the home page that routes each person, the researcher dashboard, and
the people pages (accounts, roles, one-time invitation links)."""

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth import get_user_model, login
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from annotation.selectors import campaign_list_with_counts
from core.roles import AuthenticatedHttpRequest, Role, roles_of
from curation.access import researcher_required
from curation.datasets.selectors import dataset_list_with_counts
from curation.studies.selectors import study_list_with_counts
from home.forms import AcceptInvitationForm, AccountForm, InvitationForm, RolesForm
from home.models import Invitation
from home.selectors import invitation_list, people_list
from home.services import (
    PeopleError,
    account_active_set,
    account_create,
    account_roles_set,
    invitation_accept,
    invitation_create,
    invitation_for_token,
    invitation_revoke,
)
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


@researcher_required
def dashboard(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "dashboard.html",
        {
            "studies": study_list_with_counts()[:20],
            "datasets": dataset_list_with_counts()[:20],
            "runs": run_list_with_progress()[:20],
            "campaigns": campaign_list_with_counts()[:20],
        },
    )


# ---------------------------------------------------------------- people and invitations


def _people_page(request: HttpRequest, *, account_form=None, invitation_form=None, status=200, created_link=""):
    users = people_list()
    people = [
        {
            "user": person,
            "form": RolesForm(initial={"roles": person.role_names}, prefix=f"p{person.pk}"),
            "editable": not person.is_superuser or request.user.is_superuser,
        }
        for person in users
    ]
    return render(
        request,
        "home/people.html",
        {
            "people": people,
            "account_form": account_form or AccountForm(prefix="account"),
            "invitation_form": invitation_form or InvitationForm(prefix="invite"),
            "invitations": invitation_list(),
            "created_link": created_link,
            "now": timezone.now(),
        },
        status=status,
    )


@researcher_required
def people(request: HttpRequest) -> HttpResponse:
    """Accounts and their roles, a form for a new account and one for an invitation link."""
    return _people_page(request)


@researcher_required
@require_POST
def account_new(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = AccountForm(request.POST, prefix="account")
    if form.is_valid():
        try:
            user = account_create(
                username=form.cleaned_data["username"],
                password=form.cleaned_data["password1"],
                roles=form.cleaned_data["roles"],
                actor=request.user,
            )
        except PeopleError as error:
            form.add_error("username", str(error))
        else:
            messages.success(request, _("Account %(name)s created.") % {"name": user.username})
            return redirect("people")
    return _people_page(request, account_form=form, status=400)


@researcher_required
@require_POST
def account_roles(request: AuthenticatedHttpRequest, user_id: int) -> HttpResponse:
    person = get_object_or_404(get_user_model(), pk=user_id)
    form = RolesForm(request.POST, prefix=f"p{person.pk}")
    if not form.is_valid():
        messages.error(request, _("Choose roles from the list."))
        return redirect("people")
    try:
        roles = account_roles_set(user=person, roles=form.cleaned_data["roles"], actor=request.user)
    except PeopleError as error:
        messages.error(request, str(error))
    else:
        labels = ", ".join(str(Role(role).label) for role in roles) or _("none")
        messages.success(request, _("Roles of %(name)s: %(roles)s.") % {"name": person.username, "roles": labels})
    return redirect("people")


@researcher_required
@require_POST
def account_active(request: AuthenticatedHttpRequest, user_id: int) -> HttpResponse:
    person = get_object_or_404(get_user_model(), pk=user_id)
    active = request.POST.get("active") == "1"
    try:
        account_active_set(user=person, active=active, actor=request.user)
    except PeopleError as error:
        messages.error(request, str(error))
    else:
        message = _("%(name)s can log in again.") if active else _("%(name)s is deactivated and can no longer log in.")
        messages.success(request, message % {"name": person.username})
    return redirect("people")


@researcher_required
@require_POST
def invitation_new(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Make a one-time link and show it once: only its hash is kept."""
    form = InvitationForm(request.POST, prefix="invite")
    if form.is_valid():
        try:
            _invitation, token = invitation_create(
                roles=form.cleaned_data["roles"],
                note=form.cleaned_data["note"],
                days=form.cleaned_data["days"],
                actor=request.user,
            )
        except PeopleError as error:
            form.add_error(None, str(error))
        else:
            link = invitation_link(request, token)
            return _people_page(request, created_link=link)
    return _people_page(request, invitation_form=form, status=400)


@researcher_required
@require_POST
def invitation_withdraw(request: AuthenticatedHttpRequest, invitation_id: int) -> HttpResponse:
    invitation = get_object_or_404(Invitation, pk=invitation_id)
    try:
        invitation_revoke(invitation=invitation, actor=request.user)
    except PeopleError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, _("The invitation is withdrawn; its link no longer works."))
    return redirect("people")


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
        {"form": form, "roles": roles, "expires_at": invitation.expires_at},
        status=400 if form.errors else 200,
    )
