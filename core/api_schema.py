"""What the API schema says of the project's own authentication classes (drf-spectacular
extensions register themselves when their class is defined).

Kept apart from core/auth.py, which every process imports as it starts: drf-spectacular's
extension machinery brings DRF's serializer fields with it, about a fifth of a second that only
the schema needs. The URL configuration imports this module, so the schema always sees it."""

from drf_spectacular.authentication import SessionScheme


class WorkspaceSessionScheme(SessionScheme):
    """The API schema describes the session sign-in as DRF's own (a cookie)."""

    target_class = "core.auth.WorkspaceSessionAuthentication"
