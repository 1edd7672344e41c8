"""The workspaces API: a person's workspaces, a superuser making one, and a workspace's members
managed by its admins (the rules and the audit are home.workspace_services's)."""

from django.contrib.auth.models import User
from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from core.models import Membership, Workspace
from core.roles import Role
from core.workspaces import administers
from home.selectors import people_workspaces, workspace_members, workspace_rows
from home.services import PeopleRefused
from home.workspace_services import (
    member_add,
    member_remove,
    member_roles_change,
    workspace_create,
)

ROLE_CHOICES = Role.choices


def _refusals_as_403(call, **kwargs):
    """A service call whose refusal for want of rights is a 403 (other errors stay 400)."""
    try:
        return call(**kwargs)
    except PeopleRefused as error:
        raise PermissionDenied(error.message) from None


class WorkspaceOutput(serializers.Serializer):
    class Meta:
        ref_name = "Workspace"

    slug = serializers.SlugField()
    name = serializers.CharField()
    roles = serializers.ListField(child=serializers.ChoiceField(choices=ROLE_CHOICES))
    admin = serializers.BooleanField()


def _workspace_out(row: dict) -> dict:
    return {"slug": row["workspace"].slug, "name": row["workspace"].name, "roles": row["roles"], "admin": row["admin"]}


class WorkspaceListApi(APIView):
    """`GET`: the person's workspaces with their roles and whether they administer each (every
    workspace for a superuser). `POST {slug, name, admin?}`: a new workspace, for superusers; `admin`
    names an existing account as its first admin."""

    permission_classes = [IsAuthenticated]

    class InputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "WorkspaceInput"

        slug = serializers.CharField(max_length=50)
        name = serializers.CharField(max_length=100)
        admin = serializers.CharField(max_length=150, required=False, default="", help_text="A user name.")

    @extend_schema(responses=WorkspaceOutput(many=True))
    def get(self, request):
        return Response([_workspace_out(row) for row in workspace_rows(user=request.user)])

    @extend_schema(request=InputSerializer, responses={201: WorkspaceOutput})
    def post(self, request):
        if not request.user.is_superuser:
            raise PermissionDenied("Only a superuser makes workspaces.")
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        workspace = workspace_create(
            slug=data.validated_data["slug"],
            name=data.validated_data["name"],
            first_admin=data.validated_data["admin"],
            actor=request.user,
        )
        row = next(row for row in workspace_rows(user=request.user) if row["workspace"].pk == workspace.pk)
        return Response(_workspace_out(row), status=status.HTTP_201_CREATED)


class MemberOutput(serializers.Serializer):
    class Meta:
        ref_name = "WorkspaceMember"

    username = serializers.CharField(source="user.username")
    roles = serializers.ListField(child=serializers.ChoiceField(choices=ROLE_CHOICES), source="role_names")
    admin = serializers.BooleanField()
    active = serializers.BooleanField(source="user.is_active")


def _visible(request, slug: str) -> Workspace:
    """A workspace whose members the person may see (a researcher or an admin there), else 404."""
    found = next((workspace for workspace in people_workspaces(user=request.user) if workspace.slug == slug), None)
    if found is None:
        raise Http404("No such workspace.")
    return found


def _administered(request, slug: str) -> Workspace:
    workspace = _visible(request, slug)
    if not administers(request.user, workspace.pk):
        raise PermissionDenied(f"Only an admin of workspace {slug} changes its members.")
    return workspace


def _membership(workspace: Workspace, username: str) -> Membership:
    found = Membership.objects.filter(workspace=workspace, user__username__iexact=username).select_related("user")
    membership = found.first()
    if membership is None:
        raise Http404("No such member.")
    return membership


class MemberListApi(APIView):
    """`GET`: a workspace's members (its researchers and admins see them). `POST {username, roles,
    admin}`: an existing account joins it (its admins)."""

    permission_classes = [IsAuthenticated]

    class InputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "WorkspaceMemberInput"

        username = serializers.CharField(max_length=150)
        roles = serializers.ListField(child=serializers.ChoiceField(choices=ROLE_CHOICES), default=list)
        admin = serializers.BooleanField(default=False)

    @extend_schema(responses=MemberOutput(many=True))
    def get(self, request, slug):
        workspace = _visible(request, slug)
        return Response(MemberOutput(workspace_members(workspace=workspace), many=True).data)

    @extend_schema(request=InputSerializer, responses={201: MemberOutput})
    def post(self, request, slug):
        workspace = _administered(request, slug)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        membership = _refusals_as_403(
            member_add,
            workspace=workspace,
            username=data.validated_data["username"],
            roles=data.validated_data["roles"],
            admin=data.validated_data["admin"],
            actor=request.user,
        )
        return Response(MemberOutput(membership).data, status=status.HTTP_201_CREATED)


class MemberApi(APIView):
    """`PATCH {roles?, admin?}`: a member's roles (exactly these) and admin flag; `DELETE`: the
    member leaves the workspace (their account and work stay). Its admins only; a person who
    administers another workspace is changed only by a superuser."""

    permission_classes = [IsAuthenticated]

    class InputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "WorkspaceMemberChange"

        roles = serializers.ListField(child=serializers.ChoiceField(choices=ROLE_CHOICES), required=False)
        admin = serializers.BooleanField(required=False)

    @extend_schema(request=InputSerializer, responses=MemberOutput)
    def patch(self, request, slug, username):
        workspace = _administered(request, slug)
        membership = _membership(workspace, username)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user: User = membership.user
        _refusals_as_403(
            member_roles_change,
            workspace=workspace,
            user=user,
            roles=data.validated_data.get("roles", membership.role_names()),
            admin=data.validated_data.get("admin"),
            actor=request.user,
        )
        changed = Membership.objects.filter(workspace=workspace, user=user).select_related("user").first()
        if changed is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(MemberOutput(changed).data)

    @extend_schema(responses={204: None})
    def delete(self, request, slug, username):
        workspace = _administered(request, slug)
        membership = _membership(workspace, username)
        _refusals_as_403(member_remove, workspace=workspace, user=membership.user, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
