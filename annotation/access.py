"""Who may annotate and who may read campaign statistics. Views and API both use these."""

from django.http import Http404

from annotation.errors import CampaignNotFound
from annotation.selectors import annotator_campaign_get, campaign_by_slug
from core.roles import Role, has_role, role_permission, role_required

annotator_required = role_required(Role.ANNOTATOR)
researcher_required = role_required(Role.RESEARCHER)
AnnotatorPermission = role_permission(Role.ANNOTATOR)
ResearcherPermission = role_permission(Role.RESEARCHER)


def annotator_campaign(user, slug: str):
    """The campaign `slug` if this annotator works in it; 404 otherwise, so that campaigns a
    person is not part of are not even confirmed to exist. A closed campaign is found (its page
    says it is closed; a lease held when it closed may still be voted on).

    Annotators work only in the campaigns they were added to. Every annotation
    request starts here, so the campaign and the membership are read in one query."""
    campaign = annotator_campaign_get(slug=slug, annotator=user) if has_role(user, Role.ANNOTATOR) else None
    if campaign is None:
        raise Http404("No such campaign for you.")
    return campaign


def researcher_campaign(slug: str, user):
    """The campaign `slug` for a researcher of its workspace (the role is checked by the view's
    decorator); 404 for another workspace's, as for none."""
    try:
        return campaign_by_slug(slug=slug, user=user)
    except CampaignNotFound:
        raise Http404("No such campaign.") from None
