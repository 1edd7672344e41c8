"""The datasets API: working datasets and frozen versions with their item counts."""

from rest_framework import serializers
from rest_framework.generics import ListAPIView

from curation.access import ResearcherPermission
from curation.datasets.selectors import dataset_list_with_counts


class DatasetListApi(ListAPIView):
    permission_classes = [ResearcherPermission]

    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "Dataset"

        name = serializers.CharField()
        source = serializers.CharField()  # type: ignore[assignment]  # stubs: Field.source; declared fields leave the class
        description = serializers.CharField()
        item_count = serializers.IntegerField()
        frozen_at = serializers.DateTimeField(allow_null=True)
        created_at = serializers.DateTimeField()

    serializer_class = OutputSerializer

    def get_queryset(self):
        return dataset_list_with_counts(user=self.request.user)
