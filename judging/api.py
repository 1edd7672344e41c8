from rest_framework import serializers
from rest_framework.generics import ListAPIView

from judging.access import ResearcherPermission
from judging.selectors import run_list_with_progress


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
        return run_list_with_progress()
