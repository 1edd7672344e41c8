"""Who may see and change studies, submissions and datasets. Views and API both use these."""

from core.roles import Role, has_role, role_permission, role_required

researcher_required = role_required(Role.RESEARCHER)
reviewer_required = role_required(Role.REVIEWER)
ResearcherPermission = role_permission(Role.RESEARCHER)
ReviewerPermission = role_permission(Role.REVIEWER)


def can_manage_studies(user) -> bool:
    return has_role(user, Role.RESEARCHER)


def can_review(user) -> bool:
    return has_role(user, Role.REVIEWER)


# Item and case histories: reviewers who work the queues and researchers who freeze versions.
history_viewer_required = role_required(Role.REVIEWER, Role.RESEARCHER)
