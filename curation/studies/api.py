"""The researcher's API for one study: its statistics. Rows come from /api/exports/{submissions,cases}/."""

from rest_framework import serializers
from rest_framework.generics import ListAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from core.archive_views import ArchiveApi
from core.roles import Role
from core.workspaces import workspace_get
from curation.access import ResearcherPermission
from curation.models import Study
from curation.studies.selectors import study_list_with_counts, study_statistics


class StudyStatisticsApi(APIView):
    """Submissions, completion rate, median time, exclusions, intents, services, satisfaction."""

    permission_classes = [ResearcherPermission]

    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "StudyStatistics"

        class Exclusion(serializers.Serializer):
            submission = serializers.IntegerField()
            prolific_pid = serializers.CharField()
            reason = serializers.CharField()

        class IntentCount(serializers.Serializer):
            intent = serializers.CharField()
            count = serializers.IntegerField()

        class ServiceCount(serializers.Serializer):
            service = serializers.CharField()
            count = serializers.IntegerField()

        class Satisfaction(serializers.Serializer):
            intent = serializers.CharField()
            count = serializers.IntegerField()
            mean = serializers.FloatField(allow_null=True)

        slug = serializers.SlugField()
        started = serializers.IntegerField()
        submitted = serializers.IntegerField()
        in_progress = serializers.IntegerField()
        excluded = serializers.IntegerField()
        completed = serializers.IntegerField(help_text="Finished with the completion code.")
        screened_out = serializers.IntegerField(help_text="Finished with the screen-out code; not completions.")
        completion_rate = serializers.FloatField(allow_null=True, help_text="completed / started.")
        screenout_rate = serializers.FloatField(allow_null=True, help_text="screened_out / started.")
        median_seconds = serializers.FloatField(allow_null=True)
        case_count = serializers.IntegerField()
        exclusions = Exclusion(many=True)
        intents = IntentCount(many=True)
        services = ServiceCount(many=True)
        satisfaction = Satisfaction(many=True)

    serializer_class = OutputSerializer

    def get(self, request, slug):
        study = workspace_get(Study.objects.all(), request.user, role=Role.RESEARCHER.value, slug=slug)
        stats = study_statistics(study=study)
        return Response(self.OutputSerializer({"slug": study.slug, **stats}).data)


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
        return study_list_with_counts(user=self.request.user)


class StudyArchiveApi(ArchiveApi):
    """POST /api/studies/<slug>/archive/ (or .../restore/): a study archived or restored; while
    archived its participants meet a closed page."""

    kind = "study"

    def find(self, request, key):
        return workspace_get(Study.objects.all(), request.user, role=Role.RESEARCHER.value, slug=key)
