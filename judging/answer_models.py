"""Candidate models and the versions of their answers to a dataset (judging/models.py re-exports
them): an AnswerSet per (dataset, model, version), one of them current, and its answers."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from core.models import default_workspace_id
from curation.models import Dataset, Item


class CandidateModel(models.Model):
    """An LLM or service whose answers are evaluated, named as the researcher knows it."""

    # Unique within its workspace: two teams' `gpt-4o` are two models, each with its own provider
    # and family. Its answers are to datasets of the same workspace.
    name = models.CharField(max_length=128)
    workspace = models.ForeignKey(
        "core.Workspace", on_delete=models.PROTECT, related_name="+", default=default_workspace_id, blank=True
    )
    # Who serves the model and which family it belongs to (e.g. "openai" / "gpt-4"): a judge
    # may favour answers of its own family, and the run's diagnostics measure that.
    provider = models.CharField(max_length=64, blank=True)
    family = models.CharField(max_length=64, blank=True)
    # A pseudo-candidate of the injection probe: a constant adversarial answer, never ranked.
    is_probe = models.BooleanField(default=False)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "name"], name="candidate_model_name_unique_per_workspace")
        ]

    def __str__(self):
        return self.name


class AnswerSet(models.Model):
    """One version of a model's answers to a dataset. An upload with `replace` makes a new version
    current; a delete leaves none current; a restore makes an earlier one current again. Older
    versions stay for the runs and campaigns that used them, so their pages, exports, manifests
    and re-runs never change silently."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="answer_sets")
    model = models.ForeignKey(CandidateModel, on_delete=models.PROTECT, related_name="answer_sets")
    version = models.PositiveIntegerField()
    is_current = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class RetiredBy(models.TextChoices):
        REPLACED = "replaced", _("Replaced")
        DELETED = "deleted", _("Deleted")
        RESTORED = "restored", _("An earlier version made current again")

    # When it stopped being current, and by what; None and "" while current.
    retired_at = models.DateTimeField(null=True, blank=True)
    retired_by = models.CharField(max_length=16, choices=RetiredBy.choices, blank=True, default="")

    class Meta:
        ordering = ["dataset", "model", "version"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "model", "version"], name="answer_set_version_unique"),
            models.UniqueConstraint(
                fields=["dataset", "model"], condition=Q(is_current=True), name="one_current_answer_set"
            ),
            models.CheckConstraint(condition=Q(version__gte=1), name="answer_set_version_positive"),
        ]

    def __str__(self):
        return f"{self.model.name} v{self.version} on {self.dataset_id}"


def answer_set_current_or_new(dataset_id: int, model_id: int, created_by=None) -> AnswerSet:
    """The current version of the model's answers on the dataset, or a new one (the next number)
    when there is none. Precondition: inside the transaction that fills it."""
    found = AnswerSet.objects.filter(dataset_id=dataset_id, model_id=model_id, is_current=True).first()
    if found is not None:
        return found
    last = AnswerSet.objects.filter(dataset_id=dataset_id, model_id=model_id).aggregate(last=models.Max("version"))
    return AnswerSet.objects.create(
        dataset_id=dataset_id, model_id=model_id, version=(last["last"] or 0) + 1, created_by=created_by
    )


class CurrentAnswerManager(models.Manager):
    """The answers new work reads: those of each model's current version. Rows made without a
    version join the current one of their (dataset, model), made when there is none; the past
    versions are read through `Answer.all_versions` (judging/answers/versions.py)."""

    def get_queryset(self):
        return super().get_queryset().filter(is_current=True)

    def bulk_create(self, objs, *args, **kwargs):
        objs = list(objs)
        pending = [answer for answer in objs if answer.answer_set_id is None]
        datasets = dict(Item.objects.filter(pk__in={a.item_id for a in pending}).values_list("id", "dataset_id"))
        sets: dict[tuple[int, int], AnswerSet] = {}
        for answer in pending:
            key = (datasets[answer.item_id], answer.model_id)
            if key not in sets:
                sets[key] = answer_set_current_or_new(*key)
            answer.answer_set = sets[key]
        for answer in objs:
            answer.is_current = answer.answer_set.is_current
        return super().bulk_create(objs, *args, **kwargs)

    def create(self, **kwargs):
        return self.bulk_create([self.model(**kwargs)])[0]


class AllVersionsManager(models.Manager):
    """Every version's answers: what runs and campaigns that pinned a version read, and erasure."""


class Answer(models.Model):
    class Origin(models.TextChoices):
        IMPORTED = "imported", _("Imported")
        GENERATED = "generated", _("Generated")
        PROBE = "probe", _("Injection probe")

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="answers")
    model = models.ForeignKey(CandidateModel, on_delete=models.PROTECT, related_name="answers")
    answer_set = models.ForeignKey(AnswerSet, on_delete=models.CASCADE, related_name="answers")
    # Its version's is_current, kept here so that one current answer per (item, model) is a
    # constraint and joins from items and models need no second table.
    is_current = models.BooleanField(default=True)
    text = models.TextField()
    origin = models.CharField(max_length=16, choices=Origin.choices, default=Origin.IMPORTED)
    parameters = models.JSONField(default=dict, blank=True)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    # A generated reply the endpoint stopped at max_tokens: kept so that the work is seen, never
    # taken for a complete answer (runs leave it out unless asked to include it).
    cut_off = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = CurrentAnswerManager()
    all_versions = AllVersionsManager()

    class Meta:
        base_manager_name = "all_versions"
        constraints = [
            models.UniqueConstraint(
                fields=["item", "model"], condition=Q(is_current=True), name="one_answer_per_item_and_model"
            ),
            models.UniqueConstraint(fields=["answer_set", "item"], name="one_answer_per_item_and_set"),
        ]

    def __str__(self):
        return f"{self.model.name} on {self.item_id}"
