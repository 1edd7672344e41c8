from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.generics import ListAPIView
from rest_framework.views import APIView

from curation.access import ResearcherPermission
from curation.exports import ROW_FORMATS, ExportError, export_response, export_table
from curation.selectors import dataset_list_with_counts, export_scope_resolve, study_list_with_counts


class StudyListApi(ListAPIView):
    permission_classes = [ResearcherPermission]

    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "Study"

        slug = serializers.SlugField()
        title_en = serializers.CharField()
        title_zh = serializers.CharField()
        is_open = serializers.BooleanField()
        min_cases = serializers.IntegerField()
        max_cases = serializers.IntegerField()
        submitted_count = serializers.IntegerField()
        in_progress_count = serializers.IntegerField()
        excluded_count = serializers.IntegerField()
        created_at = serializers.DateTimeField()

    serializer_class = OutputSerializer

    def get_queryset(self):
        return study_list_with_counts()


class DatasetListApi(ListAPIView):
    permission_classes = [ResearcherPermission]

    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "Dataset"

        name = serializers.CharField()
        source = serializers.CharField()
        description = serializers.CharField()
        item_count = serializers.IntegerField()
        frozen_at = serializers.DateTimeField(allow_null=True)
        created_at = serializers.DateTimeField()

    serializer_class = OutputSerializer

    def get_queryset(self):
        return dataset_list_with_counts()


class ExportApi(APIView):
    """Stream any registered export table (items, answers, judgments, votes, ...) as CSV or JSONL."""

    permission_classes = [ResearcherPermission]

    class InputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "ExportQuery"

        dataset = serializers.CharField(required=False)
        study = serializers.CharField(required=False)
        run = serializers.IntegerField(required=False)
        format = serializers.ChoiceField(choices=ROW_FORMATS, default="csv")

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
                dataset_name=params.get("dataset"), study_slug=params.get("study"), run_id=params.get("run")
            )
            table = export_table(what, **scope)
        except ExportError as error:
            raise ValidationError({"detail": str(error)}) from None
        return export_response(table, params["format"], filename=what)
