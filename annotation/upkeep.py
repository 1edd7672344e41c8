"""Writes of a researcher looking after a campaign's pairs: a pair that waits for ever (its
annotators skipped it, or one holds it and went away) is released or given to someone.

Each annotator sees a pair at most once (a database constraint), so a skip keeps the pair from
that annotator for good; with few annotators a skipped pair can never get its votes. Releasing
the skips lets those annotators be offered it again; reassigning leases it to one annotator now.
Both are recorded in the audit log, and both take the pair's row lock first, as every change of
a pair's slots does (annotation/leasing.py)."""

import secrets
from datetime import timedelta

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation import leasing
from annotation.errors import AnnotationError
from annotation.models import Assignment, Campaign, ComparisonPair
from core.audit import AuditAction, audit_record
from core.roles import Role, has_role


def _waiting_pair(campaign: Campaign, pair_id: int) -> ComparisonPair:
    """The campaign's ordinary pair `pair_id`, locked, when the campaign still takes votes."""
    if campaign.archived_at is not None:
        raise AnnotationError(_("This campaign is archived and cannot be changed; restore it first."))
    if not campaign.is_open:
        raise AnnotationError(_("This campaign is closed and takes no more votes."))
    pair = ComparisonPair.objects.filter(pk=pair_id, campaign=campaign).first()
    if pair is None:
        raise AnnotationError(_("No such pair in this campaign."))
    if pair.is_gold:
        raise AnnotationError(_("Gold pairs are shown to every annotator and never wait on anyone."))
    leasing.pair_lock(pair_id=pair.pk)
    pair.refresh_from_db(fields=["votes_cast"])  # read under the lock: a vote may have just come in
    if pair.votes_cast >= campaign.votes_per_pair:
        raise AnnotationError(_("This pair already has all its votes."))
    return pair


@transaction.atomic
def pair_release(*, campaign: Campaign, pair_id: int, actor: User | None) -> list[str]:
    """Take back the skips of a pair still waiting for votes, so the annotators who skipped it
    may be offered it again; returns their usernames (none: nothing changed, nothing recorded)."""
    pair = _waiting_pair(campaign, pair_id)
    skips = Assignment.objects.filter(pair=pair, status=Assignment.Status.RELEASED)
    skipped = list(skips.values_list("annotator_id", "annotator__username"))
    names = sorted(name for _id, name in skipped)
    if not names:
        raise AnnotationError(_("Nobody skipped this pair."))
    skips.delete()
    for annotator_id, _name in skipped:
        leasing.tally_add(campaign_id=campaign.pk, annotator_id=annotator_id, released=-1)
    audit_record(
        actor=actor,
        action=AuditAction.CAMPAIGN_CHANGED,
        target=f"campaign:{campaign.slug}",
        details={"pair": pair.pk, "skips_released": names},
        workspace=campaign.workspace_id,
    )
    return names


@transaction.atomic
def pair_reassign(*, campaign: Campaign, pair_id: int, annotator: User, actor: User | None, now=None) -> Assignment:
    """Lease a pair still waiting for votes to `annotator` now: their skip of it, if any, is
    taken back, and when every slot is held, the leases of others (not votes) are ended to
    make room. The annotator must work in the campaign and must not have voted on the pair."""
    now = now or timezone.now()
    pair = _waiting_pair(campaign, pair_id)
    if not has_role(annotator, Role.ANNOTATOR) or not campaign.annotators.filter(pk=annotator.pk).exists():
        raise AnnotationError(_("%(name)s is not an annotator of this campaign.") % {"name": annotator.get_username()})
    mine = Assignment.objects.filter(pair=pair, annotator=annotator).first()
    if mine is not None and mine.status == Assignment.Status.VOTED:
        raise AnnotationError(_("%(name)s has already voted on this pair.") % {"name": annotator.get_username()})
    if mine is not None and mine.status == Assignment.Status.LEASED and mine.leased_until > now:
        raise AnnotationError(_("%(name)s holds this pair already.") % {"name": annotator.get_username()})
    if mine is not None:
        mine.delete()  # a skip or a lease that ran out: replaced by the new lease below
        if mine.status == Assignment.Status.RELEASED:
            leasing.tally_add(campaign_id=campaign.pk, annotator_id=annotator.pk, released=-1)
    # Someone whose running lease is ended to make room finds, on voting, that the item is no
    # longer theirs; what they see next is another pair.
    ended: list[str] = []
    if leasing.slots_taken(pair_id=pair.pk, now=now) >= campaign.votes_per_pair:
        others = Assignment.objects.filter(pair=pair, status=Assignment.Status.LEASED, leased_until__gt=now)
        oldest = others.order_by("created_at", "pk").select_related("annotator").first()
        if oldest is not None:
            ended.append(oldest.annotator.get_username())
            oldest.delete()
    assignment = Assignment.objects.create(
        pair=pair,
        annotator=annotator,
        model_a_on_left=secrets.randbelow(2) == 1,
        leased_until=now + timedelta(seconds=campaign.lease_seconds),
    )
    audit_record(
        actor=actor,
        action=AuditAction.CAMPAIGN_CHANGED,
        target=f"campaign:{campaign.slug}",
        details={"pair": pair.pk, "reassigned_to": annotator.get_username(), "leases_ended": ended},
        workspace=campaign.workspace_id,
    )
    return assignment
