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
