"""Writes of the annotation app: campaigns, leases, votes, undo, skip and imported votes.

Leasing is the one place where annotators race. On PostgreSQL a free pair is
taken with SELECT ... FOR UPDATE SKIP LOCKED, so concurrent annotators never
wait on each other and never share a slot; its free slots are then counted
again by a new statement, which under READ COMMITTED sees every lease committed
before our lock was granted. On SQLite the project opens every transaction
IMMEDIATE, so writers run one at a time and the same code is correct there.
"""

import hashlib
import hmac
import random
import re
import secrets
from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timedelta
from itertools import combinations
from typing import cast

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import OuterRef, Subquery
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation import leasing
from annotation.adaptive import pair_draw
from annotation.design import DESIGN_ROUNDS, DESIGN_WHAT
from annotation.errors import AnnotationError
from annotation.figures import figures_read, figures_votes_changed
from annotation.manifest import campaign_manifest_build
from annotation.models import Assignment, Campaign, ComparisonPair, Vote, Winner
from annotation.selectors import campaign_parts_by_name, questions_answered
from core.audit import AuditAction, audit_record
from core.roles import Role
from core.workspaces import holds
from curation.models import Dataset, Item
from judging.models import Answer, CandidateModel

# What the annotator clicks, in screen terms; the vote is stored in model terms.
CHOICES = ("left", "right", "tie", "cannot_determine")


MAX_VOTES_PER_PAIR = 100
MAX_GOLD_EVERY = 1000
# The most votes an adaptive campaign may ask for.
MAX_BUDGET = 1_000_000
# An adaptive campaign's default share of pairs drawn uniformly over the model pairs.
DEFAULT_UNIFORM_SHARE = 0.2
# The largest "least time per item" a campaign accepts: an hour.
MAX_SECONDS_PER_ITEM = 3600


# /campaigns/new/ is the form that creates campaigns, so no campaign's results may live there.
RESERVED_SLUGS = {"new"}


def _check_design(
    *,
    slug,
    title,
    title_zh="",
    annotators,
    votes_per_pair,
    gold_every,
    min_gold_accuracy,
    lease_seconds,
    min_seconds_per_item,
    sampling=Campaign.Sampling.FIXED,
    budget=0,
    uniform_share=DEFAULT_UNIFORM_SHARE,
    workspace_id=None,
):
    """Refuse a campaign design that cannot be stored or can never be finished, before writing."""
    if not isinstance(slug, str) or not re.fullmatch(r"[-a-zA-Z0-9_]{1,50}", slug):
        raise AnnotationError(
            _("A slug is 1 to 50 letters, digits, hyphens or underscores; %(slug)r is not.") % {"slug": slug}
        )
    if slug in RESERVED_SLUGS:
        raise AnnotationError(_("The slug %(slug)s is reserved; choose another.") % {"slug": slug})
    if Campaign.objects.filter(slug=slug).exists():
        raise AnnotationError(_("A campaign with the slug %(slug)s already exists.") % {"slug": slug})
    if not (title or "").strip() or len(title.strip()) > 200:
        raise AnnotationError(_("A campaign needs a title of 1 to 200 characters."))
    if len((title_zh or "").strip()) > 200:
        raise AnnotationError(_("A campaign's Chinese title is at most 200 characters."))
    if not 1 <= votes_per_pair <= MAX_VOTES_PER_PAIR:
        raise AnnotationError(_("Votes per pair must be from 1 to %(max)d.") % {"max": MAX_VOTES_PER_PAIR})
    if not 0 <= gold_every <= MAX_GOLD_EVERY:
        raise AnnotationError(
            _("A gold pair every N items needs N from 0 (no gold pairs) to %(max)d.") % {"max": MAX_GOLD_EVERY}
        )
    if not 0 <= min_gold_accuracy <= 1:
        raise AnnotationError(_("The gold accuracy threshold must be from 0 to 1."))
    if lease_seconds < 10:
        raise AnnotationError(_("A lease lasts at least 10 seconds."))
    if not 0 <= min_seconds_per_item <= MAX_SECONDS_PER_ITEM:
        raise AnnotationError(
            _("The least time per item must be from 0 (no check) to %(max)d seconds.") % {"max": MAX_SECONDS_PER_ITEM}
        )
    if sampling not in Campaign.Sampling.values:
        raise AnnotationError(_("Sampling is fixed or adaptive; %(sampling)r is neither.") % {"sampling": sampling})
    if sampling == Campaign.Sampling.ADAPTIVE:
        if not votes_per_pair <= budget <= MAX_BUDGET:
            raise AnnotationError(
                _("An adaptive campaign needs a budget from %(low)d (the votes per pair) to %(max)d votes.")
                % {"low": votes_per_pair, "max": MAX_BUDGET}
            )
        if not 0 < uniform_share <= 1:
            raise AnnotationError(_("The share of uniformly drawn pairs must be above 0 and at most 1."))
    elif budget:
        raise AnnotationError(_("A vote budget is for adaptive campaigns; a fixed campaign draws its pairs at once."))
    for person in annotators:
        # The role counts in the campaign's workspace: an annotator of another team is not one here.
        if not holds(person, Role.ANNOTATOR.value, workspace_id):
            raise AnnotationError(_("%(name)s does not hold the annotator role.") % {"name": person.get_username()})
    # Each annotator votes on a pair at most once, so fewer annotators than the overlap never finish it.
    if annotators and votes_per_pair > len(annotators):
        raise AnnotationError(
            _("%(votes)d votes per pair need at least %(votes)d annotators; %(n)d were given.")
            % {"votes": votes_per_pair, "n": len(annotators)}
        )


@transaction.atomic
def campaign_create(
    *,
    slug: str,
    title: str,
    title_zh: str = "",
    dataset: Dataset,
    candidates: list[CandidateModel],
    question_count: int | None = None,
    pairs_per_question: int = 1,
    votes_per_pair: int = 1,
    annotators=(),
    gold_every: int = 0,
    min_gold_accuracy: float = 0.7,
    min_seconds_per_item: float = 0,
    lease_seconds: int = 600,
    instructions_en: str = "",
    instructions_zh: str = "",
    seed: int = 0,
    gold_pairs=(),
    created_by: User | None = None,
    sampling: str = Campaign.Sampling.FIXED,
    budget: int = 0,
    uniform_share: float = DEFAULT_UNIFORM_SHARE,
) -> Campaign:
    """Create a campaign and draw its pairs (fixed sampling), or its design (adaptive sampling).

    `question_count` questions are drawn at random among those with answers from at
    least two candidates; each gets `pairs_per_question` pairs of candidates that
    both answered it, choosing the model pairs used least so far so that every
    model pair is compared about equally often. The same seed draws the same pairs.
    An adaptive campaign draws no pair now: annotation/adaptive.py draws each as annotators come,
    from every question of the dataset that two candidates answered, until `budget` votes are
    asked for; `uniform_share` of them uniformly over the model pairs (question_count and
    pairs_per_question are not used; question_count records the questions it may draw from).
    `gold_pairs` are (item, model_a, model_b, winner) with a known winner, added with
    gold_pair_add; one that cannot be added refuses the whole campaign.
    Annotators whose median time per item is under `min_seconds_per_item` (0: no check) are
    flagged, as are those whose gold accuracy is under `min_gold_accuracy`.
    """
    annotators = list({person.pk: person for person in annotators}.values())
    _check_design(
        workspace_id=dataset.workspace_id,
        slug=slug,
        title=title,
        title_zh=title_zh,
        annotators=annotators,
        votes_per_pair=votes_per_pair,
        gold_every=gold_every,
        min_gold_accuracy=min_gold_accuracy,
        lease_seconds=lease_seconds,
        min_seconds_per_item=min_seconds_per_item,
        sampling=sampling,
        budget=budget,
        uniform_share=uniform_share,
    )
    adaptive = sampling == Campaign.Sampling.ADAPTIVE
    title = title.strip()
    # The same model named twice is one candidate.
    candidates = sorted({model.pk: model for model in candidates}.values(), key=lambda model: model.pk)
    if len(candidates) < 2:
        raise AnnotationError(_("A campaign needs at least two candidate models."))
    answered = questions_answered(dataset=dataset, candidates=candidates)
    eligible = sorted(answered)
    if adaptive:
        question_count = len(eligible)
        if not eligible:
            raise AnnotationError(_("No question of this dataset has answers from two of these candidates."))
    if question_count is None or question_count < 1 or pairs_per_question < 1 or votes_per_pair < 1:
        raise AnnotationError(_("Questions, pairs per question and votes per pair must all be at least 1."))
    max_pairs = len(candidates) * (len(candidates) - 1) // 2
    if pairs_per_question > max_pairs:
        raise AnnotationError(
            _("%(n)d candidates make at most %(max)d pairs per question.") % {"n": len(candidates), "max": max_pairs}
        )
    if question_count > len(eligible):
        raise AnnotationError(
            _("Only %(n)d questions of this dataset have answers from two or more of these candidates.")
            % {"n": len(eligible)}
        )
    try:
        # A savepoint: a campaign with the same slug created meanwhile becomes a clear error.
        with transaction.atomic():
            campaign = Campaign.objects.create(
                slug=slug,
                title=title,
                title_zh=(title_zh or "").strip(),
                dataset=dataset,
                # A campaign stays in its dataset's workspace.
                workspace_id=dataset.workspace_id,
                instructions_en=instructions_en,
                instructions_zh=instructions_zh,
                votes_per_pair=votes_per_pair,
                lease_seconds=lease_seconds,
                question_count=question_count,
                pairs_per_question=pairs_per_question,
                seed=seed,
                gold_every=gold_every,
                min_gold_accuracy=min_gold_accuracy,
                min_seconds_per_item=min_seconds_per_item,
                created_by=created_by,
                sampling=sampling,
                budget=budget,
                uniform_share=uniform_share,
            )
    except IntegrityError as error:
        raise AnnotationError(_("A campaign with the slug %(slug)s already exists.") % {"slug": slug}) from error
    campaign.candidates.set(candidates)
    campaign.annotators.set(annotators)
    rng = random.Random(seed)
    used: Counter = Counter()
    pairs = []
    # An adaptive campaign draws its pairs one by one as annotators come (annotation/adaptive.py).
    for item_id in [] if adaptive else sorted(rng.sample(eligible, question_count)):
        possible = [pair for pair in combinations(sorted(answered[item_id]), 2)]
        rng.shuffle(possible)
        possible.sort(key=lambda pair: used[pair])
        for first, second in possible[:pairs_per_question]:
            used[(first, second)] += 1
            if rng.random() < 0.5:
                first, second = second, first
            pairs.append(ComparisonPair(campaign=campaign, item_id=item_id, model_a_id=first, model_b_id=second))
    ComparisonPair.objects.bulk_create(pairs)
    campaign.pairs_drawn = len(pairs)
    campaign.save(update_fields=["pairs_drawn"])
    for number, (item, model_a, model_b, winner) in enumerate(gold_pairs, start=1):
        if item.dataset_id != dataset.pk:
            raise AnnotationError(
                _("Gold pair %(n)d: question %(id)s is not in dataset %(dataset)s.")
                % {"n": number, "id": item.external_id, "dataset": dataset.name}
            )
        try:
            with transaction.atomic():
                gold_pair_add(campaign=campaign, item=item, model_a=model_a, model_b=model_b, winner=winner)
        except IntegrityError:
            raise AnnotationError(
                _("Gold pair %(n)d repeats another gold pair of this campaign.") % {"n": number}
            ) from None
        except AnnotationError as error:
            raise AnnotationError(_("Gold pair %(n)d: %(error)s") % {"n": number, "error": error}) from None
    if adaptive:
        # Its first pairs need a design: with no votes yet, every model pair alike.
        figures_read(what=DESIGN_WHAT, campaign=campaign, rounds=DESIGN_ROUNDS, seed=0, compute="missing")
    campaign.manifest = campaign_manifest_build(campaign=campaign)
    campaign.save(update_fields=["manifest"])
    audit_record(
        actor=created_by,
        action=AuditAction.CAMPAIGN_CHANGED,
        target=f"campaign:{slug}",
        details={"created": True, "pairs": len(pairs), "annotators": len(annotators), "sampling": sampling},
        workspace=campaign.workspace_id,
    )
    return campaign


@transaction.atomic
def campaign_create_by_names(
    *,
    dataset: str,
    models: list[str],
    annotators: Sequence[str] = (),
    question_count: int | None = None,
    slug: str,
    title: str = "",
    **design,
) -> Campaign:
    """campaign_create for the command line and the API, where things are named: the dataset,
    models and annotators by name, every eligible question when `question_count` is None, and
    the slug as title when none is given. Unknown names raise AnnotationError, all at once."""
    # The person creating it (the API) finds only their workspaces' datasets; the operator all.
    found, candidates, people = campaign_parts_by_name(
        dataset=dataset, models=list(models), annotators=list(annotators), user=design.get("created_by")
    )
    if question_count is None and design.get("sampling", Campaign.Sampling.FIXED) == Campaign.Sampling.FIXED:
        question_count = len(questions_answered(dataset=found, candidates=candidates))
    return campaign_create(
        slug=slug,
        title=title or slug,
        dataset=found,
        candidates=candidates,
        annotators=people,
        question_count=question_count,
        **design,
    )


@transaction.atomic
def gold_pair_add(
    *, campaign: Campaign, item: Item, model_a: CandidateModel, model_b: CandidateModel, winner: str
) -> ComparisonPair:
    """Add a gold pair with a known winner ("model_a", "model_b" or "tie") for quality checks."""
    if winner not in (Winner.MODEL_A, Winner.MODEL_B, Winner.TIE):
        raise AnnotationError(_("A gold pair's winner is model_a, model_b or tie."))
    if model_a.pk == model_b.pk:
        raise AnnotationError(_("A gold pair compares two different models."))
    if not Answer.objects.filter(item=item, model__in=[model_a, model_b]).count() == 2:
        raise AnnotationError(_("Both models need an answer to this question."))
    return ComparisonPair.objects.create(
        campaign=campaign, item=item, model_a=model_a, model_b=model_b, is_gold=True, gold_winner=winner
    )


def _with_answer_texts(pairs):
    """Annotate both answers' texts (`answer_a_text`, `answer_b_text`) on a query of pairs, as
    annotation.leasing does for the other lookups, so that showing the item needs no further query."""

    def text_of(model_field: str):
        answer = Answer.objects.filter(item_id=OuterRef("item_id"), model_id=OuterRef(model_field))
        return Subquery(answer.values("text")[:1])

    return pairs.annotate(answer_a_text=text_of("model_a_id"), answer_b_text=text_of("model_b_id"))


def _lease(pair: ComparisonPair, annotator: User, campaign: Campaign, now) -> Assignment:
    assignment = Assignment.objects.create(
        pair=pair,
        annotator=annotator,
        model_a_on_left=secrets.randbelow(2) == 1,
        leased_until=now + timedelta(seconds=campaign.lease_seconds),
    )
    assignment.answer_a_text, assignment.answer_b_text = pair.answer_a_text, pair.answer_b_text
    return assignment


def gold_position(*, campaign_id: int, annotator_id: int, block: int, every: int) -> int:
    """Where, among the `every` items of an annotator's `block`-th run, the gold pair comes:
    a keyed hash of campaign, annotator and block, so it differs from block to block and person
    to person and cannot be worked out without SECRET_KEY, yet stays put across page loads."""
    message = f"gold:{campaign_id}:{annotator_id}:{block}".encode()
    digest = hmac.new(settings.SECRET_KEY.encode(), message, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") % every


def _due_for_gold(campaign: Campaign, annotator: User) -> bool:
    """One gold pair in every `gold_every` items, at a position the annotator cannot predict."""
    if not campaign.gold_every:
        return False
    seen = Assignment.objects.filter(
        pair__campaign=campaign, annotator=annotator, status=Assignment.Status.VOTED
    ).count()
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

    if _due_for_gold(campaign, annotator):
        gold = _unseen_gold(campaign, annotator)
        if gold is not None:
            return _lease(gold, annotator, campaign, now)

    pair = _pair_with_a_free_slot(campaign, annotator, now)
    if pair is None and campaign.is_adaptive:
        # Pairs drawn earlier come first (their overlap, skips and expired leases); then a new one.
        pair = pair_draw(campaign=campaign)
        if pair is None:
            # The budget's last slot may have gone, while this request waited for the campaign's
            # row lock, to a draw the first look could not see yet: its pair is committed now, and
            # may need this annotator's vote. Without this second look, annotators arriving
            # together at the end were all told "done" with that pair one vote short.
            pair = _pair_with_a_free_slot(campaign, annotator, now)
    return None if pair is None else _lease(pair, annotator, campaign, now)


def _pair_with_a_free_slot(campaign: Campaign, annotator: User, now) -> ComparisonPair | None:
    """The first ordinary pair the annotator never had that has a free slot, row-locked; None."""
    after_id = 0
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
    filled the pair. A vote is taken only while the assignment's campaign is open, and,
    when `campaign` is given (the page or API the vote came through), only for an
    assignment of that campaign.
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
    if not assignment.campaign_is_open:
        raise AnnotationError(_("This campaign is closed and takes no more votes."))
    if assignment.status == Assignment.Status.RELEASED:
        raise AnnotationError(_("This item was skipped or returned and takes no vote."))
    if assignment.leased_until <= now and not assignment.pair_is_gold:
        # Counted under the pair's lock: a lease someone takes on it right now is counted too.
        leasing.pair_lock(pair_id=assignment.pair_id)
        others = leasing.slots_taken(pair_id=assignment.pair_id, now=now, other_than=assignment.pk)
        # An expired lease already holds no slot, so nothing needs releasing here.
        if others >= assignment.votes_per_pair:
            raise AnnotationError(_("Your time for this item ran out and others have voted on it."))
    vote = Vote.objects.create(
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
    assignment.status = Assignment.Status.VOTED
    assignment.save(update_fields=["status"])
    _refresh_figures_after_commit(assignment.pair_campaign_id)
    return vote, True


@transaction.atomic
def vote_undo(*, campaign: Campaign, annotator: User, now: datetime | None = None) -> Assignment:
    """Take back the annotator's latest vote in the campaign; its item comes back to them first.

    Only the latest vote can be undone, and only once: after an undo the next
    vote has to be cast before anything else can be undone.
    """
    now = now or timezone.now()
    pending = Assignment.objects.filter(
        pair__campaign=campaign, annotator=annotator, status=Assignment.Status.LEASED, undone_at__isnull=False
    ).exists()
    vote = (
        Vote.objects.select_for_update(of=("self",))
        .filter(campaign=campaign, annotator=annotator, assignment__isnull=False)
        .select_related("assignment")
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
    _refresh_figures_after_commit(campaign.pk)
    return assignment


@transaction.atomic
def assignment_skip(*, token: str, annotator: User, campaign: Campaign | None = None) -> Assignment:
    """Give the item back: its slot returns to the pool and this annotator never sees it again.
    With `campaign`, only an assignment of that campaign.

    Skipping an item already skipped (a double click, a resent request) changes nothing and
    answers the same; an item already voted on is refused (undo the vote instead).
    """
    assignments = Assignment.objects.select_for_update().filter(token=token, annotator=annotator)
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
    return assignment
