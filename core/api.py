"""API entry points shared by the apps: who am I, and the route table."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView, exception_handler

from core.errors import UserbenchError
from core.roles import Role, roles_of


class ApiRootApi(APIView):
    """What the API offers; a starting point for the browsable API and outside scripts."""

    @extend_schema(responses={200: dict})
    def get(self, request):
        def link(name):
            return reverse(name, request=request)

        return Response(
            {
                "me": link("api-me"),
                "studies": link("api-studies"),
                "datasets": link("api-datasets"),
                "runs": link("api-runs"),
                "endpoints": link("api-endpoints"),
                "campaigns": link("api-campaigns"),
                "schema": link("api-schema"),
                "docs": link("api-docs"),
            }
        )


class MeApi(APIView):
    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "Me"

        username = serializers.CharField()
        roles = serializers.ListField(child=serializers.ChoiceField(choices=Role.choices))

    @extend_schema(responses=OutputSerializer)
    def get(self, request):
        held = sorted(roles_of(request.user))
        return Response(self.OutputSerializer({"username": request.user.get_username(), "roles": held}).data)


def api_exception_handler(exc, context):
    """DRF's own handler, plus UserbenchError as a 400 with the error's message."""
    if isinstance(exc, UserbenchError):
        return Response({"detail": exc.message}, status=status.HTTP_400_BAD_REQUEST)
    return exception_handler(exc, context)
