"""The person's own API tokens through the API, as on /account/tokens/: list them, make one
(optionally expiring after some days; the token is in that one response only), revoke one."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from core.models import ApiToken
from core.tokens import MAX_EXPIRY_DAYS, MAX_NAME, api_token_create, api_token_revoke, api_tokens_of


class TokenOutput(serializers.Serializer):
    class Meta:
        ref_name = "ApiToken"

    id = serializers.IntegerField()
    name = serializers.CharField()
    prefix = serializers.CharField(help_text="the token's first characters, to tell tokens apart")
    created_at = serializers.DateTimeField()
    last_used_at = serializers.DateTimeField(allow_null=True)
    expires_at = serializers.DateTimeField(allow_null=True, help_text="null: valid until revoked")


class TokenCreated(TokenOutput):
    class Meta:
        ref_name = "ApiTokenCreated"

    token = serializers.CharField(help_text="shown in this response only; never readable again")


def _made_with(request) -> ApiToken | None:
    return request.auth if isinstance(request.auth, ApiToken) else None


class TokenListApi(APIView):
    """`GET`: the person's tokens that were not revoked (expired ones included), newest first.
    `POST {name, expires_in_days?}`: a new token, valid until revoked or for 1 to 366 days; the
    token is in this response only. Made with a token that expires, it expires no later."""

    permission_classes = [IsAuthenticated]

    class InputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "ApiTokenInput"

        name = serializers.CharField(max_length=MAX_NAME)
        expires_in_days = serializers.IntegerField(
            min_value=1, max_value=MAX_EXPIRY_DAYS, required=False, allow_null=True
        )

    @extend_schema(responses=TokenOutput(many=True))
    def get(self, request):
        return Response(TokenOutput(api_tokens_of(user=request.user), many=True).data)

    @extend_schema(request=InputSerializer, responses={201: TokenCreated})
    def post(self, request):
        given = self.InputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        token, key = api_token_create(
            user=request.user,
            name=given.validated_data["name"],
            expires_in_days=given.validated_data.get("expires_in_days"),
            made_with=_made_with(request),
        )
        return Response(TokenCreated({**TokenOutput(token).data, "token": key}).data, status=status.HTTP_201_CREATED)


class TokenDetailApi(APIView):
    """`DELETE`: revoke one of the person's tokens (its tombstone stays: a script still sending it
    is told it was revoked). Another person's token, or one revoked already, is 404."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={204: None})
    def delete(self, request, token_id: int):
        if not api_tokens_of(user=request.user).filter(pk=token_id).exists():
            raise NotFound()
        api_token_revoke(user=request.user, token_id=token_id)
        return Response(status=status.HTTP_204_NO_CONTENT)
