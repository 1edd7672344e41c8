"""The edges of archive and restore that datasets, runs, campaigns and studies share: the API's
`POST .../archive/` and `.../restore/`, and the page's buttons. Each app says how one of its
objects is found (scoped to the researcher's workspaces: another workspace's is a bare 404) and
what may stop the change (core/archiving.py holds the change itself)."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.http import HttpResponseRedirect
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from core.archiving import Archivable, ArchivedError, archive_key, archive_set
from core.roles import Role, role_permission


class ArchiveStateSerializer(serializers.Serializer):
    class Meta:
        ref_name = "ArchiveState"

    kind = serializers.CharField()
    key = serializers.CharField()
    archived = serializers.BooleanField()
    archived_at = serializers.DateTimeField(allow_null=True)
    restorable_until = serializers.DateTimeField(allow_null=True)


def archive_state(obj: Archivable, *, kind: str) -> dict:
    return {
        "kind": kind,
        "key": archive_key(obj),
        "archived": obj.is_archived,
        "archived_at": obj.archived_at,
        "restorable_until": obj.restorable_until,
    }


class ArchiveApi(APIView):
    """Archive (POST .../archive/) or restore (POST .../restore/) one object; the URL's
    `as_view(archived=...)` says which. A 400 says why it cannot be done."""

    permission_classes = [role_permission(Role.RESEARCHER)]
    kind = ""
    archived = True

    def find(self, request, key: str) -> Archivable:
        """The object named in the URL, scoped to the researcher's workspaces; Http404 (which says
        nothing more than "Not found.") otherwise."""
        raise NotImplementedError

    def check(self, obj, archived: bool) -> None:
        """Raise ArchivedError when this object cannot be archived (or restored) now."""
        archive_allowed(obj, archived)

    @extend_schema(request=None, responses={200: ArchiveStateSerializer, 400: None, 404: None})
    def post(self, request, key: str):
        obj = self.find(request, key)
        self.check(obj, self.archived)
        archive_set(obj=obj, archived=self.archived, actor=request.user, kind=self.kind)
        return Response(ArchiveStateSerializer(archive_state(obj, kind=self.kind)).data)


def archive_allowed(obj: Archivable, archived: bool) -> None:
    """For what nothing stops from being archived or restored (datasets, studies)."""


def archive_page_action[M: Archivable](
    request, *, obj: M, archived: bool, kind: str, check: Callable[[M, bool], None], back: str
) -> HttpResponseRedirect:
    """The page's Archive or Restore button (a POST, confirmed on the page): the change, a message
    saying what happened or why not, and back to `back`."""
    try:
        check(obj, archived)
        archive_set(obj=obj, archived=archived, actor=request.user, kind=kind)
    except ArchivedError as error:
        messages.error(request, error.message)
    else:
        done = _("Archived %(name)s.") if archived else _("Restored %(name)s.")
        messages.success(request, done % {"name": obj})
    return HttpResponseRedirect(back)
