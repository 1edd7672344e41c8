"""Studies, participants' submissions and cases, and the datasets curated from them."""

import secrets

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _


class Intent(models.TextChoices):
    """User intents of the URS study (SPEC 3.1). API is scored like Solve Professional Problem."""

    FACTUAL_QA = "factual_qa", _("Factual QA")
    SOLVE_PROBLEM = "solve_professional_problem", _("Solve professional problem")
    TEXT_ASSISTANT = "text_assistant", _("Text assistant")
    ASK_FOR_ADVICE = "ask_for_advice", _("Ask for advice")
    SEEK_CREATIVITY = "seek_creativity", _("Seek creativity")
    LEISURE = "leisure", _("Leisure")
    API = "api", _("Use through APIs")
    OTHER = "other", _("Other")


class Language(models.TextChoices):
    EN = "en", _("English")
    ZH = "zh", _("Chinese")


DEFAULT_SERVICES = [
    "ChatGPT",
    "Gemini/Bard",
    "Copilot/New Bing",
    "Claude",
    "ERNIE Bot",
    "ChatGLM",
    "Qwen",
    "Baichuan",
    "Kimi/Moonshot",
    "Spark",
    "DeepSeek",
    "Character.AI",
    "Other",
]


def default_services() -> list[str]:
    return list(DEFAULT_SERVICES)


def new_resume_token() -> str:
    return secrets.token_urlsafe(24)


class Study(models.Model):
    slug = models.SlugField(unique=True)
    title_en = models.CharField(max_length=200)
    title_zh = models.CharField(max_length=200, blank=True)
    consent_en = models.TextField(blank=True)
    consent_zh = models.TextField(blank=True)
    instructions_en = models.TextField(blank=True)
    instructions_zh = models.TextField(blank=True)
    min_cases = models.PositiveSmallIntegerField(default=5)
    max_cases = models.PositiveSmallIntegerField(default=10)
    services = models.JSONField(default=default_services)
    completion_code = models.CharField(max_length=64, blank=True)
    screenout_code = models.CharField(max_length=64, blank=True)
    is_open = models.BooleanField(default=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "studies"
        constraints = [
            models.CheckConstraint(condition=Q(min_cases__gte=1), name="study_min_cases_positive"),
            models.CheckConstraint(condition=Q(max_cases__gte=F("min_cases")), name="study_max_cases_not_below_min"),
        ]

    def __str__(self):
        return self.slug


class Submission(models.Model):
    """One participant's answers to a study; anonymous except for the Prolific ids they bring."""

    class Status(models.TextChoices):
        IN_PROGRESS = "in_progress", _("In progress")
        SUBMITTED = "submitted", _("Submitted")

    study = models.ForeignKey(Study, on_delete=models.PROTECT, related_name="submissions")
    prolific_pid = models.CharField(max_length=64, blank=True)
    prolific_study_id = models.CharField(max_length=64, blank=True)
    prolific_session_id = models.CharField(max_length=64, blank=True)
    # The only key to an anonymous submission: kept secret, shown once as a resume link.
    resume_token = models.CharField(max_length=64, unique=True, default=new_resume_token)
    language = models.CharField(max_length=8, choices=Language.choices, default=Language.EN)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.IN_PROGRESS)
    consented_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    age_group = models.CharField(max_length=32, blank=True)
    occupation = models.CharField(max_length=200, blank=True)
    country = models.CharField(max_length=64, blank=True)
    usage = models.JSONField(default=dict, blank=True)
    attention_passed = models.BooleanField(null=True, blank=True)
    excluded = models.BooleanField(default=False)
    exclusion_reason = models.CharField(max_length=200, blank=True)

    class Meta:
        constraints = [
            # A Prolific participant finishes a study at most once.
            models.UniqueConstraint(
                fields=["study", "prolific_pid"],
                condition=Q(status="submitted") & ~Q(prolific_pid=""),
                name="one_finished_submission_per_prolific_pid",
            ),
            models.CheckConstraint(
                condition=Q(excluded=False) | ~Q(exclusion_reason=""),
                name="exclusion_has_reason",
            ),
        ]
        indexes = [models.Index(fields=["study", "status"])]

    def __str__(self):
        return f"{self.study.slug} #{self.pk}"


class Case(models.Model):
    """One real conversation a participant reports: the service, the text or link, the intent."""

    class ReviewStatus(models.TextChoices):
        PENDING = "pending", _("Pending review")
        ACCEPTED = "accepted", _("Accepted")
        REJECTED = "rejected", _("Rejected")

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="cases")
    position = models.PositiveSmallIntegerField()
    service = models.CharField(max_length=100)
    conversation = models.TextField(blank=True)
    share_link = models.URLField(max_length=500, blank=True)
    intent = models.CharField(max_length=32, choices=Intent.choices)
    intent_other = models.CharField(max_length=200, blank=True)
    review_status = models.CharField(max_length=16, choices=ReviewStatus.choices, default=ReviewStatus.PENDING)

    class Meta:
        ordering = ["submission", "position"]
        constraints = [
            models.UniqueConstraint(fields=["submission", "position"], name="case_position_unique"),
            models.CheckConstraint(
                condition=~Q(conversation="") | ~Q(share_link=""), name="case_has_conversation_or_link"
            ),
        ]

    def __str__(self):
        return f"case {self.position} of submission {self.submission_id}"


class Dataset(models.Model):
    """A versioned set of questions with references. Frozen versions never change."""

    class Source(models.TextChoices):
        STUDY = "study", _("User study")
        URS = "urs", _("URS")
        ALIGNBENCH = "alignbench", _("AlignBench")
        ALPACAEVAL = "alpacaeval", _("ChineseAlpacaEval")
        OTHER = "other", _("Other")

    name = models.CharField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.OTHER)
    study = models.ForeignKey(Study, null=True, blank=True, on_delete=models.PROTECT, related_name="datasets")
    previous_version = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="next_versions"
    )
    frozen_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return self.name


class Item(models.Model):
    """A question of a dataset, with its reference answer and what it is about."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="items")
    external_id = models.CharField(max_length=64)
    question = models.TextField()
    reference = models.TextField(blank=True)
    intent = models.CharField(max_length=32, choices=Intent.choices, blank=True)
    category = models.CharField(max_length=64, blank=True)
    subcategory = models.CharField(max_length=64, blank=True)
    language = models.CharField(max_length=8, choices=Language.choices, default=Language.EN)
    country = models.CharField(max_length=64, blank=True)
    source_case = models.ForeignKey(Case, null=True, blank=True, on_delete=models.SET_NULL, related_name="items")
    # What a public format carries beyond the columns above (AlignBench evidences, the English
    # source of a ChineseAlpacaEval instruction), kept so an export gives the file back.
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["dataset", "id"]
        constraints = [models.UniqueConstraint(fields=["dataset", "external_id"], name="item_external_id_unique")]

    def __str__(self):
        return f"{self.dataset.name}/{self.external_id}"
