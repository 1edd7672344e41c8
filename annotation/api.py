"""The researchers' annotation API: campaigns, their figures, manifests and archiving; these may
name models. The annotators' endpoints are in annotation/annotate_api.py."""

from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.generics import ListAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import ResearcherPermission, researcher_campaign
from annotation.campaigns import (
    DEFAULT_UNIFORM_SHARE,
    MAX_BUDGET,
    MAX_GOLD_EVERY,
    MAX_SECONDS_PER_ITEM,
    MAX_VOTES_PER_PAIR,
    campaign_archive_check,
    campaign_create_by_names,
)
from annotation.figures import figures_read
from annotation.models import Campaign
from annotation.reliability_report import RELIABILITY_ROUNDS
from annotation.report import default_run_for
from annotation.selectors import (
    campaign_list_with_counts,
)
from annotation.serializers import (
    AlignmentReportSerializer,
    AnnotatorQualitySerializer,
    BTReportSerializer,
    StyleBTReportSerializer,
)
from core.archive_views import ArchiveApi
from core.params import ParameterError, int_param
from judging.errors import RunNotFound
from judging.models import JudgeRun
from judging.runs.lookup import run_by_id
from stats.elo import bt_on_elo


class CampaignListApi(ListAPIView):
    """Campaigns for researchers (GET), and a new campaign (POST). Annotators' own endpoints
    never carry model identities."""

    permission_classes = [ResearcherPermission]

    class InputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "CampaignInput"

        slug = serializers.SlugField(max_length=50)
        title = serializers.CharField(max_length=200, required=False, default="")
        title_zh = serializers.CharField(
            max_length=200, required=False, allow_blank=True, default="", help_text="Shown on Chinese pages."
        )
        dataset = serializers.CharField(max_length=100, help_text="Dataset name.")
        models = serializers.ListField(
            child=serializers.CharField(max_length=128), min_length=2, help_text="Candidate model names."
        )
        sampling = serializers.ChoiceField(
            choices=Campaign.Sampling.values,
            default=Campaign.Sampling.FIXED,
            help_text="fixed: every pair drawn now; adaptive: each pair chosen from the votes so far.",
        )
        budget = serializers.IntegerField(
            min_value=0,
            max_value=MAX_BUDGET,
            required=False,
            default=0,
            help_text="Adaptive sampling: the votes on ordinary pairs to ask for in all.",
        )
        uniform_share = serializers.FloatField(
            min_value=0,
            max_value=1,
            default=DEFAULT_UNIFORM_SHARE,
            help_text="Adaptive sampling: the share of pairs drawn uniformly over the model pairs (above 0).",
        )
        questions = serializers.IntegerField(
            min_value=1,
            required=False,
            default=None,
            help_text="Fixed sampling: questions to draw (default: every question two candidates answered).",
        )
        pairs_per_question = serializers.IntegerField(min_value=1, default=1)
        votes_per_pair = serializers.IntegerField(min_value=1, max_value=MAX_VOTES_PER_PAIR, default=1)
        annotators = serializers.ListField(child=serializers.CharField(max_length=150), default=list)
        gold_every = serializers.IntegerField(min_value=0, max_value=MAX_GOLD_EVERY, default=0)
        min_seconds_per_item = serializers.FloatField(
            min_value=0,
            max_value=MAX_SECONDS_PER_ITEM,
            default=0,
            help_text="Flag annotators whose median time per item is below this (0: no check).",
        )
        seed = serializers.IntegerField(min_value=0, max_value=2**63 - 1, default=0)
        instructions_en = serializers.CharField(max_length=5000, required=False, allow_blank=True, default="")
        instructions_zh = serializers.CharField(max_length=5000, required=False, allow_blank=True, default="")

    class CreatedSerializer(serializers.Serializer):
        class Meta:
            ref_name = "CampaignCreated"

        slug = serializers.SlugField()
        title = serializers.CharField()
        dataset = serializers.CharField(source="dataset.name")
        question_count = serializers.IntegerField()
        pairs_per_question = serializers.IntegerField()
        votes_per_pair = serializers.IntegerField()
        sampling = serializers.CharField()
        budget = serializers.IntegerField(help_text="Adaptive sampling: votes asked for in all; 0 for fixed.")
        uniform_share = serializers.FloatField()
        pair_count = serializers.IntegerField(help_text="Pairs drawn so far (none yet for an adaptive campaign).")
        pairs_planned = serializers.IntegerField(help_text="Pairs the campaign will have once its budget is spent.")
        annotators = serializers.ListField(child=serializers.CharField(), source="annotator_names")

    @extend_schema(request=InputSerializer, responses={201: CreatedSerializer})
    def post(self, request):
        given = self.InputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        campaign = campaign_create_by_names(question_count=data.pop("questions"), created_by=request.user, **data)
        # Read by CreatedSerializer.
        campaign.pair_count = campaign.pairs.count()  # type: ignore[attr-defined]
        campaign.annotator_names = sorted(campaign.annotators.values_list("username", flat=True))  # type: ignore[attr-defined]
        return Response(self.CreatedSerializer(campaign).data, status=status.HTTP_201_CREATED)

    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "Campaign"

        slug = serializers.SlugField()
        title = serializers.CharField()
        title_zh = serializers.CharField()
        dataset = serializers.CharField(source="dataset.name")
        votes_per_pair = serializers.IntegerField()
        sampling = serializers.CharField()
        budget = serializers.IntegerField()
        is_open = serializers.BooleanField()
        pair_count = serializers.IntegerField(help_text="Ordinary pairs; gold pairs are counted apart.")
        vote_count = serializers.IntegerField(help_text="Votes on ordinary pairs.")
        gold_pair_count = serializers.IntegerField()
        gold_vote_count = serializers.IntegerField()

    serializer_class = OutputSerializer

    def get_queryset(self):
        return campaign_list_with_counts(user=self.request.user)


def _bounded_int(request, name, default, low, high):
    """A query parameter through core.params: `default` when absent; a 400 keyed by the parameter,
    as DRF reports a field, when present but empty or not a whole number in [low, high]."""
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        value = int_param(raw, name=name, low=low, high=high)
    except ParameterError as error:
        raise ValidationError({name: str(error)}) from None
    if value is None:
        raise ValidationError(
            {
                name: _("%(name)s must be a whole number from %(low)d to %(high)d.")
                % {"name": name, "low": low, "high": high}
            }
        )
    return value


ROUNDS = OpenApiParameter("rounds", int, description="Bootstrap rounds (0-5000, default 1000).")
SEED = OpenApiParameter("seed", int, description="Bootstrap seed (default 0).")


def _figures_response(data, figures: dict) -> Response:
    """Stored figures with when they were computed and whether newer votes are waiting."""
    response = Response(data)
    response["X-Figures-Computed-At"] = figures["computed_at"].isoformat() if figures["computed_at"] else ""
    response["X-Figures-Stale"] = "1" if figures["stale"] else "0"
    return response


ANCHOR = OpenApiParameter(
    "anchor", str, description="Model that reads exactly 1000 on the Elo scale (default: the mean model reads 1000)."
)


ANNOTATORS = OpenApiParameter(
    "annotators",
    str,
    enum=["reliability"],
    description="'reliability': fit each annotator's reliability with the strengths (Crowd-BT); the scores come "
    "from that fit and 'annotators' lists each one's reliability (1 careful, 0.5 random, 0 adversarial). "
    f"Default rounds then {RELIABILITY_ROUNDS}.",
)


def _on_elo(request, bt: dict) -> dict:
    """The stored BT figures with their Elo points anchored as the request asks (400 for an
    anchor that is not a ranked model)."""
    try:
        return bt_on_elo(bt, anchor=request.query_params.get("anchor") or None)
    except ValueError as error:
        raise ValidationError({"anchor": str(error)}) from None


class CampaignBtApi(APIView):
    """Bradley-Terry scores, bootstrap intervals and ranks from the campaign's votes, with their
    Elo points beside them, as stored by the background task: the X-Figures-Computed-At header
    says when, X-Figures-Stale whether newer votes are waiting (a refresh is then queued)."""

    permission_classes = [ResearcherPermission]

    @extend_schema(parameters=[ROUNDS, SEED, ANCHOR, ANNOTATORS], responses=BTReportSerializer)
    def get(self, request, slug):
        campaign = researcher_campaign(slug, request.user)
        rounds = _bounded_int(request, "rounds", 1000, 0, 5000)
        seed = _bounded_int(request, "seed", 0, 0, 2**31 - 1)
        annotators = request.query_params.get("annotators", "")
        if annotators not in ("", "reliability"):
            raise ValidationError(
                {"annotators": _("Expected 'reliability' (or nothing), got %(value)s.") % {"value": repr(annotators)}}
            )
        if annotators:
            # Every round refits strengths and reliabilities: no more than RELIABILITY_ROUNDS unless asked.
            rounds = _bounded_int(request, "rounds", RELIABILITY_ROUNDS, 0, 5000)
            payload, figures = figures_read(
                what="reliability", campaign=campaign, rounds=rounds, seed=seed, compute="missing"
            )
            assert payload is not None  # compute="missing" computes figures never computed
            if payload.get("estimable") is False:
                raise ValidationError({"annotators": payload.get("reason", "")})
            return _figures_response(BTReportSerializer(_on_elo(request, payload)).data, figures)
        payload, figures = figures_read(what="campaign", campaign=campaign, rounds=rounds, seed=seed, compute="missing")
        assert payload is not None  # compute="missing" computes figures never computed
        return _figures_response(BTReportSerializer(_on_elo(request, payload.get("bt") or {})).data, figures)


class CampaignStyleBtApi(APIView):
    """Bradley-Terry with style covariates (length, markdown headers, list items, bold), from the
    same votes as the plain fit, with bootstrap intervals; and the style effects themselves
    (stored figures, as the BT endpoint)."""

    permission_classes = [ResearcherPermission]

    @extend_schema(parameters=[ROUNDS, SEED, ANCHOR], responses=StyleBTReportSerializer)
    def get(self, request, slug):
        campaign = researcher_campaign(slug, request.user)
        rounds = _bounded_int(request, "rounds", 1000, 0, 5000)
        seed = _bounded_int(request, "seed", 0, 0, 2**31 - 1)
        payload, figures = figures_read(what="style", campaign=campaign, rounds=rounds, seed=seed, compute="missing")
        assert payload is not None  # compute="missing" computes figures never computed
        return _figures_response(StyleBTReportSerializer(_on_elo(request, payload)).data, figures)


class CampaignAlignmentApi(APIView):
    """BT against the judge, satisfaction against the judge per intent, and agreement (stored
    figures, as the BT endpoint)."""

    permission_classes = [ResearcherPermission]

    @extend_schema(
        parameters=[
            OpenApiParameter("run", int, description="Judge run id (default: latest finished pointwise)."),
            ROUNDS,
            SEED,
        ],
        responses=AlignmentReportSerializer,
    )
    def get(self, request, slug):
        campaign = researcher_campaign(slug, request.user)
        rounds = _bounded_int(request, "rounds", 1000, 0, 5000)
        seed = _bounded_int(request, "seed", 0, 0, 2**31 - 1)
        if "run" in request.query_params:
            run_id = _bounded_int(request, "run", 0, 1, 2**63 - 1)
            try:
                run = run_by_id(
                    run_id=run_id, queryset=JudgeRun.objects.filter(dataset=campaign.dataset), user=request.user
                )
            except RunNotFound:
                raise NotFound("No judge run with this id on the campaign's dataset.") from None
        else:
            run = default_run_for(dataset=campaign.dataset)
            if run is None:
                raise NotFound("No finished pointwise judge run on the campaign's dataset.")
        payload, figures = figures_read(
            what="campaign", campaign=campaign, run=run, rounds=rounds, seed=seed, compute="missing"
        )
        assert payload is not None  # compute="missing" computes figures never computed
        if payload.get("report") is None:
            # The alignment could not be computed from these votes; the other figures were. An
            # answer, not an error: a script reads why, as the style fit's "not estimable" says it.
            report = {
                "dataset": campaign.dataset.name,
                "run": run.pk,
                "estimable": False,
                "reason": payload.get("report_reason") or "No alignment figures for this run.",
                **dict.fromkeys(("bt", "judge_scores", "bt_vs_judge", "satisfaction_vs_judge", "agreement")),
            }
        else:
            report = {**payload["report"], "bt": _on_elo(request, payload["report"]["bt"])}
        return _figures_response(AlignmentReportSerializer(report).data, figures)


class CampaignQualityApi(APIView):
    """Per annotator: votes, gold accuracy, median seconds per item, flagged or not (stored figures)."""

    permission_classes = [ResearcherPermission]

    @extend_schema(responses=AnnotatorQualitySerializer(many=True))
    def get(self, request, slug):
        payload, figures = figures_read(
            what="campaign", campaign=researcher_campaign(slug, request.user), compute="missing"
        )
        assert payload is not None  # compute="missing" computes figures never computed
        return _figures_response(AnnotatorQualitySerializer(payload.get("quality", []), many=True).data, figures)


class CampaignManifestApi(APIView):
    """What the campaign's pairs were drawn from (annotation/manifest.py): dataset version and content
    hash, each candidate's answers and their hash, the design and its seed, the Userbench version and time."""

    permission_classes = [ResearcherPermission]

    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "CampaignManifest"

        format = serializers.CharField()
        userbench_version = serializers.CharField()
        recorded_at = serializers.CharField()
        campaign = serializers.CharField()
        dataset = serializers.JSONField(help_text="id, name, source, version, frozen_at, items, content_hash.")
        candidates = serializers.JSONField(help_text="Per model: answers, answers_hash, origins, generation, ...")
        design = serializers.JSONField()
        instructions_hash = serializers.DictField(child=serializers.CharField())
        instructions_changed = serializers.ListField(
            child=serializers.DictField(child=serializers.CharField()),
            required=False,
            help_text="Each change of the instructions while the campaign ran: at, and the new en and zh hashes.",
        )
        seeds = serializers.DictField(child=serializers.IntegerField())

    @extend_schema(responses={200: OutputSerializer, 404: None})
    def get(self, request, slug):
        campaign = researcher_campaign(slug, request.user)
        if not campaign.manifest:
            raise NotFound("This campaign predates manifests.")
        return Response(self.OutputSerializer(campaign.manifest).data)


class CampaignArchiveApi(ArchiveApi):
    """POST /api/campaigns/<slug>/archive/ (or .../restore/): a campaign archived (gone from the
    annotators' queues, its votes refused) or restored."""

    kind = "campaign"

    def find(self, request, key):
        return researcher_campaign(key, request.user)

    def check(self, obj, archived):
        campaign_archive_check(obj, archived)
