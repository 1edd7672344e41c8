"""Who may annotate and who may read campaign statistics. Views and API both use these."""

from config.roles import Role, has_role, role_permission, role_required

annotator_required = role_required(Role.ANNOTATOR)
researcher_required = role_required(Role.RESEARCHER)
AnnotatorPermission = role_permission(Role.ANNOTATOR)
ResearcherPermission = role_permission(Role.RESEARCHER)


def can_annotate_in(user, campaign) -> bool:
    """Annotators work only in the open campaigns they were added to."""
    return (
        has_role(user, Role.ANNOTATOR)
        and campaign.is_open
        and campaign.annotators.filter(pk=user.pk).exists()
    )
