"""The datasets API: working datasets and frozen versions with their item counts."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.generics import ListAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from core.archive_views import ArchiveApi
from core.roles import Role
from core.workspaces import workspace_get
from curation.access import ResearcherPermission
from curation.datasets.selectors import DatasetNotFound, dataset_by_name, dataset_list_with_counts
from curation.datasets.services import MissingReferences, VersionError, dataset_freeze
from curation.models import Dataset


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


class DatasetFreezeApi(APIView):
    """Freeze a working dataset's accepted items into a new version (POST). Items without a
    reference answer are frozen only with `confirm_missing_references`: otherwise a 400 says how
    many lack one (`missing_references`, `items`) and nothing is written."""

    permission_classes = [ResearcherPermission]

    class InputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "DatasetFreezeInput"

        confirm_missing_references = serializers.BooleanField(
            default=False, help_text="Freeze items without a reference answer too."
        )

    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "DatasetFrozen"

        name = serializers.CharField()
        version = serializers.IntegerField()
        items = serializers.IntegerField()
        missing_references = serializers.IntegerField(help_text="Frozen items without a reference answer.")

    @extend_schema(request=InputSerializer, responses={201: OutputSerializer, 400: None})
    def post(self, request, name):
        given = self.InputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            dataset = dataset_by_name(name=name, user=request.user)
        except DatasetNotFound as error:
            raise NotFound(str(error)) from None
        confirm = given.validated_data["confirm_missing_references"]
        try:
            version = dataset_freeze(dataset=dataset, created_by=request.user, confirm_missing_references=confirm)
        except MissingReferences as error:
            # Counts stay numbers (a ValidationError would make them strings).
            body = {"confirm_missing_references": [error.message], "missing_references": error.missing}
            return Response({**body, "items": error.total}, status=status.HTTP_400_BAD_REQUEST)
        except VersionError as error:
            raise ValidationError({"detail": error.message}) from None
        items = version.items.values_list("reference", flat=True)
        data = {
            "name": version.name,
            "version": version.version,
            "items": len(items),
            "missing_references": sum(1 for reference in items if not reference.strip()),
        }
        return Response(self.OutputSerializer(data).data, status=status.HTTP_201_CREATED)


class DatasetArchiveApi(ArchiveApi):
    """POST /api/datasets/<name>/archive/ (or .../restore/): a dataset archived or restored."""

    kind = "dataset"

    def find(self, request, key):
        return workspace_get(Dataset.objects.all(), request.user, role=Role.RESEARCHER.value, name=key)
