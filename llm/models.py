"""Endpoints (how to reach an OpenAI-compatible server) and the response cache."""

from collections.abc import Collection

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from core.models import default_workspace_id
from llm.egress import endpoint_egress_problems
from llm.secrets import key_variable_problem

# Only the *name* of an environment variable is stored: keys never reach the database.
env_var_name = RegexValidator(r"^[A-Z_][A-Z0-9_]*$", _("Name an environment variable, e.g. OPENAI_API_KEY."))


class Endpoint(models.Model):
    """An OpenAI-compatible server (OpenAI, vLLM, Ollama, llama.cpp, a gateway)."""

    # Unique within its workspace (another team may use the same name); the environment's
    # `default` endpoint is no row and is shared by every workspace.
    name = models.CharField(max_length=64)
    # The workspace it belongs to (core/workspaces.py): only its members see it.
    workspace = models.ForeignKey(
        "core.Workspace", on_delete=models.PROTECT, related_name="+", default=default_workspace_id, blank=True
    )
    base_url = models.URLField(max_length=300)
    api_key_env = models.CharField(max_length=64, validators=[env_var_name], default="OPENAI_API_KEY")
    default_model = models.CharField(max_length=128, blank=True)
    # Blank: the server states no limit, and runs find its capacity by themselves (`auto`).
    max_in_flight = models.PositiveSmallIntegerField(null=True, blank=True)
    requests_per_minute = models.PositiveIntegerField(null=True, blank=True)
    # Prompt tokens (estimated before sending) plus the max_tokens asked, per minute, as
    # providers count them; shared, like the two limits above, by every worker and run (llm.budget).
    tokens_per_minute = models.PositiveIntegerField(null=True, blank=True)
    # Each call's deadline, counted from when it is sent (a call waiting for its turn in the
    # window is not sent yet). Blank: long enough for the reply asked (llm.config.call_deadline).
    timeout_seconds = models.FloatField(null=True, blank=True)
    max_retries = models.PositiveSmallIntegerField(default=6)
    # Blank: each kind of call (judging, generation, reference drafting, translation) has its own default.
    max_tokens = models.PositiveIntegerField(null=True, blank=True)
    # Prices only feed the cost estimate on the run page; blank means "unknown".
    input_price_per_million = models.DecimalField(max_digits=10, decimal_places=4, null=True, blank=True)
    output_price_per_million = models.DecimalField(max_digits=10, decimal_places=4, null=True, blank=True)
    # The same through the Batch API; blank: half the live price (what OpenAI and most providers charge).
    batch_input_price_per_million = models.DecimalField(max_digits=10, decimal_places=4, null=True, blank=True)
    batch_output_price_per_million = models.DecimalField(max_digits=10, decimal_places=4, null=True, blank=True)

    class Meta:
        # The table keeps the name it had before the model moved here from judging.
        db_table = "judging_endpoint"
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "name"],
                name="endpoint_name_unique_per_workspace",
                # What a form holding both fields (the admin's) says of a clash.
                violation_error_message=_(
                    "An endpoint of this name exists already in this workspace; choose another name."
                ),
            ),
            models.CheckConstraint(
                condition=Q(max_in_flight__isnull=True) | Q(max_in_flight__gte=1), name="endpoint_in_flight_positive"
            ),
            models.CheckConstraint(
                condition=Q(max_tokens__isnull=True) | Q(max_tokens__gte=1), name="endpoint_max_tokens_positive"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def clean_fields(self, exclude: Collection[str] | None = None) -> None:
        # An empty key variable is allowed although the column says otherwise: it means the
        # endpoint sends no key (a local server needs none). The admin still asks for one.
        if not self.api_key_env:
            exclude = {*(exclude or ()), "api_key_env"}
        super().clean_fields(exclude=exclude)

    def clean(self) -> None:
        problems = {}
        # Only variables meant for API keys: naming SECRET_KEY would send it to base_url.
        if self.api_key_env:
            problems["api_key_env"] = key_variable_problem(self.api_key_env)
        if not any(problems.values()):
            # The key only to the hosts it is bound to, and no internal address (llm.egress).
            problems.update(endpoint_egress_problems(base_url=self.base_url, api_key_env=self.api_key_env))
        problems = {field: problem for field, problem in problems.items() if problem}
        if problems:
            raise ValidationError(problems)


class LLMResponse(models.Model):
    """The response cache: an identical prompt to the same endpoint and model is paid once.

    The key hashes the base URL, model, messages and parameters, and then the workspace whose
    run, generation or curation job sent the call (llm/cache.py); no key or header is stored. Each
    workspace has its own cache: one team's exact prompt is never answered from a row another
    team's work made. A row with no workspace (made before the cache was per workspace and not
    traced to one run's workspace by the migration) is served to nobody. A run that must not be
    answered even from its own workspace's rows skips the cache with fresh calls
    (JudgeRun.fresh_calls, "re-run with fresh calls").
    """

    key = models.CharField(max_length=64, unique=True)
    # The workspace whose work paid for the reply (None: unknown, see above). Part of the key too.
    workspace = models.ForeignKey("core.Workspace", null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    base_url = models.CharField(max_length=300)
    model = models.CharField(max_length=128)
    text = models.TextField()
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    latency_ms = models.PositiveIntegerField(default=0)
    # "length": the reply was cut off by max_tokens (kept, as it was paid for, but never taken
    # for a complete answer).
    finish_reason = models.CharField(max_length=32, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "judging_llmresponse"

    def __str__(self) -> str:
        return f"{self.model} {self.key[:12]}"


class SharedBudget(models.Model):
    """An endpoint's limits (or a run's concurrency) as one budget every worker draws from.

    The row is what a worker locks while it takes slots or spends requests and tokens from its
    buckets (`llm.budget.budget_acquire`); `not_before` holds every worker back after the provider said
    to wait (a 429's Retry-After, an `x-ratelimit-remaining-*` of zero)."""

    key = models.CharField(max_length=400, unique=True)
    not_before = models.DateTimeField(null=True, blank=True)
    touched_at = models.DateTimeField(null=True, blank=True)
    # The requests and tokens per minute as token buckets (llm/pacing.py): their levels and the
    # time they were last filled, the refill clock every worker reads and writes with the row locked.
    paced_at = models.DateTimeField(null=True, blank=True)
    requests_level = models.FloatField(default=0.0)
    tokens_level = models.FloatField(default=0.0)

    def __str__(self) -> str:
        return self.key


class BudgetLease(models.Model):
    """Calls in flight a worker holds of a budget. A lease lapses at `expires_at` unless its
    holder renews it, so the slots of a worker that was killed come back by themselves."""

    budget = models.ForeignKey(SharedBudget, on_delete=models.CASCADE, related_name="leases")
    holder = models.CharField(max_length=100)
    slots = models.PositiveIntegerField(default=0)
    # What the holder would use now: the fair share is computed among holders that want more.
    wanted = models.PositiveIntegerField(default=0)
    expires_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["budget", "holder"], name="budget_lease_one_per_holder")]

    def __str__(self) -> str:
        return f"{self.holder}: {self.slots}"
