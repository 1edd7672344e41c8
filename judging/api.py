"""REST API of judge runs: list, detail with progress, leaderboard, resume, cancel; templates."""

import json

from django.http import Http404
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.generics import ListAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from core.archive_views import ArchiveApi
from core.archiving import refuse_if_archived
from judging.access import ResearcherPermission
from judging.benchmarks.registry import benchmarks
from judging.dispatch import run_enqueue
from judging.engine.queue import run_cancel
from judging.errors import RunNotFound, RunStartConflict
from judging.models import JudgeRun
from judging.prompts.building import TEMPLATE_SETS
from judging.results.diagnostics_serializers import RunDiagnosticsSerializer
from judging.results.figures import run_figures_read
from judging.results.selectors import GROUPS, run_get, run_list_with_progress, run_progress, template_list
from judging.runs.archive import run_archive_check
from judging.runs.creation import run_spec_by_names, run_start_once
from judging.runs.lookup import run_by_id
from judging.runs.manifest import run_manifest
from judging.runs.records import run_change_record
from judging.runs.resume import run_resume
from judging.runs.spec import DEFAULT_SHARD_SIZE, MAX_SYSTEM_PROMPT_CHARS, MAX_TOKENS_RANGE, TEMPERATURE_RANGE

# `POST /api/runs/` starts one run per key and person (judging/runs/creation.py, run_start_once).
IDEMPOTENCY_HEADER = "Idempotency-Key"
MAX_IDEMPOTENCY_KEY = 200


def _figures_response(data, figures: dict) -> Response:
    """Stored figures with when they were computed and whether newer judgments are waiting."""
    response = Response(data)
    response["X-Figures-Computed-At"] = figures["computed_at"].isoformat() if figures["computed_at"] else ""
    response["X-Figures-Stale"] = "1" if figures["stale"] else "0"
    return response


def _run(lookup, run_id: int, **options) -> JudgeRun:
    """The run through `lookup` (run_by_id, or the run_get selector), or a 404 naming the id."""
    try:
        return lookup(run_id=run_id, **options)
    except RunNotFound as error:
        raise NotFound(str(error)) from None


class BatchRowSerializer(serializers.Serializer):
    class Meta:
        ref_name = "BatchProgressRow"

    id = serializers.IntegerField()
    batch_id = serializers.CharField(allow_blank=True, help_text="The provider's id of the batch, once made.")
    status = serializers.CharField(help_text="preparing, uploaded, submitted (at the provider), collected or settled.")
    status_label = serializers.CharField()
    provider_status = serializers.CharField(
        allow_blank=True, help_text="As the provider says: validating, in_progress, finalizing, completed, ..."
    )
    requests = serializers.IntegerField()
    completed = serializers.IntegerField()
    failed = serializers.IntegerField()
    waiting_seconds = serializers.IntegerField(help_text="Since the batch was made (until it ended).")
    duplicate_lines = serializers.IntegerField(help_text="Result lines naming a request a second time (ignored).")
    unknown_lines = serializers.IntegerField(help_text="Result lines naming none of the batch's requests (ignored).")
    error = serializers.CharField(allow_blank=True)


class BatchesProgressSerializer(serializers.Serializer):
    class Meta:
        ref_name = "BatchesProgress"

    batches = BatchRowSerializer(many=True)
    open = serializers.IntegerField(help_text="Batches not collected yet.")
    requests = serializers.IntegerField()
    completed = serializers.IntegerField()
    failed = serializers.IntegerField()
    duplicate_lines = serializers.IntegerField()
    unknown_lines = serializers.IntegerField()
    waiting_seconds = serializers.IntegerField(help_text="The longest wait among the open batches.")


class ProgressSerializer(serializers.Serializer):
    class Meta:
        ref_name = "RunProgress"

    status = serializers.CharField()
    error = serializers.CharField(help_text="Why the run stopped or failed, and how to continue.")
    total = serializers.IntegerField()
    done = serializers.IntegerField()
    remaining = serializers.IntegerField()
    parse_failures = serializers.IntegerField()
    call_failures = serializers.IntegerField()
    cut_off = serializers.IntegerField(help_text="Replies cut off by max_tokens: kept, never scored.")
    cached = serializers.IntegerField()
    in_flight = serializers.IntegerField()
    window = serializers.IntegerField(help_text="Calls the workers' adaptive windows allow in flight now.")
    concurrency = serializers.CharField(help_text="The run's limit across all workers, or auto.")
    overloads = serializers.IntegerField(help_text="429, 503, 504 answers and timeouts that shrank the window.")
    workers = serializers.IntegerField()
    waiting_for_worker = serializers.BooleanField(help_text="Running, but no worker holds the run.")
    rate_per_second = serializers.FloatField()
    seconds_per_call = serializers.FloatField(allow_null=True, help_text="1 / rate; null before the first reply.")
    eta_seconds = serializers.IntegerField(allow_null=True)
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    estimated_cost = serializers.FloatField(allow_null=True)
    shards = serializers.DictField(child=serializers.IntegerField())
    stale_shards = serializers.IntegerField()
    percent = serializers.FloatField()
    live = serializers.BooleanField(help_text="Pending or running: rate, ETA, in flight and window apply.")
    resumable = serializers.BooleanField(help_text="A resume would send something: units left without a reply.")
    batch = serializers.BooleanField(help_text="Sent through the provider's Batch API.")
    batches = BatchesProgressSerializer(allow_null=True, help_text="A batch run's batches; null for a live run.")


class RunDetailSerializer(serializers.Serializer):
    class Meta:
        ref_name = "RunDetail"

    id = serializers.IntegerField()
    dataset = serializers.CharField(source="dataset.name")
    mode = serializers.CharField()
    judge_model = serializers.CharField()
    endpoint = serializers.CharField(source="endpoint.name", allow_null=True, default=None)
    reference_model = serializers.CharField(source="reference_model.name", allow_null=True, default=None)
    candidates = serializers.SerializerMethodField()
    templates = serializers.SerializerMethodField()
    both_orders = serializers.BooleanField()
    seed = serializers.IntegerField()
    concurrency = serializers.IntegerField(help_text="Calls in flight across all workers (the bound, when auto).")
    concurrency_auto = serializers.BooleanField(help_text="The window finds the server's capacity by itself.")
    timeout_seconds = serializers.FloatField(allow_null=True, help_text="Blank: the endpoint's.")
    temperature = serializers.FloatField(allow_null=True, help_text="null: no temperature was sent (server default).")
    max_tokens = serializers.IntegerField(allow_null=True)
    system_prompt = serializers.CharField(allow_blank=True, help_text="Sent before each judge prompt; empty: none.")
    batch = serializers.BooleanField(help_text="Sent through the provider's Batch API.")
    status = serializers.CharField()
    error = serializers.CharField()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    progress = serializers.SerializerMethodField()

    def get_candidates(self, run) -> list[str]:
        return [model.name for model in run.candidates.all()]

    @extend_schema_field(ProgressSerializer)
    def get_progress(self, run):
        return ProgressSerializer(run_progress(run=run)).data

    def get_templates(self, run) -> list[str]:
        return [f"{t.name} v{t.version}" for t in run.templates.all()]


class RunListApi(ListAPIView):
    permission_classes = [ResearcherPermission]

    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "Run"

        id = serializers.IntegerField()
        dataset = serializers.CharField(source="dataset.name")
        mode = serializers.CharField()
        judge_model = serializers.CharField()
        reference_model = serializers.CharField(source="reference_model.name", allow_null=True, default=None)
        status = serializers.CharField()
        judgment_count = serializers.IntegerField()
        failure_count = serializers.IntegerField()
        created_at = serializers.DateTimeField()
        finished_at = serializers.DateTimeField(allow_null=True)

    serializer_class = OutputSerializer

    def get_queryset(self):
        return run_list_with_progress(user=self.request.user)

    class InputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "RunCreate"

        dataset = serializers.CharField(max_length=100)
        # A plain string (RunSpec names a wrong one): the diagnostics' `kind` already names this choice set.
        mode = serializers.CharField(max_length=16, help_text="pointwise or pairwise.")
        judge_model = serializers.CharField(max_length=128)
        models = serializers.ListField(child=serializers.CharField(max_length=128), min_length=1, max_length=200)
        reference_model = serializers.CharField(max_length=128, required=False, allow_null=True, default=None)
        endpoint = serializers.CharField(
            max_length=100, required=False, allow_null=True, default=None, help_text="Absent: the default endpoint."
        )
        template_set = serializers.ChoiceField(choices=list(TEMPLATE_SETS), required=False, allow_null=True)
        # A number or "auto" (RunSpec names a wrong one); JSON numbers arrive as their text.
        concurrency = serializers.CharField(
            max_length=8,
            required=False,
            allow_null=True,
            default=None,
            help_text="Calls in flight across all workers: a number, or auto. Absent: the endpoint's stated limit, "
            "else auto.",
        )
        timeout_seconds = serializers.FloatField(
            min_value=0.1, required=False, allow_null=True, default=None, help_text="Absent: the endpoint's."
        )
        shard_size = serializers.IntegerField(min_value=1, max_value=100_000, default=DEFAULT_SHARD_SIZE)
        both_orders = serializers.BooleanField(default=False)
        seed = serializers.IntegerField(min_value=0, max_value=2**31 - 1, required=False, allow_null=True)
        temperature = serializers.FloatField(
            min_value=TEMPERATURE_RANGE[0],
            max_value=TEMPERATURE_RANGE[1],
            allow_null=True,
            default=0.0,
            help_text="null: no temperature is sent, so the server's default applies.",
        )
        max_tokens = serializers.IntegerField(
            min_value=MAX_TOKENS_RANGE[0], max_value=MAX_TOKENS_RANGE[1], required=False, allow_null=True
        )
        system_prompt = serializers.CharField(
            max_length=MAX_SYSTEM_PROMPT_CHARS,
            required=False,
            allow_blank=True,
            trim_whitespace=False,
            default="",
            help_text="Sent as a system message before each judge prompt, exactly as given.",
        )
        exclude_missing_references = serializers.BooleanField(
            default=False,
            help_text="Leave out the items whose template judges against a reference they lack (recorded in the "
            "manifest). Without it such items refuse the run with a 400 saying how many.",
        )
        include_cut_off = serializers.BooleanField(
            default=False,
            help_text="Judge answers cut off at max_tokens too (kept, marked cut off; left out by default). "
            "Recorded in the manifest.",
        )
        batch = serializers.BooleanField(
            default=False,
            help_text="Send the calls through the endpoint's Batch API (about half price, results within 24 h). An "
            "endpoint without the Batch API is refused with a 400 naming it, before anything is made.",
        )

    @extend_schema(
        request=InputSerializer,
        parameters=[
            OpenApiParameter(
                IDEMPOTENCY_HEADER,
                str,
                OpenApiParameter.HEADER,
                required=False,
                description="Any text up to 200 characters. The same key from the same person starts one run: "
                "asked again with the same values, the answer is that run (200); with other values, a 409 naming them.",
            )
        ],
        responses={
            201: RunDetailSerializer,
            200: OpenApiResponse(RunDetailSerializer, description="The run this Idempotency-Key already started."),
            409: OpenApiResponse(description="The Idempotency-Key already started a run with other values."),
        },
    )
    def post(self, request):
        """Create a judge run and queue its shards for the workers; with an Idempotency-Key, once."""
        key = request.headers.get(IDEMPOTENCY_HEADER, "")
        if len(key) > MAX_IDEMPOTENCY_KEY or not key.isprintable():
            return Response(
                {"detail": _("The Idempotency-Key header must be printable text of at most 200 characters.")},
                status=status.HTTP_400_BAD_REQUEST,
            )
        given = self.InputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        asked = json.loads(json.dumps(given.validated_data, default=str))
        try:
            run, made = run_start_once(
                spec=run_spec_by_names(**given.validated_data, user=request.user),
                created_by=request.user,
                start_key=f"api:{key}" if key else "",
                start_request=asked,
            )
        except RunStartConflict as conflict:
            return Response(
                {"detail": str(conflict), "fields": conflict.fields, "run": conflict.run.pk},
                status=status.HTTP_409_CONFLICT,
            )
        if made:
            run_enqueue(run=run)
            run_change_record(actor=request.user, run=run, change="started", details={"calls": run.total, "via": "api"})
        response = Response(
            RunDetailSerializer(run_get(run_id=run.pk)).data,
            status=status.HTTP_201_CREATED if made else status.HTTP_200_OK,
        )
        if key:
            response["Idempotent-Replayed"] = "false" if made else "true"
        return response


class RunDetailApi(APIView):
    permission_classes = [ResearcherPermission]
    OutputSerializer = RunDetailSerializer

    @extend_schema(responses=OutputSerializer)
    def get(self, request, run_id: int):
        return Response(self.OutputSerializer(_run(run_get, run_id, user=request.user)).data)


class RunProgressApi(APIView):
    permission_classes = [ResearcherPermission]

    @extend_schema(responses=ProgressSerializer)
    def get(self, request, run_id: int):
        run = _run(run_by_id, run_id, user=request.user, queryset=JudgeRun.objects.select_related("endpoint"))
        return Response(ProgressSerializer(run_progress(run=run)).data)


class RunLeaderboardApi(APIView):
    """Pointwise rows: group, column, model, mean, low, high, count, failures, rank.
    Pairwise rows: model, items, win/lose/tie/error rates, win_rate_se, length, reference, rank.
    Stored figures: X-Figures-Computed-At says when they were computed, X-Figures-Stale whether
    newer judgments are waiting (a refresh is then queued)."""

    permission_classes = [ResearcherPermission]

    @extend_schema(responses=OpenApiResponse(description="A list of leaderboard rows."))
    def get(self, request, run_id: int):
        run = _run(
            run_by_id, run_id, user=request.user, queryset=JudgeRun.objects.select_related("dataset", "reference_model")
        )
        by = tuple(g for g in request.query_params.get("by", ",".join(GROUPS)).split(",") if g)
        wrong = sorted(set(by) - set(GROUPS))
        if wrong:
            return Response(
                {
                    "detail": _("Unknown group(s) %(groups)s; choose among %(choices)s.")
                    % {"groups": ", ".join(wrong), "choices": ", ".join(GROUPS)}
                },
                status=400,
            )
        payload, figures = run_figures_read(run=run, compute="missing")
        assert payload is not None  # compute="missing" computes figures never computed
        # Stored with every group; a narrower `by` keeps the overall rows and the groups asked for.
        keep = {None, "overall", *by}
        if "intent" in by and "language" in by:
            keep.add("intent_language")
        # A benchmark's own table (AlignBench's 总分...) comes with the group it is computed from.
        keep.update(name for name, b in benchmarks().items() if b.summary is not None and b.summary.group in by)
        return _figures_response([row for row in payload.get("rows", []) if row.get("group") in keep], figures)


class RunResumeApi(APIView):
    permission_classes = [ResearcherPermission]

    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "RunResumed"

        requeued_shards = serializers.IntegerField()
        status = serializers.CharField()

    @extend_schema(request=None, responses=OutputSerializer)
    def post(self, request, run_id: int):
        run = _run(run_by_id, run_id, user=request.user)
        count = run_resume(run=run)
        run_change_record(actor=request.user, run=run, change="resumed", details={"shards": count, "via": "api"})
        run.refresh_from_db()
        return Response({"requeued_shards": count, "status": run.status})


class RunCancelApi(APIView):
    permission_classes = [ResearcherPermission]

    @extend_schema(request=None, responses=ProgressSerializer)
    def post(self, request, run_id: int):
        run = _run(run_by_id, run_id, user=request.user)
        # As on the run's page: an archived run is read-only (and never at work: run_archive_check).
        refuse_if_archived(run)
        run_cancel(run=run, actor=request.user)
        return Response(ProgressSerializer(run_progress(run=run)).data)


class TemplateListApi(ListAPIView):
    permission_classes = [ResearcherPermission]

    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "JudgeTemplate"

        id = serializers.IntegerField()
        name = serializers.CharField()
        version = serializers.IntegerField()
        # The slug of the workspace that owns it; null for a built-in template (read-only).
        workspace = serializers.CharField(source="workspace.slug", read_only=True, allow_null=True)
        mode = serializers.CharField()
        language = serializers.CharField()
        text = serializers.CharField()
        created_at = serializers.DateTimeField()

    serializer_class = OutputSerializer

    def get_queryset(self):
        return template_list(self.request.user)


class RunDiagnosticsApi(APIView):
    """How far to trust the run's judge: position bias, flip rate, length bias, self-preference,
    parse failures by template and language, and agreement with human votes, with 95% intervals.
    Stored figures, as the leaderboard."""

    permission_classes = [ResearcherPermission]

    @extend_schema(responses=RunDiagnosticsSerializer)
    def get(self, request, run_id: int):
        run = _run(run_by_id, run_id, user=request.user)
        payload, figures = run_figures_read(run=run, compute="missing")
        assert payload is not None  # compute="missing" computes figures never computed
        return _figures_response(RunDiagnosticsSerializer(payload.get("diagnostics") or {}).data, figures)


class RunManifestApi(APIView):
    """What the run was made from (judging/runs/manifest.py): dataset version and content hash, template
    versions and text hashes, judge and generation parameters, endpoint base URL (never a key), the
    model names the endpoint reported, seeds, the Userbench version and the time."""

    permission_classes = [ResearcherPermission]

    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "RunManifest"

        format = serializers.CharField()
        userbench_version = serializers.CharField()
        recorded_at = serializers.CharField()
        run = serializers.IntegerField()
        rerun_of = serializers.IntegerField(allow_null=True)
        dataset = serializers.JSONField(help_text="id, name, source, version, frozen_at, items, content_hash.")
        mode = serializers.CharField()
        template_set = serializers.CharField(allow_blank=True)
        templates = serializers.JSONField(help_text="[{id, name, version, mode, language, text_hash}]")
        judge = serializers.JSONField(help_text="model, provider, family, temperature, max_tokens, both_orders, ...")
        endpoint = serializers.JSONField(help_text="name and base_url; never a key.")
        seeds = serializers.JSONField()
        candidates = serializers.JSONField(help_text="Per model: answers, answers_hash, origins, generation, ...")
        reference_model = serializers.JSONField(allow_null=True)
        injection_probe = serializers.BooleanField()
        probes = serializers.JSONField()
        batches = serializers.JSONField(
            help_text="The batches sent through the Batch API: [{batch_id, input_file_id, requests, status, ...}]."
        )
        judge_reported_models = serializers.DictField(
            child=serializers.IntegerField(), help_text="Model names in the endpoint's replies, with counts."
        )
        reconstructed = serializers.BooleanField(
            required=False, help_text="Built today for a run that predates manifests."
        )
        changes_since_original = serializers.ListField(child=serializers.CharField(), required=False)

    @extend_schema(responses=OutputSerializer)
    def get(self, request, run_id: int):
        return Response(self.OutputSerializer(run_manifest(run=_run(run_get, run_id, user=request.user))).data)


class ProbeAttackSerializer(serializers.Serializer):
    class Meta:
        ref_name = "ProbeAttack"

    attack = serializers.CharField(help_text="claims_reference, fake_score, ignore_instructions or constant_generic.")
    # The serializer's metaclass takes declared fields off the class, so this never hides Field.label.
    label = serializers.CharField()  # type: ignore[assignment]
    model = serializers.CharField(help_text="The pseudo-candidate's name, probe:<attack>.")
    n = serializers.IntegerField(help_text="Parsed judgments of the attack under this template.")
    failures = serializers.IntegerField(help_text="Its parse failures, not averaged.")
    mean = serializers.FloatField(allow_null=True, help_text="Mean final score, or win rate against the reference.")
    low = serializers.FloatField(allow_null=True, help_text="Bootstrap 95% interval.")
    high = serializers.FloatField(allow_null=True)
    advantage = serializers.FloatField(allow_null=True, help_text="Attack mean minus the honest answers' mean.")
    advantage_low = serializers.FloatField(allow_null=True, help_text="Welch 95% interval.")
    advantage_high = serializers.FloatField(allow_null=True)
    verdict = serializers.ChoiceField(choices=["fooled", "resisted", "unclear"], allow_null=True)


class ProbeHonestSerializer(serializers.Serializer):
    class Meta:
        ref_name = "ProbeHonest"

    n = serializers.IntegerField()
    mean = serializers.FloatField(allow_null=True)


class ProbeTemplateSerializer(serializers.Serializer):
    class Meta:
        ref_name = "ProbeTemplate"

    template = serializers.CharField(help_text="Template name and version.")
    honest = ProbeHonestSerializer(help_text="The real candidates under the same template.")
    attacks = ProbeAttackSerializer(many=True)


class RunProbeApi(APIView):
    """How each template scored the injection probe's constant adversarial answers against the honest
    answers: the attack's mean with its interval, its advantage with a Welch interval, and a verdict.
    Stored figures, as the leaderboard."""

    permission_classes = [ResearcherPermission]

    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "RunProbe"

        run = serializers.IntegerField()
        mode = serializers.CharField()
        measure = serializers.CharField()
        templates = ProbeTemplateSerializer(many=True)
        fooled = serializers.ListField(
            child=serializers.ListField(child=serializers.CharField()), help_text="[template, attack] pairs fooled."
        )

    @extend_schema(responses=OutputSerializer)
    def get(self, request, run_id: int):
        run = _run(run_by_id, run_id, user=request.user)
        payload, figures = run_figures_read(run=run, compute="missing")
        assert payload is not None  # compute="missing" computes figures never computed
        return _figures_response(self.OutputSerializer(payload.get("probe")).data, figures)


class RunArchiveApi(ArchiveApi):
    """POST /api/runs/<id>/archive/ (or .../restore/): a judge run archived or restored."""

    kind = "run"

    def find(self, request, key):
        try:
            return run_by_id(run_id=int(key), user=request.user, queryset=JudgeRun.objects.select_related("dataset"))
        except RunNotFound:
            raise Http404 from None

    def check(self, obj, archived):
        run_archive_check(obj, archived)
