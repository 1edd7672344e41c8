"""The datasets API: working datasets and frozen versions with their item counts, and a dataset
imported from a public file (a large file read by a worker, followed at its `url`)."""

from django.conf import settings
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.generics import ListAPIView
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from core.archive_views import ArchiveApi
from core.roles import Role
from core.upload_api import BackgroundUploadSerializer
from core.uploads import upload_in_background
from core.workspaces import current_of, workspace_for_new, workspace_get
from curation.access import ResearcherPermission
from curation.datasets.importers import dataset_import
from curation.datasets.selectors import DatasetNotFound, dataset_by_name, dataset_list_with_counts
from curation.datasets.services import MissingReferences, VersionError, dataset_freeze
from curation.datasets.uploads import (
    dataset_upload_discard,
    dataset_upload_get,
    dataset_upload_queue,
    dataset_upload_resume,
)
from curation.models import Dataset
from curation.registry import format_names


class DatasetUploadSerializer(BackgroundUploadSerializer):
    class Meta:
        ref_name = "DatasetUploadJob"

    name = serializers.CharField(help_text="The dataset it makes.")
    format = serializers.CharField(source="file_format")
    dataset = serializers.CharField(source="dataset.name", allow_null=True, help_text="Once finished.")
    dataset_url = serializers.SerializerMethodField(help_text="The dataset's page, once finished.")

    def get_url(self, upload) -> str:
        return reverse("api-dataset-upload", args=[upload.pk])

    def get_dataset_url(self, upload) -> str | None:
        return None if upload.dataset is None else reverse("curation:dataset-detail", args=[upload.dataset.name])


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

    class ImportSerializer(serializers.Serializer):
        class Meta:
            ref_name = "DatasetImport"

        name = serializers.CharField(max_length=100)
        format = serializers.ChoiceField(choices=[], help_text="A benchmark's public item format.")
        file = serializers.FileField(help_text="UTF-8; the whole file or nothing.")
        description = serializers.CharField(max_length=2000, required=False, default="", allow_blank=True)

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.fields["format"].choices = format_names()  # type: ignore[attr-defined]  # the registered ones

    serializer_class = OutputSerializer
    parser_classes = [MultiPartParser]

    def get_queryset(self):
        return dataset_list_with_counts(user=self.request.user)

    @extend_schema(
        request=ImportSerializer,
        responses={201: OutputSerializer, 202: DatasetUploadSerializer, 400: None},
        description="A dataset from a public file, frozen, in the current workspace (X-Userbench-Workspace) "
        "or the person's only one: 201 with it, or, for a file over UPLOAD_BACKGROUND_BYTES, 202 with the "
        "upload, whose `url` follows its progress; nothing is stored unless every line can be.",
    )
    def post(self, request):
        given = self.ImportSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        file = given.validated_data["file"]
        if file.size > settings.UPLOAD_MAX_REQUEST_BYTES:
            raise ValidationError(
                {"file": [f"The file is larger than {settings.UPLOAD_MAX_REQUEST_BYTES // 2**20} MB."]}
            )
        current = current_of(request.user)
        workspace = workspace_for_new(request.user, Role.RESEARCHER.value, current.slug if current else "")
        if workspace is None:
            raise ValidationError({"detail": "You are a researcher in no workspace; a dataset needs one."})
        fields = {
            "fmt": given.validated_data["format"],
            "name": given.validated_data["name"],
            "description": given.validated_data["description"],
            "workspace": workspace,
        }
        if upload_in_background(file.size):
            queued = dataset_upload_queue(file=file, actor=request.user, **fields)
            queued.refresh_from_db()
            return Response(DatasetUploadSerializer(queued).data, status=status.HTTP_202_ACCEPTED)
        dataset = dataset_import(stream=file, created_by=request.user, **fields)
        counted = dataset_list_with_counts(user=request.user).get(pk=dataset.pk)
        return Response(self.OutputSerializer(counted).data, status=status.HTTP_201_CREATED)


class DatasetUploadApi(APIView):
    """A large dataset file read by a worker: its progress, then the dataset it made or why it was
    refused (GET); DELETE discards a refused or stopped one and its stored file (400 otherwise)."""

    permission_classes = [ResearcherPermission]

    @extend_schema(responses=DatasetUploadSerializer)
    def get(self, request, upload_id: int):
        return Response(DatasetUploadSerializer(dataset_upload_get(user=request.user, upload_id=upload_id)).data)

    @extend_schema(responses={204: None, 400: None})
    def delete(self, request, upload_id: int):
        dataset_upload_discard(upload=dataset_upload_get(user=request.user, upload_id=upload_id), actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class DatasetUploadResumeApi(APIView):
    """Queue again a large dataset file whose worker stopped (`resumable`); 400 otherwise."""

    permission_classes = [ResearcherPermission]

    @extend_schema(request=None, responses=DatasetUploadSerializer)
    def post(self, request, upload_id: int):
        upload = dataset_upload_resume(upload=dataset_upload_get(user=request.user, upload_id=upload_id))
        return Response(DatasetUploadSerializer(upload).data)


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
