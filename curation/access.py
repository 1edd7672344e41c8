"""Who may see and change studies, submissions and datasets. Views and API both use these."""

from core.roles import Role, has_role, role_permission, role_required
from core.workspaces import holds

researcher_required = role_required(Role.RESEARCHER)
reviewer_required = role_required(Role.REVIEWER)
ResearcherPermission = role_permission(Role.RESEARCHER)
ReviewerPermission = role_permission(Role.REVIEWER)


def can_manage_studies(user, *, workspace_id: int | None = None) -> bool:
    """A researcher (of that workspace, when one is named: a role counts where the object is)."""
    return has_role(user, Role.RESEARCHER) if workspace_id is None else holds(user, Role.RESEARCHER.value, workspace_id)


def can_review(user, *, workspace_id: int | None = None) -> bool:
    """A reviewer (of that workspace, when one is named)."""
    return has_role(user, Role.REVIEWER) if workspace_id is None else holds(user, Role.REVIEWER.value, workspace_id)


# Item and case histories: reviewers who work the queues and researchers who freeze versions.
history_viewer_required = role_required(Role.REVIEWER, Role.RESEARCHER)
