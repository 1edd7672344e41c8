"""Blind pairwise campaigns, assignments to annotators, and votes."""

import secrets

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from core.archiving import Archivable
from core.models import default_workspace_id
from curation.models import Dataset, Item
from judging.models import CandidateModel


class Campaign(Archivable):
    class Sampling(models.TextChoices):
        # Every pair drawn when the campaign is made, balanced over the model pairs.
        FIXED = "fixed", _("Fixed: pairs drawn at creation")
        # Each new pair chosen from the votes so far, within a vote budget (annotation/adaptive.py).
        ADAPTIVE = "adaptive", _("Adaptive: pairs chosen from the votes so far")

    # The annotators' link /annotate/<slug>/: unique across the server; a taken one is answered
    # with a free proposal, never with whose it is (core/slugs.py).
    slug = models.SlugField(unique=True)
    # Unique within its workspace, like every name a team chooses.
    title = models.CharField(max_length=200)
    # Shown on Chinese pages; the title above while empty.
    title_zh = models.CharField(max_length=200, blank=True, default="")
    dataset = models.ForeignKey(Dataset, on_delete=models.PROTECT, related_name="campaigns")
    # The workspace it belongs to (core/workspaces.py): its dataset's, set when it is made.
    workspace = models.ForeignKey(
        "core.Workspace", on_delete=models.PROTECT, related_name="+", default=default_workspace_id, blank=True
    )
    candidates = models.ManyToManyField(CandidateModel, related_name="campaigns")
    instructions_en = models.TextField(blank=True)
    instructions_zh = models.TextField(blank=True)
    votes_per_pair = models.PositiveSmallIntegerField(default=1)
    lease_seconds = models.PositiveIntegerField(default=600)
    annotators = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="campaigns")
    is_open = models.BooleanField(default=True)
    # How the pairs were drawn, kept so a campaign can be described and re-created.
    question_count = models.PositiveIntegerField(default=0)
    pairs_per_question = models.PositiveSmallIntegerField(default=1)
    seed = models.BigIntegerField(default=0)
    # How many ordinary pairs were drawn (gold pairs come on top). Fixed once the campaign
    # exists, so every annotator's progress reads it instead of counting pairs per request.
    pairs_drawn = models.PositiveIntegerField(default=0)
    # Every `gold_every`-th item an annotator sees is a gold pair (0: no gold pairs).
    gold_every = models.PositiveSmallIntegerField(default=0)
    # Annotators whose gold accuracy falls below this are flagged.
    min_gold_accuracy = models.FloatField(default=0.7)
    # Annotators whose median time per item is below this many seconds are flagged (0: no check).
    min_seconds_per_item = models.FloatField(default=0)
    sampling = models.CharField(max_length=16, choices=Sampling.choices, default=Sampling.FIXED)
    # Adaptive campaigns: the votes on ordinary pairs they may ask for in all (0 for fixed ones),
    # and the share of new pairs drawn uniformly over the model pairs (stats/pairing.py).
    budget = models.PositiveIntegerField(default=0)
    uniform_share = models.FloatField(default=0.2)
    # What the campaign was drawn from, recorded at creation (annotation/manifest.py).
    manifest = models.JSONField(default=dict, blank=True)
    # The version of each candidate's answers its pairs show, pinned when it is made: a replace
    # or a delete of answers since changes nothing annotators see (judging/answers/versions.py).
    answer_sets = models.ManyToManyField("judging.AnswerSet", blank=True, related_name="campaigns")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "title"], name="campaign_title_unique_per_workspace"),
            models.CheckConstraint(condition=Q(votes_per_pair__gte=1), name="campaign_overlap_positive"),
            models.CheckConstraint(
                condition=Q(min_gold_accuracy__gte=0, min_gold_accuracy__lte=1), name="campaign_gold_threshold_range"
            ),
            models.CheckConstraint(condition=Q(lease_seconds__gte=10), name="campaign_lease_at_least_10s"),
            models.CheckConstraint(
                condition=Q(min_seconds_per_item__gte=0, min_seconds_per_item__lte=3600),
                name="campaign_min_seconds_range",
            ),
            models.CheckConstraint(
                condition=Q(sampling="fixed", budget=0) | Q(sampling="adaptive", budget__gte=F("votes_per_pair")),
                name="campaign_budget_fits_sampling",
            ),
            models.CheckConstraint(
                condition=Q(uniform_share__gt=0, uniform_share__lte=1), name="campaign_uniform_share_range"
            ),
        ]

    def __str__(self):
        return self.slug

    @property
    def is_adaptive(self) -> bool:
        return self.sampling == self.Sampling.ADAPTIVE

    @property
    def pairs_planned(self) -> int:
        """The ordinary pairs the campaign asks votes for: those drawn at creation, or as many as
        an adaptive campaign's budget allows (it draws them as annotators come)."""
        return self.budget // self.votes_per_pair if self.is_adaptive else self.pairs_drawn

    @property
    def title_shown(self) -> str:
        """The title in the reader's language: the Chinese one on Chinese pages, when there is one."""
        return self.title_zh if self.title_zh and (get_language() or "").startswith("zh") else self.title


class ComparisonPair(models.Model):
    """Two candidates' answers to one question, to be compared blind."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="pairs")
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="+")
    model_a = models.ForeignKey(CandidateModel, on_delete=models.PROTECT, related_name="+")
    model_b = models.ForeignKey(CandidateModel, on_delete=models.PROTECT, related_name="+")
    # Gold pairs have a known answer; every annotator sees them and they stay out of the statistics.
    is_gold = models.BooleanField(default=False)
    gold_winner = models.CharField(max_length=20, blank=True)
    # Pairs of adaptive campaigns: the probability with which this model pair was the one chosen
    # when the pair was drawn, and which part of the design chose it ("uniform" or "information",
    # stats/pairing.py). Null and empty for pairs drawn at creation and for gold pairs.
    choice_probability = models.FloatField(null=True, blank=True)
    chosen_by = models.CharField(max_length=12, blank=True, default="")
    # Kept with every vote and undo (annotation/services.py) so that finding a pair with room
    # never counts a campaign's votes: the votes on this pair, and whether it is an ordinary pair
    # still short of the campaign's votes per pair (the partial index below holds only those).
    votes_cast = models.PositiveIntegerField(default=0)
    needs_votes = models.BooleanField(default=True)
    # Adaptive campaigns: the annotator whose request drew the pair (annotation/adaptive.py: an
    # annotator who skips may hold only a few drawn pairs that nobody has voted on yet).
    drawn_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    # Not columns: both answers' texts, read along with the pair by annotation.leasing and
    # annotation.services (None when a model has no answer); set only on the pairs they return.
    answer_a_text: str | None
    answer_b_text: str | None

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "item", "model_a", "model_b", "is_gold"], name="pair_unique"),
            models.CheckConstraint(condition=~Q(model_a=F("model_b")), name="pair_of_two_models"),
            models.CheckConstraint(
                condition=Q(is_gold=False, gold_winner="")
                | Q(is_gold=True, gold_winner__in=["model_a", "model_b", "tie"]),
                name="gold_pair_has_winner",
            ),
            models.CheckConstraint(
                condition=Q(choice_probability__isnull=True, chosen_by="")
                | Q(
                    choice_probability__isnull=False,
                    choice_probability__gt=0,
                    choice_probability__lte=1,
                    chosen_by__in=["uniform", "information"],
                ),
                name="pair_choice_recorded_whole",
            ),
            models.CheckConstraint(condition=Q(is_gold=False) | Q(needs_votes=False), name="gold_pair_needs_no_slot"),
        ]
        indexes = [
            # The lease lookup walks this in id order and stops at the first pair with room.
            models.Index(
                fields=["campaign", "id"], condition=Q(needs_votes=True, is_gold=False), name="pair_needs_votes_idx"
            ),
            models.Index(
                fields=["campaign", "drawn_by"],
                condition=Q(votes_cast=0, drawn_by__isnull=False),
                name="pair_drawn_unvoted_idx",
            ),
        ]

    def __str__(self):
        return f"pair {self.pk} of campaign {self.campaign_id}"


def new_assignment_token() -> str:
    return secrets.token_urlsafe(18)


class Assignment(models.Model):
    """A pair leased to one annotator, with the side each answer is shown on.

    Annotators only ever see `token`, a random string per assignment: neither the
    pair's id nor anything else that maps to the models reaches their pages.
    """

    class Status(models.TextChoices):
        LEASED = "leased", _("Leased")
        VOTED = "voted", _("Voted")
        RELEASED = "released", _("Released")

    pair = models.ForeignKey(ComparisonPair, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="assignments")
    token = models.CharField(max_length=32, unique=True, default=new_assignment_token)
    model_a_on_left = models.BooleanField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.LEASED)
    leased_until = models.DateTimeField()
    # Set when the annotator took back their vote; the pair then waits for their new vote,
    # and no earlier vote can be undone.
    undone_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    # Not columns: read along with the assignment by annotation.leasing's SQL and set only on the
    # assignments it returns. Its pair's answers' texts (held_lease, and assignment_next) ...
    answer_a_text: str | None
    answer_b_text: str | None
    # ... and, for assignment_to_vote_on, what a vote copies from its pair and campaign
    # (the flags are 0 or 1 on SQLite).
    pair_item_id: int
    pair_model_a_id: int
    pair_model_b_id: int
    pair_campaign_id: int
    pair_is_gold: int
    pair_choice_probability: float | None
    votes_per_pair: int

    class Meta:
        constraints = [models.UniqueConstraint(fields=["pair", "annotator"], name="annotator_sees_pair_once")]
        indexes = [
            models.Index(fields=["pair", "status", "leased_until"], name="assignment_slot_idx"),
            models.Index(fields=["annotator", "status"], name="assignment_annotator_idx"),
        ]

    def __str__(self):
        return f"assignment {self.pk} ({self.status})"


class Winner(models.TextChoices):
    MODEL_A = "model_a", _("Model A")
    MODEL_B = "model_b", _("Model B")
    TIE = "tie", _("Tie")
    CANNOT_DETERMINE = "cannot_determine", _("Cannot determine")


class Vote(models.Model):
    """A human judgement between two answers, from a campaign or imported from elsewhere."""

    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="votes")
    model_a = models.ForeignKey(CandidateModel, on_delete=models.PROTECT, related_name="+")
    model_b = models.ForeignKey(CandidateModel, on_delete=models.PROTECT, related_name="+")
    winner = models.CharField(max_length=20, choices=Winner.choices)
    campaign = models.ForeignKey(Campaign, null=True, blank=True, on_delete=models.PROTECT, related_name="votes")
    assignment = models.OneToOneField(Assignment, null=True, blank=True, on_delete=models.PROTECT, related_name="vote")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="votes"
    )
    # Imported votes name their annotator as the source file does.
    annotator_label = models.CharField(max_length=100, blank=True)
    comment = models.TextField(blank=True, max_length=2000)
    # The probability with which an adaptive campaign chose this model pair (its pair's
    # choice_probability, copied when the vote is cast); null for other votes.
    choice_probability = models.FloatField(null=True, blank=True)
    # Time from the lease to the vote, for quality checks; null for imported votes.
    seconds_spent = models.FloatField(null=True, blank=True)
    # Imported votes: a digest of the source line, so importing a file again adds nothing twice.
    source_key = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # With the time: an annotator's latest vote (undo) is read from the index's end.
        indexes = [models.Index(fields=["campaign", "annotator", "created_at"], name="vote_campaign_annotator_at_idx")]
        constraints = [
            models.CheckConstraint(condition=~Q(model_a=F("model_b")), name="vote_between_two_models"),
            models.CheckConstraint(
                condition=Q(annotator__isnull=False) | ~Q(annotator_label=""), name="vote_names_its_annotator"
            ),
            models.UniqueConstraint(fields=["source_key"], condition=~Q(source_key=""), name="imported_vote_once"),
        ]

    def __str__(self):
        return f"vote {self.pk}: {self.winner}"


class AnnotatorTally(models.Model):
    """One annotator's counts in a campaign, kept with every vote, undo and skip
    (annotation/services.py, annotation/upkeep.py), so that their progress and their turn for a
    gold pair are read from one row instead of counted from their assignments."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    # Items voted on (assignments VOTED), gold pairs included, and how many of them were gold.
    voted = models.PositiveIntegerField(default=0)
    gold_voted = models.PositiveIntegerField(default=0)
    # Items skipped or given back (assignments RELEASED).
    released = models.PositiveIntegerField(default=0)
    # The highest ordinary pair id leased to them: their lease lookup starts after it, so it does
    # not walk again the pairs they already had that still wait for others' votes.
    last_pair_id = models.PositiveBigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "annotator"], name="annotator_tally_once"),
            models.CheckConstraint(condition=Q(gold_voted__lte=F("voted")), name="annotator_tally_gold_within"),
        ]

    def __str__(self):
        return f"tally of {self.annotator_id} in campaign {self.campaign_id}"


class CampaignTally(models.Model):
    """The votes on a campaign's ordinary pairs by everyone, kept with every vote and undo in
    TALLY_SHARDS rows (the voter's id picks the row), so that concurrent votes seldom wait on one
    row; the progress line sums them."""

    TALLY_SHARDS = 8

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    shard = models.PositiveSmallIntegerField()
    votes = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "shard"], name="campaign_tally_once"),
            models.CheckConstraint(condition=Q(shard__gte=0, shard__lt=8), name="campaign_tally_shard_range"),
        ]

    def __str__(self):
        return f"tally {self.shard} of campaign {self.campaign_id}"


class ModelPairSlots(models.Model):
    """Adaptive campaigns: for each pair of candidates (ids in order), the questions both answered
    (`available`) and how many of them the campaign's pairs already show with the two (`drawn`,
    gold pairs included), so that a draw knows at once which model pairs have a question left."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    model_a = models.ForeignKey(CandidateModel, on_delete=models.CASCADE, related_name="+")
    model_b = models.ForeignKey(CandidateModel, on_delete=models.CASCADE, related_name="+")
    available = models.PositiveIntegerField()
    drawn = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "model_a", "model_b"], name="model_pair_slots_once"),
            models.CheckConstraint(condition=Q(model_a__lt=F("model_b")), name="model_pair_slots_in_order"),
            models.CheckConstraint(condition=Q(drawn__lte=F("available")), name="model_pair_slots_within"),
        ]

    def __str__(self):
        return f"{self.model_a_id}-{self.model_b_id} of campaign {self.campaign_id}"


class StoredFigures(models.Model):
    """Statistics as the results page, the API and the exports show them: Bradley-Terry with
    bootstrap intervals, agreement, alignment with a judge run and annotator quality, for a
    campaign (what="campaign") or all votes of a dataset (what="bt", "agreement"). Computed
    by a background task and stored with the inputs they came from (core/figures.py says why);
    one row per scope and parameters (`key`)."""

    class What(models.TextChoices):
        CAMPAIGN = "campaign", _("Campaign results")
        DESIGN = "design", _("Pairing design of an adaptive campaign")
        STYLE = "style", _("Style-controlled Bradley-Terry of a campaign")
        RELIABILITY = "reliability", _("Bradley-Terry with each annotator's reliability, of a campaign")
        BT = "bt", _("Bradley-Terry over a dataset's votes")
        AGREEMENT = "agreement", _("Agreement over a dataset's votes")

    key = models.CharField(max_length=200, unique=True)
    what = models.CharField(max_length=16, choices=What.choices)
    campaign = models.ForeignKey(Campaign, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    dataset = models.ForeignKey(Dataset, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    run = models.ForeignKey("judging.JudgeRun", null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    rounds = models.PositiveIntegerField(default=1000)
    seed = models.BigIntegerField(default=0)
    payload = models.JSONField(default=dict)
    # What the figures came from: vote count and newest vote id, the judge run's counts.
    inputs = models.JSONField(default=dict)
    computed_at = models.DateTimeField(null=True, blank=True)
    refresh_queued_at = models.DateTimeField(null=True, blank=True)
    # Seconds the last computation took: the next refresh waits a few times that
    # (core.figures.refresh_delay), so a long one never holds a worker without pause.
    compute_seconds = models.FloatField(default=0)

    class Meta:
        verbose_name_plural = "stored figures"
        constraints = [
            models.CheckConstraint(
                condition=Q(what__in=["campaign", "style", "design", "reliability"], campaign__isnull=False)
                | (~Q(what__in=["campaign", "style", "design", "reliability"]) & Q(dataset__isnull=False)),
                name="stored_figures_have_a_scope",
            ),
        ]

    def __str__(self):
        return self.key
