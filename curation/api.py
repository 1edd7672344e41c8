from rest_framework import serializers
from rest_framework.generics import ListAPIView

from curation.access import ResearcherPermission
from curation.selectors import dataset_list_with_counts, study_list_with_counts


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
