"""Who may set up and read judge runs: researchers. Views and API both use these."""

from django.contrib.auth.models import User
from django.http import HttpRequest

from core.roles import Role, has_role, role_permission, role_required

researcher_required = role_required(Role.RESEARCHER)
ResearcherPermission = role_permission(Role.RESEARCHER)


class ResearcherRequest(HttpRequest):
    """A request `researcher_required` let through: its user is signed in, never anonymous."""

    user: User


def can_manage_runs(user) -> bool:
    return has_role(user, Role.RESEARCHER)
