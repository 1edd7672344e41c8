"""The export API: every registered table, whichever app registered it, for researchers."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.views import APIView

from core.exports import ROW_FORMATS, ExportError, export_response, export_table
from core.roles import Role
from core.workspaces import workspace_ids
from curation.access import ResearcherPermission
from curation.datasets.selectors import DatasetNotFound
from home.bundles import BUNDLE_KINDS, bundle_response
from home.selectors import export_scope_resolve


class ExportApi(APIView):
    """Stream any registered export table (items, answers, judgments, votes, ...) as CSV or JSONL."""

    permission_classes = [ResearcherPermission]

    class InputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "ExportQuery"

        dataset = serializers.CharField(required=False)
        study = serializers.CharField(required=False)
        run = serializers.IntegerField(required=False)
        campaign = serializers.SlugField(
            required=False, help_text="votes, bt, agreement: this annotation campaign's only, as its page shows them."
        )
        format = serializers.ChoiceField(choices=ROW_FORMATS, default="csv")
        # Participants' unreviewed text, for the tables that have it; the request is audited.
        raw = serializers.BooleanField(required=False, default=False)
        question_text = serializers.BooleanField(
            required=False,
            default=False,
            help_text="votes, judgments, answers: add each row's question text as a last column (audited).",
        )

    @extend_schema(
        parameters=[InputSerializer],
        responses={(200, "text/csv"): OpenApiTypes.STR, (200, "application/x-ndjson"): OpenApiTypes.STR},
    )
    def get(self, request, what):
        query = self.InputSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        params = query.validated_data
        try:
            scope = export_scope_resolve(
                dataset_name=params.get("dataset"),
                study_slug=params.get("study"),
                run_id=params.get("run"),
                campaign_slug=params.get("campaign"),
                user=request.user,
            )
            table = export_table(
                what,
                **scope,
                raw=params["raw"],
                question_text=params["question_text"],
                actor=request.user,
                via="api",
                workspaces=workspace_ids(request.user, Role.RESEARCHER.value),
            )
        except (ExportError, DatasetNotFound) as error:
            raise ValidationError({"detail": str(error)}) from None
        return export_response(table, params["format"], filename=what)


class ExportBundleApi(APIView):
    """One zip of a study, dataset, run or campaign: every table, its manifest and a README.txt
    data dictionary, streamed. Name exactly one of study, dataset, run, campaign."""

    permission_classes = [ResearcherPermission]

    class InputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "ExportBundleQuery"

        study = serializers.CharField(required=False)
        dataset = serializers.CharField(required=False)
        run = serializers.CharField(required=False)
        campaign = serializers.CharField(required=False)
        format = serializers.ChoiceField(choices=ROW_FORMATS, default="csv", help_text="of the tables in the zip")
        question_text = serializers.BooleanField(
            required=False, default=False, help_text="add each row's question text to votes, judgments and answers"
        )

    @extend_schema(parameters=[InputSerializer], responses={(200, "application/zip"): OpenApiTypes.BINARY})
    def get(self, request):
        query = self.InputSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        params = query.validated_data
        named = [kind for kind in BUNDLE_KINDS if params.get(kind)]
        if len(named) != 1:
            raise ValidationError({"detail": "Name exactly one of: study, dataset, run, campaign."})
        kind = named[0]
        return bundle_response(
            kind=kind,
            key=params[kind],
            user=request.user,
            fmt=params["format"],
            question_text=params["question_text"],
        )
