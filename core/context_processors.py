from django.utils.functional import SimpleLazyObject

from core.models import Workspace
from core.roles import Role, roles_of
from core.workspaces import current_of, is_everywhere, places_of, workspace_choices


def roles(request):
    """Expose the signed-in person's roles to the navigation."""
    held = roles_of(request.user)
    return {
        "is_researcher": Role.RESEARCHER in held,
        "is_reviewer": Role.REVIEWER in held,
        "is_annotator": Role.ANNOTATOR in held,
    }


def workspaces(request):
    """The header's workspace switcher: whether the person has several workspaces (from the
    memberships they arrived with: no query on the pages of a one-team person), their workspaces
    (read only when a page shows them) and the current one (None: all of theirs)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"workspace_current": None, "workspace_choices": (), "workspace_several": False}
    return {
        "workspace_current": current_of(user),
        "workspace_choices": SimpleLazyObject(lambda: workspace_choices(user)),
        "workspace_several": SimpleLazyObject(lambda: _several(user)),
    }


def _several(user) -> bool:
    if is_everywhere(user):
        return Workspace.objects.count() > 1
    return len(places_of(user)) > 1


def kept_form(request):
    """The fields of a form sent after the session ended, to be put back in the page's form
    (core/kept_forms.py); None on every other page."""
    return {"kept_form": getattr(request, "kept_form", None)}
