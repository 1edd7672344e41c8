"""The campaign page's settings: its title and instructions edited, the campaign closed and
reopened, annotators added and removed. Each change is shown first, with what it was and what it
becomes, and made only once the researcher confirms it (annotation/campaign_edits.py makes it)."""

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from annotation.access import researcher_campaign, researcher_required
from annotation.campaign_edits import TEXT_FIELDS, campaign_changes, campaign_editable_check, campaign_update
from annotation.errors import AnnotationError
from annotation.forms import CampaignEditForm
from annotation.models import Campaign
from annotation.selectors import annotator_choices
from core.archiving import ArchivedError
from core.roles import AuthenticatedHttpRequest

ACTIONS = ("edit", "close", "reopen", "add", "remove")
# What the confirmation page calls each field it shows changing.
FIELD_LABELS = {
    **{name: CampaignEditForm.base_fields[name].label for name in TEXT_FIELDS},
    "is_open": gettext_lazy("State"),
    "annotators": gettext_lazy("Annotators"),
}


def _shown(name: str, value) -> str:
    """A field's value as the confirmation page shows it."""
    if name == "is_open":
        return _("open to annotators") if value else _("closed to annotators")
    if isinstance(value, list):
        return ", ".join(value) or "—"
    return value or "—"


def campaign_settings_context(*, campaign: Campaign) -> dict:
    """What the campaign page's settings block shows: the edit form filled with the campaign's
    text, its annotators, and whom the researcher may add (the workspace's other annotators)."""
    names = sorted(campaign.annotators.values_list("username", flat=True))
    addable = annotator_choices(workspace_id=campaign.workspace_id).exclude(username__in=names)
    return {
        "edit_form": CampaignEditForm(initial={name: getattr(campaign, name) for name in TEXT_FIELDS}),
        "settings_annotators": names,
        "settings_addable": list(addable.values_list("username", flat=True)),
    }


def _asked(action: str, post, campaign: Campaign) -> dict:
    """The change the posted form asks for, in campaign_update's terms."""
    if action in ("close", "reopen"):
        return {"is_open": action == "reopen"}
    if action in ("add", "remove"):
        name = post.get("annotator", "").strip()
        if not name:
            raise AnnotationError(_("Type an annotator's user name."))
        names = list(campaign.annotators.values_list("username", flat=True))
        if action == "remove" and name not in names:
            raise AnnotationError(_("%(name)s is not an annotator of this campaign.") % {"name": name})
        return {"annotators": [*names, name] if action == "add" else [other for other in names if other != name]}
    return {name: post.get(name, "") for name in TEXT_FIELDS}


def _question(action: str, campaign: Campaign, post) -> str:
    name = post.get("annotator", "").strip()
    title = campaign.title_shown
    return {
        "edit": _("Save these changes to “%(title)s”?"),
        "close": _(
            "Close “%(title)s”? Annotators get no new items; an item someone holds now may still be voted on, "
            "and the figures keep refreshing. You can reopen it."
        ),
        "reopen": _("Reopen “%(title)s”? Its annotators get new items again."),
        "add": _("Add %(name)s as an annotator of “%(title)s”? They can start at once."),
        "remove": _(
            "Remove %(name)s from “%(title)s”? Items they hold now go back to the pool for the others; "
            "their votes stay. You can add them again."
        ),
    }[action] % {"title": title, "name": name}


@require_POST
@researcher_required
def campaign_settings(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """One change of the campaign's settings: first a page that shows it and asks, then, with
    `confirm`, the change itself; back to the campaign page's settings."""
    campaign = researcher_campaign(slug, request.user)
    back = reverse("annotation:results", args=[campaign.slug]) + "#settings"
    action = request.POST.get("action", "")
    if action not in ACTIONS:
        messages.error(request, _("Choose what to change."))
        return redirect(back)
    try:
        campaign_editable_check(campaign)
    except ArchivedError as error:
        messages.error(request, error.message)
        return redirect(back)
    form = CampaignEditForm(request.POST) if action == "edit" else None
    if form is not None and not form.is_valid():
        context = {"campaign": campaign, "form": form, "action": action, "back": back}
        return render(request, "annotation/campaign_change.html", context, status=400)
    try:
        asked = _asked(action, request.POST, campaign)
        if request.POST.get("confirm") == "1":
            changed = campaign_update(campaign=campaign, actor=request.user, changes=asked)
        else:
            changes = campaign_changes(campaign=campaign, changes=asked)
    except (AnnotationError, ArchivedError) as error:  # archived meanwhile: campaign_update checks it again
        if form is not None and not isinstance(error, ArchivedError):
            form.add_error(None, str(error))
            context = {"campaign": campaign, "form": form, "action": action, "back": back}
            return render(request, "annotation/campaign_change.html", context, status=400)
        messages.error(request, str(error))
        return redirect(back)
    if request.POST.get("confirm") == "1":
        messages.success(request, _("Saved.") if changed else _("Nothing changed."))
        return redirect(back)
    if not changes:
        messages.info(request, _("Nothing changed."))
        return redirect(back)
    fields = {name: request.POST.get(name, "") for name in (*TEXT_FIELDS, "annotator") if name in request.POST}
    context = {
        "campaign": campaign,
        "action": action,
        "question": _question(action, campaign, request.POST),
        "changes": [
            (FIELD_LABELS[name], _shown(name, before), _shown(name, after)) for name, (before, after) in changes.items()
        ],
        "fields": fields,
        "back": back,
    }
    return render(request, "annotation/campaign_change.html", context)
