"""Writes of the annotator's loop: leases, votes, undo and skip (campaigns are created in
annotation/campaigns.py).

Leasing is the one place where annotators race. On PostgreSQL a free pair is
taken with SELECT ... FOR UPDATE SKIP LOCKED, so concurrent annotators never
wait on each other and never share a slot; its free slots are then counted
again by a new statement, which under READ COMMITTED sees every lease committed
before our lock was granted. On SQLite the project opens every transaction
IMMEDIATE, so writers run one at a time and the same code is correct there.
"""

import hashlib
import hmac
import secrets
from datetime import datetime, timedelta
from typing import cast

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Exists, OuterRef, Subquery
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation import leasing
from annotation.adaptive import MAX_DRAWN_UNVOTED, pair_draw
from annotation.errors import AnnotationError
from annotation.figures import figures_votes_changed
from annotation.models import Assignment, Campaign, ComparisonPair, Vote, Winner
from core.raw_rows import raw_insert
from judging.models import Answer

# What the annotator clicks, in screen terms; the vote is stored in model terms.
CHOICES = ("left", "right", "tie", "cannot_determine")


def _with_answer_texts(pairs):
    """Annotate both answers' texts (`answer_a_text`, `answer_b_text`) on a query of pairs, as
    annotation.leasing does for the other lookups, so that showing the item needs no further query."""

    def text_of(model_field: str):
        # The version the campaign pinned (annotation.campaigns), whatever replaced it since.
        answer = Answer.all_versions.filter(
            item_id=OuterRef("item_id"), model_id=OuterRef(model_field), answer_set__campaigns=OuterRef("campaign_id")
        )
        return Subquery(answer.values("text")[:1])

    return pairs.annotate(answer_a_text=text_of("model_a_id"), answer_b_text=text_of("model_b_id"))


def _lease(pair: ComparisonPair, annotator: User, campaign: Campaign, now) -> Assignment:
    if not pair.is_gold:
        leasing.last_pair_note(campaign_id=campaign.pk, annotator_id=annotator.pk, pair_id=pair.pk)
    assignment = raw_insert(
        Assignment(
            pair=pair,
            annotator=annotator,
            model_a_on_left=secrets.randbelow(2) == 1,
            leased_until=now + timedelta(seconds=campaign.lease_seconds),
        )
    )
    assignment.answer_a_text, assignment.answer_b_text = pair.answer_a_text, pair.answer_b_text
    leasing.prepared_plans_renew_when_due()
    return assignment


def gold_position(*, campaign_id: int, annotator_id: int, block: int, every: int) -> int:
    """Where, among the `every` items of an annotator's `block`-th run, the gold pair comes:
    a keyed hash of campaign, annotator and block, so it differs from block to block and person
    to person and cannot be worked out without SECRET_KEY, yet stays put across page loads."""
    message = f"gold:{campaign_id}:{annotator_id}:{block}".encode()
    digest = hmac.new(settings.SECRET_KEY.encode(), message, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") % every


def _due_for_gold(campaign: Campaign, annotator: User, seen: int) -> bool:
    """One gold pair in every `gold_every` items (`seen`: those they voted on so far), at a
    position the annotator cannot predict."""
    if not campaign.gold_every:
        return False
    block, position = divmod(seen, campaign.gold_every)
    return position == gold_position(
        campaign_id=campaign.pk, annotator_id=annotator.pk, block=block, every=campaign.gold_every
    )


def _unseen_gold(campaign: Campaign, annotator: User):
    """A gold pair, chosen at random, on a question this annotator has not been shown in this
    campaign (a gold pair on a question they know would stand out); None when there is none."""
    seen_items = Assignment.objects.filter(pair__campaign=campaign, annotator=annotator).values("pair__item_id")
    candidates = list(
        ComparisonPair.objects.filter(campaign=campaign, is_gold=True)
        .exclude(item_id__in=seen_items)
        .values_list("pk", flat=True)
    )
    if not candidates:
        return None
    chosen = candidates[secrets.randbelow(len(candidates))]
    return _with_answer_texts(ComparisonPair.objects.select_related("item")).get(pk=chosen)


@transaction.atomic
def assignment_next(*, campaign: Campaign, annotator: User, now: datetime | None = None) -> Assignment | None:
    """The annotator's current lease, or a new one on a pair that still needs votes; None when done.

    An adaptive campaign draws a new pair (annotation/adaptive.py) when no pair drawn so far has
    a free slot for the annotator, until its budget is spent.
    A lease the annotator let run out is renewed if its pair still has room,
    otherwise it is released. One item in every `gold_every` is a gold pair, at an
    unpredictable position, on a question they have not seen. Nobody ever gets the same
    pair twice (a database constraint). The assignment comes with both answers' texts,
    ready for `assignment_display`.
    """
    now = now or timezone.now()
    held = leasing.held_lease(campaign_id=campaign.pk, annotator_id=annotator.pk)
    if not campaign.is_open:
        # Closed (annotation/campaign_edits.py): a lease still running may be finished; nothing
        # is renewed or leased anew.
        return held if held is not None and held.leased_until > now else None
    if held is not None:
        if held.leased_until > now:
            return held
        if not held.pair.is_gold:
            # Counted under the pair's lock: a lease someone takes on it right now is counted too.
            leasing.pair_lock(pair_id=held.pair_id)
        others = leasing.slots_taken(pair_id=held.pair_id, now=now, other_than=held.pk)
        # Gold pairs have no slot limit; others' leases may have filled an abandoned pair.
        if held.pair.is_gold or others < campaign.votes_per_pair:
            held.leased_until = now + timedelta(seconds=campaign.lease_seconds)
            held.save(update_fields=["leased_until"])
            return held
        held.status = Assignment.Status.RELEASED
        held.save(update_fields=["status"])
        leasing.tally_add(campaign_id=campaign.pk, annotator_id=annotator.pk, released=1)

    seen, last_pair_id = leasing.tally_read(campaign_id=campaign.pk, annotator_id=annotator.pk)
    if _due_for_gold(campaign, annotator, seen):
        gold = _unseen_gold(campaign, annotator)
        if gold is not None:
            return _lease(gold, annotator, campaign, now)

    pair = _pair_with_a_free_slot(campaign, annotator, now, last_pair_id)
    if pair is None and campaign.is_adaptive:
        # Pairs drawn earlier come first (their overlap, skips and expired leases); then a new one.
        pair = pair_draw(campaign=campaign, annotator_id=annotator.pk)
        if pair is None:
            # The budget's last slot may have gone, while this request waited for the campaign's
            # row lock, to a draw the first look could not see yet: its pair is committed now, and
            # may need this annotator's vote. Without this second look, annotators arriving
            # together at the end were all told "done" with that pair one vote short.
            pair = _pair_with_a_free_slot(campaign, annotator, now, last_pair_id)
    return None if pair is None else _lease(pair, annotator, campaign, now)


# Why assignment_next had nothing for an annotator (annotation/views.py and api.py say it).
CLOSED, WAIT, DONE = "closed", "wait", "done"


def nothing_leased_reason(*, campaign: Campaign, annotator: User) -> str:
    """Why assignment_next has just returned None for this annotator: CLOSED, the campaign is
    closed; WAIT, they may get an item later, so "done" would be wrong; DONE, nothing is left
    for them. WAIT when a pair that needs votes and that they never had has every slot held by
    others' running leases (one that runs out or is skipped comes back to them), or when an
    adaptive campaign's budget is not spent but the pairs their requests drew that nobody voted
    on yet (they skipped them) hold back their next draw until others vote (adaptive.py). Read
    only on the end screen, never per vote: it walks the campaign's pairs that still need votes."""
    if not campaign.is_open:
        return CLOSED
    theirs = Assignment.objects.filter(pair_id=OuterRef("pk"), annotator=annotator)
    held_by_others = (
        ComparisonPair.objects.filter(campaign=campaign, needs_votes=True, is_gold=False)
        .exclude(Exists(theirs))
        .exists()
    )
    if held_by_others:
        return WAIT
    if campaign.is_adaptive:
        drawn = Campaign.objects.filter(pk=campaign.pk).values_list("pairs_drawn", flat=True).first() or 0
        limit = MAX_DRAWN_UNVOTED
        if drawn < campaign.pairs_planned and (
            leasing.drawn_unvoted(campaign_id=campaign.pk, annotator_id=annotator.pk, limit=limit) >= limit
        ):
            return WAIT
    return DONE


def _pair_with_a_free_slot(campaign: Campaign, annotator: User, now, last_pair_id: int) -> ComparisonPair | None:
    """The first ordinary pair the annotator never had that has a free slot, row-locked; None.
    Pairs after the last one leased to them are looked at first: those before it they had, or
    found full, and most still wait for others' votes. Only when none is left after it does the
    lookup start again from the first pair (a lease that ran out or a skip may have freed one)."""
    pair = _first_free_pair(campaign, annotator, now, last_pair_id)
    if pair is None and last_pair_id:
        pair = _first_free_pair(campaign, annotator, now, 0)
    return pair


def _first_free_pair(campaign: Campaign, annotator: User, now, after_id: int) -> ComparisonPair | None:
    # Locked rows are skipped, so a few tries are enough even when the counts moved under us.
    for _attempt in range(5):
        pair = leasing.free_pair(
            campaign_id=campaign.pk,
            annotator_id=annotator.pk,
            now=now,
            votes_per_pair=campaign.votes_per_pair,
            after_id=after_id,
        )
        if pair is None:
            return None
        if leasing.slots_taken(pair_id=pair.pk, now=now) < campaign.votes_per_pair:
            return pair
        after_id = pair.pk
    return None


def _refresh_figures_after_commit(campaign_id: int) -> None:
    """Queue the campaign's debounced figures refresh once the vote is committed (a task queued
    before then could run against votes not yet visible to the worker). Robust: a failure to
    queue never undoes a vote already stored; the next read asks again."""
    transaction.on_commit(lambda: figures_votes_changed(campaign_id=campaign_id), robust=True)


def _winner_for(choice: str, model_a_on_left: bool) -> str:
    if choice == "tie":
        return Winner.TIE
    if choice == "cannot_determine":
        return Winner.CANNOT_DETERMINE
    left_is_a = model_a_on_left
    return Winner.MODEL_A if (choice == "left") == left_is_a else Winner.MODEL_B


@transaction.atomic
def vote_cast(
    *,
    token: str,
    annotator: User,
    choice: str,
    comment: str = "",
    now: datetime | None = None,
    campaign: Campaign | None = None,
) -> tuple[Vote, bool]:
    """Store the annotator's choice for the assignment `token`; returns (vote, created).

    Submitting the same assignment twice stores one vote and returns it again; a second
    submit with another choice is refused (undo first).
    A lease that ran out still takes the vote unless someone else has since
    filled the pair. A closed campaign still takes a vote on an item leased before it closed
    (it leases nothing new). When `campaign` is given (the page or API the vote came through),
    only an assignment of that campaign is voted on.
    """
    now = now or timezone.now()
    if choice not in CHOICES:
        raise AnnotationError(_("Choose left, right, tie or cannot_determine."))
    comment = (comment or "").strip()
    if len(comment) > 2000:
        raise AnnotationError(_("The comment is longer than 2000 characters."))
    assignment = leasing.assignment_to_vote_on(token=token, annotator_id=annotator.pk)
    if assignment is None or (campaign is not None and assignment.pair_campaign_id != campaign.pk):
        raise AnnotationError(_("This item is not assigned to you."))
    if assignment.status == Assignment.Status.VOTED:
        vote = Vote.objects.get(assignment=assignment)
        # The same choice again is a double submit; another choice is a change of mind, which
        # goes through undo, never silently "stored".
        if vote.winner != _winner_for(choice, assignment.model_a_on_left):
            raise AnnotationError(_("You have already voted differently on this item: undo your vote to change it."))
        return vote, False
    if assignment.status == Assignment.Status.RELEASED:
        raise AnnotationError(_("This item was skipped or returned and takes no vote."))
    if assignment.leased_until <= now and not assignment.pair_is_gold:
        # Counted under the pair's lock: a lease someone takes on it right now is counted too.
        leasing.pair_lock(pair_id=assignment.pair_id)
        others = leasing.slots_taken(pair_id=assignment.pair_id, now=now, other_than=assignment.pk)
        # An expired lease already holds no slot, so nothing needs releasing here.
        if others >= assignment.votes_per_pair:
            raise AnnotationError(_("Your time for this item ran out and others have voted on it."))
    vote = Vote(
        item_id=assignment.pair_item_id,
        model_a_id=assignment.pair_model_a_id,
        model_b_id=assignment.pair_model_b_id,
        winner=_winner_for(choice, assignment.model_a_on_left),
        campaign_id=assignment.pair_campaign_id,
        assignment=assignment,
        annotator=annotator,
        comment=comment,
        # An adaptive campaign's pairs record the probability they were chosen with: kept with
        # the vote, so that an analysis may weight by it (README, "Adaptive campaigns").
        choice_probability=assignment.pair_choice_probability,
        seconds_spent=max(0.0, (now - (assignment.undone_at or assignment.created_at)).total_seconds()),
    )
    # Fixed statements: save() composes each anew on every vote (bench/README.md, "Fixed statements").
    raw_insert(vote)
    leasing.assignment_status_set(assignment_id=assignment.pk, status=Assignment.Status.VOTED)
    assignment.status = Assignment.Status.VOTED
    _count_vote(assignment, annotator.pk, 1)
    _refresh_figures_after_commit(assignment.pair_campaign_id)
    return vote, True


def _count_vote(assignment: Assignment, annotator_id: int, delta: int) -> None:
    """Keep the counters of a vote cast (delta 1) or taken back (-1): its pair's votes, the
    annotator's tally and, for an ordinary pair, the campaign's. `assignment` carries its pair's
    `pair_id`, `pair_campaign_id`, `pair_is_gold` and the campaign's `votes_per_pair`."""
    gold = bool(assignment.pair_is_gold)
    campaign_id = assignment.pair_campaign_id
    leasing.pair_votes_add(pair_id=assignment.pair_id, delta=delta, votes_per_pair=assignment.votes_per_pair)
    leasing.tally_add(campaign_id=campaign_id, annotator_id=annotator_id, voted=delta, gold_voted=delta if gold else 0)
    if not gold:
        leasing.campaign_votes_add(campaign_id=campaign_id, annotator_id=annotator_id, delta=delta)


@transaction.atomic
def vote_undo(*, campaign: Campaign, annotator: User, now: datetime | None = None) -> Assignment:
    """Take back the annotator's latest vote in the campaign; its item comes back to them first.

    Only the latest vote can be undone, and only once: after an undo the next
    vote has to be cast before anything else can be undone. A closed campaign's votes stay as
    they are (an undo would lease the item again).
    """
    now = now or timezone.now()
    if not campaign.is_open:
        raise AnnotationError(_("This campaign is closed: its votes can no longer be changed."))
    pending = Assignment.objects.filter(
        pair__campaign=campaign, annotator=annotator, status=Assignment.Status.LEASED, undone_at__isnull=False
    ).exists()
    vote = (
        Vote.objects.select_for_update(of=("self",))
        .filter(campaign=campaign, annotator=annotator, assignment__isnull=False)
        .select_related("assignment__pair")
        .order_by("-created_at", "-pk")
        .first()
    )
    if pending or vote is None:
        raise AnnotationError(_("There is no vote to undo."))
    # Never None: the query above takes only votes with an assignment.
    assignment = cast(Assignment, vote.assignment)
    vote.delete()
    assignment.status = Assignment.Status.LEASED
    assignment.undone_at = now
    assignment.leased_until = now + timedelta(seconds=campaign.lease_seconds)
    assignment.save(update_fields=["status", "undone_at", "leased_until"])
    assignment.pair_campaign_id, assignment.pair_is_gold = campaign.pk, assignment.pair.is_gold
    assignment.votes_per_pair = campaign.votes_per_pair
    _count_vote(assignment, annotator.pk, -1)
    _refresh_figures_after_commit(campaign.pk)
    return assignment


@transaction.atomic
def assignment_skip(*, token: str, annotator: User, campaign: Campaign | None = None) -> Assignment:
    """Give the item back: its slot returns to the pool and this annotator never sees it again.
    With `campaign`, only an assignment of that campaign.

    Skipping an item already skipped (a double click, a resent request) changes nothing and
    answers the same; an item already voted on is refused (undo the vote instead).
    """
    assignments = (
        Assignment.objects.select_for_update(of=("self",))
        .select_related("pair")
        .filter(token=token, annotator=annotator)
    )
    if campaign is not None:
        assignments = assignments.filter(pair__campaign=campaign)
    assignment = assignments.first()
    if assignment is None:
        raise AnnotationError(_("This item is not assigned to you."))
    if assignment.status == Assignment.Status.RELEASED:
        return assignment
    if assignment.status == Assignment.Status.VOTED:
        raise AnnotationError(_("You have already voted on this item: undo your vote to change it."))
    assignment.status = Assignment.Status.RELEASED
    assignment.save(update_fields=["status"])
    # The slot goes back to the pool; an adaptive campaign draws no pair for it (its next pair
    # for this annotator is drawn only while they hold few drawn pairs nobody voted on: adaptive.py).
    leasing.tally_add(campaign_id=assignment.pair.campaign_id, annotator_id=annotator.pk, released=1)
    return assignment
