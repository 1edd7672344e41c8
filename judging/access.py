"""Who may set up and read judge runs: researchers. Views and API both use these."""

from core.roles import Role, has_role, role_permission, role_required

researcher_required = role_required(Role.RESEARCHER)
ResearcherPermission = role_permission(Role.RESEARCHER)


def can_manage_runs(user) -> bool:
    return has_role(user, Role.RESEARCHER)
