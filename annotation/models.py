"""Blind pairwise campaigns, assignments to annotators, and votes."""

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from curation.models import Dataset, Item
from judging.models import CandidateModel


class Campaign(models.Model):
    slug = models.SlugField(unique=True)
    title = models.CharField(max_length=200)
    dataset = models.ForeignKey(Dataset, on_delete=models.PROTECT, related_name="campaigns")
    candidates = models.ManyToManyField(CandidateModel, related_name="campaigns")
    instructions_en = models.TextField(blank=True)
    instructions_zh = models.TextField(blank=True)
    votes_per_pair = models.PositiveSmallIntegerField(default=1)
    lease_seconds = models.PositiveIntegerField(default=600)
    annotators = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="campaigns")
    is_open = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(votes_per_pair__gte=1), name="campaign_overlap_positive")]

    def __str__(self):
        return self.slug


class ComparisonPair(models.Model):
    """Two candidates' answers to one question, to be compared blind."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="pairs")
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="+")
    model_a = models.ForeignKey(CandidateModel, on_delete=models.PROTECT, related_name="+")
    model_b = models.ForeignKey(CandidateModel, on_delete=models.PROTECT, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "item", "model_a", "model_b"], name="pair_unique"),
            models.CheckConstraint(condition=~Q(model_a=F("model_b")), name="pair_of_two_models"),
        ]


class Assignment(models.Model):
    """A pair leased to one annotator, with the side each answer is shown on."""

    class Status(models.TextChoices):
        LEASED = "leased", _("Leased")
        VOTED = "voted", _("Voted")
        RELEASED = "released", _("Released")

    pair = models.ForeignKey(ComparisonPair, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="assignments")
    model_a_on_left = models.BooleanField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.LEASED)
    leased_until = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["pair", "annotator"], name="annotator_sees_pair_once")]


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
    assignment = models.OneToOneField(
        Assignment, null=True, blank=True, on_delete=models.PROTECT, related_name="vote"
    )
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="votes"
    )
    # Imported votes name their annotator as the source file does.
    annotator_label = models.CharField(max_length=100, blank=True)
    comment = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=~Q(model_a=F("model_b")), name="vote_between_two_models"),
            models.CheckConstraint(
                condition=Q(annotator__isnull=False) | ~Q(annotator_label=""), name="vote_names_its_annotator"
            ),
        ]
