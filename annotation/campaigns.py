"""Campaign design and creation: a campaign's checks, its pairs drawn at creation (fixed
sampling) or its design (adaptive sampling), and its gold pairs. The annotator's loop (leases,
votes, undo, skip) is annotation/services.py."""

import random
import re
from collections import Counter
from collections.abc import Sequence
from itertools import combinations

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from annotation import leasing
from annotation.design import DESIGN_ROUNDS, DESIGN_WHAT
from annotation.errors import AnnotationError, CampaignSlugTaken, CampaignTitleTaken
from annotation.figures import figures_read
from annotation.manifest import campaign_manifest_build
from annotation.models import Campaign, ComparisonPair, ModelPairSlots, Winner
from annotation.selectors import campaign_parts_by_name, questions_answered
from core.archiving import ArchivedError, refuse_if_archived
from core.audit import AuditAction, audit_record
from core.constraints import constraint_answered
from core.roles import Role
from core.slugs import SlugTaken, slug_check_free
from core.workspaces import holds, in_workspace
from curation.models import Dataset, Item
from judging.models import Answer, AnswerSet, CandidateModel

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
# The annotators' link's slug: at most this long (the forms' and the API's limit).
CAMPAIGN_SLUG_LENGTH = 50


def campaign_title_check(*, title: str, workspace_id: int | None, exclude_pk: int | None = None) -> None:
    """CampaignTitleTaken when another campaign of the workspace has this title; what other
    workspaces hold is never consulted."""
    taken = in_workspace(Campaign.objects.all(), workspace_id).filter(title=title)
    if exclude_pk is not None:
        taken = taken.exclude(pk=exclude_pk)
    if taken.exists():
        raise campaign_title_taken(title)


TITLE_CONSTRAINT = "campaign_title_unique_per_workspace"


def campaign_title_taken(title: str) -> CampaignTitleTaken:
    return CampaignTitleTaken(
        _("A campaign titled %(title)s exists already in this workspace; choose another title.")
        % {"title": repr(title)}
    )


def _names_free(*, slug: str, title: str, workspace_id: int | None) -> None:
    """The slug free across the server (else a free proposal, core/slugs.py), the title free in
    the workspace."""
    try:
        slug_check_free(Campaign, slug, max_length=CAMPAIGN_SLUG_LENGTH)
    except SlugTaken as taken:
        raise CampaignSlugTaken(taken.message, proposal=taken.proposal) from None
    campaign_title_check(title=title.strip(), workspace_id=workspace_id)


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
    if not (title or "").strip() or len(title.strip()) > 200:
        raise AnnotationError(_("A campaign needs a title of 1 to 200 characters."))
    _names_free(slug=slug, title=title, workspace_id=workspace_id)
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
    refuse_if_archived(dataset)
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
    for model in candidates:
        # Another workspace's model, handed over by code: unknown here, as the pages would say.
        if model.workspace_id != dataset.workspace_id:
            raise AnnotationError(_("Unknown candidate model %(name)s.") % {"name": repr(model.name)})
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
        # A savepoint: a campaign with the same title or slug created meanwhile becomes a clear error.
        with constraint_answered(Campaign, TITLE_CONSTRAINT, lambda: campaign_title_taken(title)):
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
    except IntegrityError:
        # The slug taken meanwhile (a link, unique across the server): answered with a free proposal.
        _names_free(slug=slug, title=title, workspace_id=dataset.workspace_id)
        raise
    campaign.candidates.set(candidates)
    campaign.annotators.set(annotators)
    # Every model's current answers on the dataset (gold pairs may show any of them).
    campaign.answer_sets.set(AnswerSet.objects.filter(dataset=dataset, is_current=True))
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
        _model_pair_slots_create(campaign, candidates, answered)
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


def _model_pair_slots_create(campaign: Campaign, candidates, answered: dict[int, set[int]]) -> None:
    """An adaptive campaign's questions per model pair (annotation.models.ModelPairSlots), those
    its gold pairs show counted as drawn; refuses a budget asking for more distinct pairs (a
    question with two of its models) than there are, naming the number."""
    available: Counter = Counter()
    for models in answered.values():
        available.update(combinations(sorted(models), 2))
    used = {
        (item_id, min(a, b), max(a, b))
        for item_id, a, b in campaign.pairs.values_list("item_id", "model_a_id", "model_b_id")
        if {a, b} <= answered.get(item_id, set())
    }
    drawn = Counter((a, b) for _item, a, b in used)
    distinct = sum(available.values()) - len(used)
    if campaign.budget > distinct * campaign.votes_per_pair:
        raise AnnotationError(
            _(
                "These candidates and questions make %(pairs)d distinct pairs (a question with two of its "
                "models), %(votes)d votes at %(per)d per pair; a budget of %(budget)d votes asks for more."
            )
            % {
                "pairs": distinct,
                "votes": distinct * campaign.votes_per_pair,
                "per": campaign.votes_per_pair,
                "budget": campaign.budget,
            }
        )
    ModelPairSlots.objects.bulk_create(
        ModelPairSlots(campaign=campaign, model_a_id=a, model_b_id=b, available=available[(a, b)], drawn=drawn[(a, b)])
        for a, b in combinations(sorted(model.pk for model in candidates), 2)
    )


@transaction.atomic
def campaign_create_by_names(
    *,
    dataset: str,
    models: list[str],
    annotators: Sequence[str] = (),
    question_count: int | None = None,
    slug: str,
    title: str = "",
    workspace_id: int | None = None,
    **design,
) -> Campaign:
    """campaign_create for the command line and the API, where things are named: the dataset,
    models and annotators by name, every eligible question when `question_count` is None, and
    the slug as title when none is given. Unknown names raise AnnotationError, all at once."""
    # The person creating it (the API) finds only their workspaces' datasets; the operator all.
    found, candidates, people = campaign_parts_by_name(
        dataset=dataset,
        models=list(models),
        annotators=list(annotators),
        user=design.get("created_by"),
        workspace_id=workspace_id,
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
    pinned = set(campaign.answer_sets.values_list("model_id", flat=True))
    campaign.answer_sets.add(
        *AnswerSet.objects.filter(dataset_id=item.dataset_id, model__in=[model_a, model_b], is_current=True).exclude(
            model_id__in=pinned
        )
    )
    shown = ComparisonPair.objects.filter(
        campaign=campaign, item=item, model_a__in=[model_a, model_b], model_b__in=[model_a, model_b]
    )
    if campaign.is_adaptive and not shown.exists():
        # Its question with these two models can no longer be drawn (no-op during campaign_create,
        # which counts its gold pairs once they are all added).
        leasing.model_pair_drawn(campaign_id=campaign.pk, model_ids=(model_a.pk, model_b.pk))
    return ComparisonPair.objects.create(
        campaign=campaign,
        item=item,
        model_a=model_a,
        model_b=model_b,
        is_gold=True,
        gold_winner=winner,
        # Every annotator sees a gold pair: it has no slots to fill.
        needs_votes=False,
    )


def campaign_archive_check(campaign: Campaign, archived: bool) -> None:
    """A campaign is not restored while its dataset is archived (it would come back into the
    lists and the annotators' queues without it). Archiving is always possible: votes already
    leased are refused from then on."""
    if not archived and campaign.dataset.archived_at is not None:
        raise ArchivedError(
            _("Campaign %(slug)s's dataset %(dataset)s is archived; restore the dataset first.")
            % {"slug": campaign.slug, "dataset": campaign.dataset.name}
        )
