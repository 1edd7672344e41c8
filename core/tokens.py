"""API tokens a person makes, names and revokes on /account/tokens/, and the API's
authentication by them.

Only a SHA-256 hash of a token is stored (a token is 256 random bits, so a plain hash is enough:
nobody guesses one from its hash). The token is shown once, when it is made. Tokens made in the
admin before (rest_framework.authtoken, plain text) were hashed by core/migrations/0003_api_tokens.py;
one made there since is hashed the first time it is used, and its plain-text row deleted.
Creation and revocation are recorded in the audit log, never with the token.
"""

import hashlib
import secrets
from datetime import timedelta

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _
from rest_framework import exceptions
from rest_framework.authtoken.models import Token

from core.audit import AuditAction, audit_record
from core.errors import UserbenchError
from core.models import ApiToken
from core.throttling import ThrottledTokenAuthentication

# Tells a Userbench token from others in a config file or a leaked log; not part of the secret.
TOKEN_PREFIX = "ub_"
# How often a token's "last used" is written: not on every request of a busy script.
LAST_USED_EVERY = timedelta(minutes=1)
MAX_NAME: int = ApiToken._meta.get_field("name").max_length or 100


class TokenError(UserbenchError):
    """A token that cannot be made or revoked as asked; nothing was changed."""


def token_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def api_tokens_of(*, user) -> QuerySet[ApiToken]:
    """The person's own tokens, newest first."""
    return ApiToken.objects.filter(user=user).order_by("-created_at", "-id")


@transaction.atomic
def api_token_create(*, user, name: str) -> tuple[ApiToken, str]:
    """A new token for `user` named `name`; returns the row and the token, which is never
    readable again. TokenError for an empty or overlong name. Audited (without the token)."""
    name = " ".join(name.split())
    if not name:
        raise TokenError(_("Name the token, so that you know later which one to revoke."))
    if len(name) > MAX_NAME:
        raise TokenError(_("A token's name has at most %(limit)d characters.") % {"limit": MAX_NAME})
    key = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(user=user, name=name, key_hash=token_hash(key), prefix=key[:8])
    audit_record(actor=user, action=AuditAction.TOKEN_CREATED, target=f"token:{token.pk}", details={"name": name})
    return token, key


@transaction.atomic
def api_token_revoke(*, user, token_id: int) -> ApiToken:
    """Delete one of the person's own tokens: requests with it are refused from now on.
    TokenError when they have no token of that id (someone else's included). Audited."""
    token = api_tokens_of(user=user).select_for_update().filter(pk=token_id).first()
    if token is None:
        raise TokenError(_("You have no token %(id)s.") % {"id": token_id})
    audit_record(actor=user, action=AuditAction.TOKEN_REVOKED, target=f"token:{token.pk}", details={"name": token.name})
    token.delete()
    return token


def _legacy_token(key: str) -> ApiToken | None:
    """A token made in the admin since the migration, hashed now and its plain-text row deleted."""
    with transaction.atomic():
        legacy = Token.objects.select_for_update().filter(key=key).first()
        if legacy is None:
            return None
        token, _created = ApiToken.objects.get_or_create(
            key_hash=token_hash(key),
            defaults={"user_id": legacy.user_id, "name": "API token made in the admin", "prefix": key[:8]},
        )
        legacy.delete()
    return token


def api_token_user(*, key: str):
    """The active person a token belongs to, or None; notes when the token was last used."""
    token = ApiToken.objects.select_related("user").filter(key_hash=token_hash(key)).first() or _legacy_token(key)
    if token is None or not token.user.is_active:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_EVERY:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token.user


class HashedTokenAuthentication(ThrottledTokenAuthentication):
    """`Authorization: Token <token>`, as before, looked up by the token's hash; failed attempts
    are limited per client (see ThrottledTokenAuthentication)."""

    def authenticate_credentials(self, key):
        user = api_token_user(key=key)
        if user is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        return (user, None)
