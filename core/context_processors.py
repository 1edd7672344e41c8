from core.roles import Role, roles_of


def roles(request):
    """Expose the signed-in person's roles to the navigation."""
    held = roles_of(request.user)
    return {
        "is_researcher": Role.RESEARCHER in held,
        "is_reviewer": Role.REVIEWER in held,
        "is_annotator": Role.ANNOTATOR in held,
    }


def kept_form(request):
    """The fields of a form sent after the session ended, to be put back in the page's form
    (core/kept_forms.py); None on every other page."""
    return {"kept_form": getattr(request, "kept_form", None)}
