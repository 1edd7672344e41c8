"""API entry points shared by the apps: who am I, and the route table."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView, exception_handler

from core.errors import UserbenchError
from core.roles import Role, roles_of
from core.workspaces import administers, current_of, places_of, workspace_choices


class ApiRootApi(APIView):
    """What the API offers; a starting point for the browsable API and outside scripts."""

    @extend_schema(responses={200: dict})
    def get(self, request):
        def link(name):
            return reverse(name, request=request)

        return Response(
            {
                "me": link("api-me"),
                "tokens": link("api-tokens"),
                "workspaces": link("api-workspaces"),
                "studies": link("api-studies"),
                "datasets": link("api-datasets"),
                "runs": link("api-runs"),
                "endpoints": link("api-endpoints"),
                "campaigns": link("api-campaigns"),
                "schema": link("api-schema"),
                "docs": link("api-docs"),
            }
        )


class PlaceSerializer(serializers.Serializer):
    class Meta:
        ref_name = "MyWorkspace"

    slug = serializers.SlugField()
    name = serializers.CharField()
    roles = serializers.ListField(child=serializers.ChoiceField(choices=Role.choices))
    admin = serializers.BooleanField()


class MeApi(APIView):
    """Who the token or session is: the roles held anywhere, each workspace with the roles held
    and the admin flag there, and the workspace this request works in (its X-Userbench-Workspace
    header; null: all of theirs)."""

    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "Me"

        username = serializers.CharField()
        roles = serializers.ListField(child=serializers.ChoiceField(choices=Role.choices))
        superuser = serializers.BooleanField()
        workspace = serializers.SlugField(allow_null=True)
        workspaces = serializers.ListField(child=PlaceSerializer())

    @extend_schema(responses=OutputSerializer)
    def get(self, request):
        user = request.user
        held = sorted(roles_of(user))
        places = places_of(user)
        workspaces = [
            {
                "slug": workspace.slug,
                "name": workspace.name,
                "roles": sorted(places[workspace.pk].roles) if workspace.pk in places else [],
                "admin": administers(user, workspace.pk),
            }
            for workspace in workspace_choices(user)
        ]
        current = current_of(user)
        me = {
            "username": user.get_username(),
            "roles": held,
            "superuser": bool(user.is_superuser),
            "workspace": current.slug if current else None,
            "workspaces": workspaces,
        }
        return Response(self.OutputSerializer(me).data)


def api_exception_handler(exc, context):
    """DRF's own handler, plus UserbenchError as a 400 with the error's message."""
    if isinstance(exc, UserbenchError):
        # An error may name what to do instead (a taken slug's free proposal: `proposed_slug`).
        extra = getattr(exc, "api_fields", {})
        return Response({"detail": exc.message, **extra}, status=status.HTTP_400_BAD_REQUEST)
    return exception_handler(exc, context)
