"""Studies, participants' submissions and cases, and the datasets curated from them."""

import secrets

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from core.archiving import Archivable
from core.models import default_workspace_id
from core.workspaces import workspace_ids
from curation.choices import DEFAULT_AGE_GROUPS, DEFAULT_SERVICES, Intent, Language, ProlificDecision
from curation.registry import source_labels
from curation.upload_models import DatasetUpload as DatasetUpload  # registered with the app, defined there


def default_services() -> list[str]:
    return list(DEFAULT_SERVICES)


def new_resume_token() -> str:
    return secrets.token_urlsafe(24)


def default_intents() -> list[str]:
    return list(Intent.values)


def default_age_groups() -> list[str]:
    return list(DEFAULT_AGE_GROUPS)


class StudyStep(models.TextChoices):
    """The questionnaire's pages in order; a submission remembers the furthest one reached."""

    CONSENT = "consent", _("Consent")
    CASES = "cases", _("Your cases")
    ABOUT = "about", _("About you")
    USAGE = "usage", _("Your use of AI assistants")
    REVIEW = "review", _("Review and submit")
    DONE = "done", _("Finished")


class Study(Archivable):
    # The participant link: unique across the server, unlike its title (core/slugs.py).
    slug = models.SlugField(unique=True)
    title_en = models.CharField(max_length=200)
    # The workspace it belongs to (core/workspaces.py): only its members see it.
    workspace = models.ForeignKey(
        "core.Workspace", on_delete=models.PROTECT, related_name="+", default=default_workspace_id, blank=True
    )
    title_zh = models.CharField(max_length=200, blank=True)
    consent_en = models.TextField(blank=True)
    consent_zh = models.TextField(blank=True)
    instructions_en = models.TextField(blank=True)
    instructions_zh = models.TextField(blank=True)
    min_cases = models.PositiveSmallIntegerField(default=5)
    max_cases = models.PositiveSmallIntegerField(default=10)
    services = models.JSONField(default=default_services)
    # Intent values offered in each case's list (Intent.values); "other" adds the own-words field.
    intents = models.JSONField(default=default_intents)
    age_groups = models.JSONField(default=default_age_groups)
    # The instructed item of the satisfaction grid asks for exactly this point of the 1-5 scale.
    attention_answer = models.PositiveSmallIntegerField(default=2)
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
            models.UniqueConstraint(fields=["workspace", "title_en"], name="study_title_unique_per_workspace"),
            models.CheckConstraint(condition=Q(min_cases__gte=1), name="study_min_cases_positive"),
            models.CheckConstraint(condition=Q(max_cases__gte=F("min_cases")), name="study_max_cases_not_below_min"),
            models.CheckConstraint(
                condition=Q(attention_answer__gte=1, attention_answer__lte=5), name="study_attention_answer_on_scale"
            ),
        ]

    def __str__(self):
        return self.slug

    def title(self, language: str) -> str:
        """The title in the participant's language, English when there is no Chinese one."""
        return self.title_zh if language.startswith("zh") and self.title_zh else self.title_en

    def consent(self, language: str) -> str:
        return self.consent_zh if language.startswith("zh") and self.consent_zh else self.consent_en

    def instructions(self, language: str) -> str:
        return self.instructions_zh if language.startswith("zh") and self.instructions_zh else self.instructions_en


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
    # The furthest page reached: resuming returns here.
    current_step = models.CharField(max_length=16, choices=StudyStep.choices, default=StudyStep.CASES)
    # Unvalidated input of a page left mid-way (e.g. by a language switch), keyed by page;
    # shown again on return so nothing typed is lost. Cleared when the page is saved.
    drafts = models.JSONField(default=dict, blank=True)
    # The participant's last write: an unfinished submission idle too long is erased (expire_submissions).
    last_activity_at = models.DateTimeField(default=timezone.now, db_index=True)
    # A signed-in person who filled the study themselves (staff trying it out) never reviews these cases.
    filled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Submissions sharing a Prolific ID count once on the study page until a researcher keeps
    # one of them; this marks the group as seen to.
    duplicate_resolved = models.BooleanField(default=False)
    # The researcher's decision for Prolific on a flagged submission (a speeder, a shared ID):
    # until it is made the submission is in neither the approve nor the reject list.
    prolific_decision = models.CharField(max_length=8, choices=ProlificDecision.choices, blank=True)

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
    # The staff member who entered or imported the case (null for participants): they never review it.
    entered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

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


def dataset_sources() -> list[tuple[str, object]]:
    """A dataset's source choices: a study, each benchmark's imports, or other (a callable: no migration)."""
    return [
        (Dataset.Source.STUDY, Dataset.Source.STUDY.label),
        *source_labels().items(),
        (Dataset.Source.OTHER, Dataset.Source.OTHER.label),
    ]


class Dataset(Archivable):
    """A versioned set of questions with references. Frozen versions never change."""

    class Source(models.TextChoices):
        # A benchmark's imports record its own source (curation/registry.py, dataset_sources).
        STUDY = "study", _("User study")
        OTHER = "other", _("Other")

    name = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    # The workspace it belongs to (core/workspaces.py): a derived dataset keeps its study's or source's.
    workspace = models.ForeignKey(
        "core.Workspace", on_delete=models.PROTECT, related_name="+", default=default_workspace_id, blank=True
    )
    source = models.CharField(max_length=16, choices=dataset_sources, default=Source.OTHER)
    study = models.ForeignKey(Study, null=True, blank=True, on_delete=models.PROTECT, related_name="datasets")
    previous_version = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="next_versions"
    )
    frozen_at = models.DateTimeField(null=True, blank=True)
    # A frozen version records the working dataset it was frozen from and its number there.
    frozen_from = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="frozen_versions"
    )
    version = models.PositiveIntegerField(null=True, blank=True)
    # A frozen version changes only when a participant withdraws (tombstones; README, "Security").
    amended_at = models.DateTimeField(null=True, blank=True)
    withdrawn_items = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "name"], name="dataset_name_unique_per_workspace")]

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
    # Excluded items stay (with the reason) but are never frozen into a version.
    excluded = models.BooleanField(default=False)
    exclusion_reason = models.CharField(max_length=200, blank=True)
    # Set when the participant who wrote it withdrew: the item is a tombstone without their text.
    withdrawn_at = models.DateTimeField(null=True, blank=True)
    # Who created the item (an import or a case); they never review it.
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["dataset", "id"]
        constraints = [models.UniqueConstraint(fields=["dataset", "external_id"], name="item_external_id_unique")]

    def __str__(self):
        return f"{self.dataset.name}/{self.external_id}"


# ---------------------------------------------------------------------------
# Curation: automatic steps, review queues with leases, audit, LLM drafts, versions.
# ---------------------------------------------------------------------------


class ReviewQueue(models.TextChoices):
    QUALITY = "quality", _("Quality and personal information")
    REFERENCE = "reference", _("Reference answers")
    TRANSLATION = "translation", _("Translation calibration")


class CaseCuration(models.Model):
    """What the automatic steps found in a case (URS 3.2.2); the case itself is never changed."""

    case = models.OneToOneField(Case, on_delete=models.CASCADE, related_name="curation")
    turns = models.JSONField(default=list, blank=True)  # [{"role": "user"|"assistant", "text": ...}]
    format_error = models.CharField(max_length=32, blank=True)
    first_question = models.TextField(blank=True)
    # The question as the reviewer left it; starts as the first valid question.
    question = models.TextField(blank=True)
    # The conversation as the reviewer left it (personal information removed); starts as the
    # participant's text. This, never the raw text, is what leaves review: items, exports, API.
    conversation = models.TextField(blank=True)
    language = models.CharField(max_length=8, blank=True)
    duplicate_of = models.ForeignKey(Case, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    duplicate_kind = models.CharField(max_length=8, blank=True)
    duplicate_similarity = models.FloatField(null=True, blank=True)
    # The most similar case of another participant: flagged, not removed.
    similar_case = models.ForeignKey(Case, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    similar_similarity = models.FloatField(null=True, blank=True)
    pii_hints = models.JSONField(default=list, blank=True)  # [{"entity", "start", "end", "score"}] in conversation
    pii_hint_count = models.PositiveIntegerField(default=0)
    excluded = models.BooleanField(default=False)
    exclusion_reason = models.CharField(max_length=200, blank=True)
    processed_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(duplicate_of__isnull=True) | ~Q(duplicate_kind=""), name="case_duplicate_has_kind"
            ),
        ]

    def __str__(self):
        return f"curation of {self.case}"


class CurationJob(models.Model):
    """A background LLM step over many items: reference drafting or translation.

    Progress lives in the per-item rows; the job row only holds a heartbeat and totals so a
    restarted worker knows what to continue, and finished items are never sent again.
    """

    class Kind(models.TextChoices):
        REFERENCE = "reference", _("Reference drafting")
        TRANSLATION = "translation", _("Translation and localisation")

    class Status(models.TextChoices):
        PENDING = "pending", _("Pending")
        RUNNING = "running", _("Running")
        DONE = "done", _("Done")
        FAILED = "failed", _("Failed")

    kind = models.CharField(max_length=16, choices=Kind.choices)
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="curation_jobs")
    model = models.CharField(max_length=128)
    endpoint_name = models.CharField(max_length=64, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    runs = models.PositiveIntegerField(default=0)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    last_error = models.CharField(max_length=300, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Not stored: how the run that returned this job ended ("signal", "unusable" or ""), set by
    # curation.datasets.llm_steps.
    stopped: str

    def __str__(self):
        return f"{self.kind} job {self.pk} on {self.dataset}"


class StepStatus(models.TextChoices):
    PENDING = "pending", _("Pending")
    TRANSLATED = "translated", _("Translated")  # translation only: step 1 done, step 2 to go
    DONE = "done", _("Done")
    FAILED = "failed", _("Failed")


class ReferenceDraft(models.Model):
    """A reference answer drafted by a strong model. Kept even after a person corrects it."""

    job = models.ForeignKey(CurationJob, on_delete=models.CASCADE, related_name="reference_drafts")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="reference_drafts")
    language = models.CharField(max_length=8, choices=Language.choices)
    text = models.TextField(blank=True)
    status = models.CharField(max_length=16, choices=StepStatus.choices, default=StepStatus.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.CharField(max_length=300, blank=True)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["item", "-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["job", "item"], name="reference_draft_once_per_job"),
            models.CheckConstraint(condition=~Q(status="done") | ~Q(text=""), name="reference_draft_done_has_text"),
        ]

    def __str__(self):
        return f"reference draft {self.pk} ({self.status})"


class Translation(models.Model):
    """ChineseAlpacaEval 2.1-2.2: plain translation, then Chinese background replacement."""

    job = models.ForeignKey(CurationJob, on_delete=models.CASCADE, related_name="translations")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="translations")
    source_text = models.TextField()
    translation = models.TextField(blank=True)
    localised = models.TextField(blank=True)
    status = models.CharField(max_length=16, choices=StepStatus.choices, default=StepStatus.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["item", "-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["job", "item"], name="translation_once_per_job"),
            models.CheckConstraint(
                condition=~Q(status="done") | (~Q(translation="") & ~Q(localised="")),
                name="translation_done_has_both_steps",
            ),
        ]

    def __str__(self):
        return f"translation {self.pk} ({self.status})"


class ReviewTaskQuerySet(models.QuerySet):
    @staticmethod
    def own_material(reviewer) -> Q:
        """Tasks on material the reviewer entered or filled in (a study they took part in while
        signed in): their cases and the items made from them, and items they created. The one
        definition of "nobody reviews their own material"."""
        return (
            Q(author=reviewer)
            | Q(case__entered_by=reviewer)
            | Q(case__submission__filled_by=reviewer)
            | Q(item__created_by=reviewer)
            | Q(item__source_case__entered_by=reviewer)
            | Q(item__source_case__submission__filled_by=reviewer)
        )

    def in_workspaces_of(self, person, role: str = "reviewer") -> "ReviewTaskQuerySet":
        """Tasks on cases of studies, or items of datasets, of the workspaces where the person
        holds `role` (every one for a superuser); none of an archived study or dataset."""
        ids = workspace_ids(person, role)
        live = self.exclude(item__dataset__archived_at__isnull=False).exclude(
            case__submission__study__archived_at__isnull=False
        )
        if ids is None:
            return live
        return live.filter(Q(case__submission__study__workspace_id__in=ids) | Q(item__dataset__workspace_id__in=ids))

    def reviewable_by(self, reviewer) -> "ReviewTaskQuerySet":
        """Tasks this reviewer may take: in their workspaces, and not on their own material."""
        return self.in_workspaces_of(reviewer).exclude(self.own_material(reviewer))


class ReviewTask(models.Model):
    """One thing to review in one queue. A lease gives it to one reviewer until it expires."""

    class Status(models.TextChoices):
        OPEN = "open", _("Waiting")
        WAITING = "waiting", _("Waiting for a new draft")
        DONE = "done", _("Done")

    queue = models.CharField(max_length=16, choices=ReviewQueue.choices)
    case = models.ForeignKey(Case, null=True, blank=True, on_delete=models.CASCADE, related_name="review_tasks")
    item = models.ForeignKey(Item, null=True, blank=True, on_delete=models.CASCADE, related_name="review_tasks")
    # Who entered the material under review: never leased to them.
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    leased_to = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    decision = models.CharField(max_length=16, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ReviewTaskQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=(Q(case__isnull=False) & Q(item__isnull=True))
                | (Q(case__isnull=True) & Q(item__isnull=False)),
                name="review_task_one_target",
            ),
            models.CheckConstraint(
                condition=Q(queue="quality", case__isnull=False) | (~Q(queue="quality") & Q(item__isnull=False)),
                name="review_task_target_matches_queue",
            ),
            models.CheckConstraint(
                condition=Q(leased_to__isnull=True, lease_expires_at__isnull=True)
                | Q(leased_to__isnull=False, lease_expires_at__isnull=False),
                name="review_task_lease_has_expiry",
            ),
            models.CheckConstraint(
                condition=Q(status="open") | Q(leased_to__isnull=True), name="review_task_only_open_is_leased"
            ),
            models.UniqueConstraint(
                fields=["queue", "case"], condition=Q(case__isnull=False), name="review_task_case_once"
            ),
            models.UniqueConstraint(
                fields=["queue", "item"], condition=Q(item__isnull=False), name="review_task_item_once"
            ),
        ]
        indexes = [models.Index(fields=["queue", "status", "lease_expires_at"], name="review_task_queue_idx")]

    def __str__(self):
        return f"{self.queue} task {self.pk}"


class ReviewEvent(models.Model):
    """The audit trail: who did what to a case or item, when, and the values before and after."""

    class Action(models.TextChoices):
        PROCESSED = "processed", _("Automatic steps run")
        ACCEPTED = "accepted", _("Accepted")
        EDITED = "edited", _("Edited and accepted")
        REJECTED = "rejected", _("Rejected")
        DRAFTED = "drafted", _("Reference drafted")
        CORRECTED = "corrected", _("Reference corrected")
        REGENERATE = "regenerate", _("Regeneration asked")
        TRANSLATED = "translated", _("Translated and localised")
        KEPT = "kept", _("Localised version kept")
        REVERTED = "reverted", _("Reverted to the plain translation")
        EXCLUDED = "excluded", _("Excluded")
        RELEASED = "released", _("Lease released")
        ADDED = "added", _("Added to a dataset")
        FROZEN = "frozen", _("Frozen into a version")

    queue = models.CharField(max_length=16, choices=ReviewQueue.choices, blank=True)
    case = models.ForeignKey(Case, null=True, blank=True, on_delete=models.CASCADE, related_name="review_events")
    item = models.ForeignKey(Item, null=True, blank=True, on_delete=models.CASCADE, related_name="review_events")
    # Null when the system acted (automatic steps, LLM drafts).
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    action = models.CharField(max_length=16, choices=Action.choices)
    before = models.JSONField(default=dict, blank=True)
    after = models.JSONField(default=dict, blank=True)
    reason = models.TextField(blank=True)
    tags = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(case__isnull=False) | Q(item__isnull=False), name="review_event_has_subject"
            ),
        ]

    def __str__(self):
        return f"{self.action} at {self.created_at:%Y-%m-%d %H:%M}"


class DifficultyFilter(models.Model):
    """AlignBench 2.2: items whose filter-model answers scored highest are the easiest; drop X %."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="difficulty_filters")
    # The judge run whose scores were used, as a plain number: curation does not depend on
    # judging (the judging app computes the scores and hands them over).
    run_number = models.PositiveBigIntegerField(db_column="run_id")
    percent = models.PositiveSmallIntegerField(default=50)
    item_count = models.PositiveIntegerField(default=0)
    excluded_count = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(percent__lte=100), name="difficulty_percent_at_most_100")]

    def __str__(self):
        return f"difficulty filter {self.pk}: top {self.percent}% of run {self.run_number}"


class DifficultyScore(models.Model):
    filter = models.ForeignKey(DifficultyFilter, on_delete=models.CASCADE, related_name="scores")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="difficulty_scores")
    mean_score = models.FloatField()
    judgments = models.PositiveIntegerField()
    excluded = models.BooleanField(default=False)

    class Meta:
        ordering = ["-mean_score", "item_id"]
        constraints = [models.UniqueConstraint(fields=["filter", "item"], name="difficulty_score_once")]

    def __str__(self):
        return f"item {self.item_id}: {self.mean_score:.2f}"
