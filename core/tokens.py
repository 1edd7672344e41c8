"""API tokens a person makes, names and revokes on /account/tokens/, and the API's
authentication by them.

Only a SHA-256 hash of a token is stored (a token is 256 random bits, so a plain hash is enough:
nobody guesses one from its hash). The token is shown once, when it is made. Tokens made in the
admin before (rest_framework.authtoken, plain text) were hashed by core/migrations/0003_api_tokens.py;
one made there since is hashed the first time it is used, and its plain-text row deleted.
Creation and revocation are recorded in the audit log, never with the token, as entries about the
person (they and superusers read them).

A revoked token is kept as a tombstone (its hash and when it was revoked, never the token), and a
token may be given an expiry: a script still sending a revoked or expired token is answered 401
saying so, and that is not counted as a guess against its address (core/throttling.py), so one
forgotten script never locks out a team behind the same address.
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
from core.auth import CurrentWorkspaceMixin
from core.errors import UserbenchError
from core.models import ApiToken
from core.throttling import ThrottledTokenAuthentication

# Tells a Userbench token from others in a config file or a leaked log; not part of the secret.
TOKEN_PREFIX = "ub_"
# How often a token's "last used" is written: not on every request of a busy script.
LAST_USED_EVERY = timedelta(minutes=1)
MAX_NAME: int = ApiToken._meta.get_field("name").max_length or 100
# The longest expiry a token may be given, in days (no expiry at all is allowed too).
MAX_EXPIRY_DAYS = 366


class TokenError(UserbenchError):
    """A token that cannot be made or revoked as asked; nothing was changed."""


def token_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class TokenRefused(exceptions.AuthenticationFailed):
    """A token that was ours but no longer opens the API (revoked, expired, its account
    deactivated): 401, and not a guess (core.throttling does not count it)."""

    known_token = True


def api_tokens_of(*, user) -> QuerySet[ApiToken]:
    """The person's own tokens that were not revoked (expired ones included), newest first."""
    return ApiToken.objects.filter(user=user, revoked_at__isnull=True).order_by("-created_at", "-id")


@transaction.atomic
def api_token_create(
    *, user, name: str, expires_in_days: int | None = None, made_with: ApiToken | None = None
) -> tuple[ApiToken, str]:
    """A new token for `user` named `name`, valid until revoked or for `expires_in_days` days;
    returns the row and the token, which is never readable again. TokenError for an empty or
    overlong name or an expiry out of range. A token made through the API with a token that
    expires (`made_with`) expires no later than it: a leaked short-lived token cannot make itself
    a lasting one. Audited (without the token)."""
    name = " ".join(name.split())
    if not name:
        raise TokenError(_("Name the token, so that you know later which one to revoke."))
    if len(name) > MAX_NAME:
        raise TokenError(_("A token's name has at most %(limit)d characters.") % {"limit": MAX_NAME})
    if expires_in_days is not None and not 1 <= expires_in_days <= MAX_EXPIRY_DAYS:
        raise TokenError(_("A token expires after 1 to %(max)d days, or never.") % {"max": MAX_EXPIRY_DAYS})
    key = TOKEN_PREFIX + secrets.token_urlsafe(32)
    expires_at = timezone.now() + timedelta(days=expires_in_days) if expires_in_days else None
    if made_with is not None and made_with.expires_at is not None:
        if expires_at is None or expires_at > made_with.expires_at:
            raise TokenError(
                _("The token this request uses expires on %(date)s: a token it makes expires no later.")
                % {"date": made_with.expires_at.strftime("%Y-%m-%d %H:%M UTC")}
            )
    token = ApiToken.objects.create(
        user=user, name=name, key_hash=token_hash(key), prefix=key[:8], expires_at=expires_at
    )
    details: dict = {"name": name}
    if expires_in_days:
        details["days"] = expires_in_days
    audit_record(
        actor=user, action=AuditAction.TOKEN_CREATED, target=f"token:{token.pk}", details=details, subject=user
    )
    return token, key


def api_token_of(*, user, token_id: int) -> ApiToken | None:
    """One of the person's own tokens that was not revoked, or None (someone else's included)."""
    return api_tokens_of(user=user).filter(pk=token_id).first()


@transaction.atomic
def api_token_revoke(*, user, token_id: int) -> ApiToken:
    """Revoke one of the person's own tokens: requests with it are refused from now on (its
    tombstone keeps the hash and the time, so they are told so). TokenError when they have no
    live token of that id (someone else's included). Audited."""
    token = api_tokens_of(user=user).select_for_update().filter(pk=token_id).first()
    if token is None:
        raise TokenError(_("You have no token %(id)s.") % {"id": token_id})
    token.revoked_at = timezone.now()
    token.save(update_fields=["revoked_at"])
    audit_record(
        actor=user,
        action=AuditAction.TOKEN_REVOKED,
        target=f"token:{token.pk}",
        details={"name": token.name},
        subject=user,
    )
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


def api_token_for(*, key: str) -> ApiToken | None:
    """The live token of an active person (its `user` read with it), or None for a token never
    made here; notes when the token was last used. TokenRefused for one revoked, expired or of a
    deactivated account."""
    token = ApiToken.objects.select_related("user").filter(key_hash=token_hash(key)).first() or _legacy_token(key)
    if token is None:
        return None
    now = timezone.now()
    if token.revoked_at is not None:
        raise TokenRefused(_("This token was revoked."))
    if not token.is_live(now):
        raise TokenRefused(_("This token has expired."))
    if not token.user.is_active:
        raise TokenRefused(_("Invalid token."))
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_EVERY:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token


class HashedTokenAuthentication(CurrentWorkspaceMixin, ThrottledTokenAuthentication):
    """`Authorization: Token <token>`, as before, looked up by the token's hash; failed attempts
    are limited per client (see ThrottledTokenAuthentication). The request's workspace comes from
    its X-Userbench-Workspace header (CurrentWorkspaceMixin)."""

    def authenticate_credentials(self, key):
        token = api_token_for(key=key)
        if token is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        # request.auth is the token row: a token made through the API is bound by its expiry.
        return (token.user, token)
