"""REST API of a dataset's candidate answers: an upload of one model's answers (multipart `model`
and `file`; a large file is read by a worker and followed at its `url`), and generations from an endpoint, followed, cancelled and resumed."""

from django.conf import settings
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from core.upload_api import BackgroundUploadSerializer
from core.workspaces import in_workspace
from curation.datasets.api import DatasetArchiveApi
from curation.datasets.selectors import DatasetNotFound, dataset_by_name
from curation.models import Dataset
from judging.access import ResearcherPermission
from judging.answers.forms import MODEL_NAME_CHARS
from judging.answers.generation import GENERATION_PRESETS
from judging.answers.generation_jobs import (
    generation_can_resume,
    generation_cancel,
    generation_resume,
    generation_start,
)
from judging.answers.imports import answer_format, answers_import
from judging.answers.selectors import (
    GenerationNotFound,
    UploadNotFound,
    answer_counts,
    generation_list,
    generation_of_dataset,
    upload_of_dataset,
)
from judging.answers.uploads import upload_discard, upload_in_background, upload_queue, upload_resume
from judging.answers.versions import (
    AnswersNotFound,
    AnswerVersionRefused,
    answer_set_current,
    answers_delete,
    answers_not_found,
    answers_restore,
)
from judging.api import BatchesProgressSerializer
from judging.batching import batch_jobs_progress
from judging.models import AnswerGeneration, AnswerUpload, CandidateModel
from llm.selectors import endpoint_by_name


def _dataset(name: str, user) -> Dataset:
    """The dataset `name` of one of the person's workspaces (404 for another's, as for none)."""
    try:
        return dataset_by_name(name=name, user=user)
    except DatasetNotFound as error:
        raise NotFound(str(error)) from None


def _upload(name: str, upload_id: int, user) -> AnswerUpload:
    try:
        return upload_of_dataset(dataset=_dataset(name, user), upload_id=upload_id)
    except UploadNotFound as error:
        raise NotFound(str(error)) from None


def _generation(name: str, generation_id: int, user) -> AnswerGeneration:
    try:
        return generation_of_dataset(dataset=_dataset(name, user), generation_id=generation_id)
    except GenerationNotFound as error:
        raise NotFound(str(error)) from None


class ModelAnswersSerializer(serializers.Serializer):
    class Meta:
        ref_name = "ModelAnswers"

    model = serializers.CharField(source="name")
    answers = serializers.IntegerField(source="answer_count")
    cut_off = serializers.IntegerField(
        source="cut_off_count",
        help_text="Answers among them cut off at max_tokens: incomplete, left out of runs unless include_cut_off.",
    )
    version = serializers.IntegerField(source="answer_version", help_text="The current version's number.")


class GenerationSerializer(serializers.Serializer):
    class Meta:
        ref_name = "AnswerGeneration"

    id = serializers.IntegerField()
    dataset = serializers.CharField(source="dataset.name")
    model = serializers.CharField(source="model.name")
    endpoint = serializers.CharField(source="endpoint.name", allow_null=True, default=None)
    preset = serializers.CharField()
    max_tokens = serializers.IntegerField(allow_null=True)
    status = serializers.CharField(help_text="queued, running, finished, cancelled or failed.")
    status_label = serializers.CharField(source="get_status_display")
    total = serializers.IntegerField(help_text="Items the latest attempt asked for.")
    generated = serializers.IntegerField()
    failed = serializers.IntegerField()
    cut_off = serializers.IntegerField(
        help_text="Answers cut off by max_tokens: kept, marked cut off, asked for again on resume."
    )
    error = serializers.CharField(help_text="Why it stopped, or the reasons of failed items.")
    resumable = serializers.SerializerMethodField()
    batch = serializers.BooleanField(help_text="Asked through the provider's Batch API.")
    batches = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)

    def get_resumable(self, generation) -> bool:
        return generation_can_resume(generation)

    @extend_schema_field(BatchesProgressSerializer(allow_null=True))
    def get_batches(self, generation):
        """A batch generation's batches, their states and counts; null for a live one."""
        if not generation.batch:
            return None
        return BatchesProgressSerializer(batch_jobs_progress(generation.batch_jobs.all())).data


class UploadSerializer(BackgroundUploadSerializer):
    class Meta:
        ref_name = "AnswerUploadJob"

    dataset = serializers.CharField(source="dataset.name")
    model = serializers.CharField(source="model_name")

    def get_url(self, upload) -> str:
        return reverse("api-dataset-answers-upload", args=[upload.dataset.name, upload.pk])


class DatasetAnswersApi(APIView):
    """The dataset's candidate models with their answer counts; POST uploads one model's answers
    (JSONL, or CSV for a file named .csv): the whole file or nothing, an error naming its line."""

    permission_classes = [ResearcherPermission]
    parser_classes = [MultiPartParser]

    class InputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "AnswerUpload"

        model = serializers.CharField(max_length=MODEL_NAME_CHARS)
        file = serializers.FileField(help_text="JSONL, or CSV when the file name ends in .csv; UTF-8.")
        replace = serializers.BooleanField(
            default=False,
            help_text="Make the file the model's next version of answers. Runs and campaigns that used the "
            "version before keep it; new runs take this one.",
        )

    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "AnswerUploaded"

        model = serializers.CharField()
        imported = serializers.IntegerField()
        version = serializers.IntegerField(help_text="The version of the model's answers now current.")

    @extend_schema(responses=ModelAnswersSerializer(many=True))
    def get(self, request, name: str):
        return Response(ModelAnswersSerializer(answer_counts(dataset=_dataset(name, request.user)), many=True).data)

    @extend_schema(
        request={"multipart/form-data": InputSerializer},
        responses={201: OutputSerializer, 202: UploadSerializer},
        description="A file over UPLOAD_BACKGROUND_BYTES (2 MB by default) is stored and read by a worker: "
        "202 with the upload, whose `url` follows its progress; the answers are stored once every line is read.",
    )
    def post(self, request, name: str):
        dataset = _dataset(name, request.user)
        given = self.InputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        upload = given.validated_data["file"]
        if upload.size > settings.UPLOAD_MAX_REQUEST_BYTES:
            raise serializers.ValidationError(
                {"file": [f"The file is larger than {settings.UPLOAD_MAX_REQUEST_BYTES // 2**20} MB."]}
            )
        if upload_in_background(upload.size):
            queued = upload_queue(
                dataset=dataset,
                model_name=given.validated_data["model"],
                file=upload,
                actor=request.user,
                replace=given.validated_data["replace"],
            )
            queued.refresh_from_db()
            return Response(UploadSerializer(queued).data, status=status.HTTP_202_ACCEPTED)
        count = answers_import(
            dataset_name=dataset.name,
            workspace_id=dataset.workspace_id,
            model_name=given.validated_data["model"],
            stream=upload,
            file_format=answer_format(upload.name or ""),
            actor=request.user,
            replace=given.validated_data["replace"],
        )
        model = given.validated_data["model"].strip()
        current = answer_set_current(
            dataset=dataset, model=in_workspace(CandidateModel.objects.all(), dataset.workspace_id).get(name=model)
        )
        return Response(
            {"model": model, "imported": count, "version": current.version if current else None},
            status.HTTP_201_CREATED,
        )

    @extend_schema(
        parameters=[OpenApiParameter("model", str, required=True, description="The model whose answers to delete.")],
        responses={204: None},
    )
    def delete(self, request, name: str):
        """Delete the model's answers (`?model=`, a name may hold "/"): it has none current after;
        runs and campaigns that used them keep them."""
        return _answers_delete(request, name, request.query_params.get("model", ""))


def _answers_delete(request, name: str, model: str) -> Response:
    dataset = _dataset(name, request.user)
    if not model.strip():
        raise serializers.ValidationError({"model": ["Name the model whose answers to delete."]})
    try:
        answers_delete(dataset=dataset, model_name=model, actor=request.user)
    except AnswersNotFound as error:
        raise NotFound(str(error)) from None
    return Response(status=status.HTTP_204_NO_CONTENT)


class ModelAnswersApi(APIView):
    """One model's current answers to the dataset, named in the path (`.../answers/<model>/`, a
    model name may hold "/"): how many and which version; DELETE as `DELETE .../answers/?model=`."""

    permission_classes = [ResearcherPermission]

    @extend_schema(operation_id="datasets_model_answers_retrieve", responses=ModelAnswersSerializer)
    def get(self, request, name: str, model: str):
        dataset = _dataset(name, request.user)
        found = answer_counts(dataset=dataset).filter(name=model.strip()).first()
        if found is None:
            raise NotFound(str(answers_not_found(model_name=model, dataset=dataset)))
        return Response(ModelAnswersSerializer(found).data)

    @extend_schema(operation_id="datasets_model_answers_destroy", responses={204: None})
    def delete(self, request, name: str, model: str):
        return _answers_delete(request, name, model)


class AnswersRestoreApi(APIView):
    """Make an earlier version of a model's answers current again (the model in the body: a name
    may hold "/"). The version current now is retired as a replace retires it; runs and campaigns
    keep the versions they used. 400 naming `model` or `version` for one the dataset does not have
    or one already current; 400 for an archived dataset."""

    permission_classes = [ResearcherPermission]

    class InputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "AnswersRestore"

        model = serializers.CharField(max_length=MODEL_NAME_CHARS)
        version = serializers.IntegerField(min_value=1, help_text="The earlier version to make current.")

    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "AnswersRestored"

        model = serializers.CharField()
        version = serializers.IntegerField(help_text="The version of the model's answers now current.")
        answers = serializers.IntegerField(help_text="How many answers that version holds.")

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def post(self, request, name: str):
        if not request.data:
            # Without a body, as a dataset's restore is posted: the restore of a dataset whose
            # name ends in "/answers", which this route would otherwise hide.
            return DatasetArchiveApi(archived=False).post(request, f"{name}/answers")
        dataset = _dataset(name, request.user)
        given = self.InputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            restored = answers_restore(
                dataset=dataset,
                model_name=given.validated_data["model"],
                version=given.validated_data["version"],
                actor=request.user,
            )
        except AnswerVersionRefused as error:
            raise serializers.ValidationError({error.field: [str(error)]}) from None
        shown = {"model": restored.model.name, "version": restored.version, "answers": restored.answers.count()}
        return Response(self.OutputSerializer(shown).data)

    # The model path `.../answers/<model>/` read for a model named "restore", which this route
    # would otherwise hide (left out of the schema: ModelAnswersApi describes them).
    @extend_schema(exclude=True)
    def get(self, request, name: str):
        return ModelAnswersApi().get(request, name, "restore")

    @extend_schema(exclude=True)
    def delete(self, request, name: str):
        return _answers_delete(request, name, "restore")


class UploadDetailApi(APIView):
    """A large upload read by a worker: its progress, then what it stored or why it was refused."""

    permission_classes = [ResearcherPermission]

    @extend_schema(responses=UploadSerializer)
    def get(self, request, name: str, upload_id: int):
        return Response(UploadSerializer(_upload(name, upload_id, request.user)).data)

    @extend_schema(responses={204: None, 400: None})
    def delete(self, request, name: str, upload_id: int):
        """Discard a refused upload, or one whose worker stopped (`discardable`), and its stored
        file; audited. 400 while it is queued, being read or done."""
        upload_discard(upload=_upload(name, upload_id, request.user), actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class UploadResumeApi(APIView):
    """Queue again an upload whose worker stopped (`resumable`); 400 otherwise."""

    permission_classes = [ResearcherPermission]

    @extend_schema(request=None, responses=UploadSerializer)
    def post(self, request, name: str, upload_id: int):
        return Response(UploadSerializer(upload_resume(upload=_upload(name, upload_id, request.user))).data)


class GenerationListApi(APIView):
    """The dataset's generations, newest first; POST starts one on the `judging` queue."""

    permission_classes = [ResearcherPermission]

    class InputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "AnswerGenerationCreate"

        model = serializers.CharField(max_length=MODEL_NAME_CHARS, help_text="Sent to the endpoint as the model.")
        endpoint = serializers.CharField(
            max_length=100, required=False, allow_null=True, default=None, help_text="Absent: the default endpoint."
        )
        preset = serializers.ChoiceField(choices=list(GENERATION_PRESETS), required=False, default="")
        max_tokens = serializers.IntegerField(min_value=1, max_value=100_000, required=False, allow_null=True)
        batch = serializers.BooleanField(
            default=False,
            help_text="Ask through the endpoint's Batch API (about half price, answers within 24 h). An endpoint "
            "without the Batch API is refused with a 400 naming it.",
        )

    @extend_schema(responses=GenerationSerializer(many=True))
    def get(self, request, name: str):
        return Response(GenerationSerializer(generation_list(dataset=_dataset(name, request.user)), many=True).data)

    @extend_schema(request=InputSerializer, responses={201: GenerationSerializer})
    def post(self, request, name: str):
        dataset = _dataset(name, request.user)
        given = self.InputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        endpoint = (
            endpoint_by_name(name=data["endpoint"], user=request.user, workspace_id=dataset.workspace_id)
            if data["endpoint"] not in (None, "", "default")
            else None
        )
        generation = generation_start(
            dataset=dataset,
            model_name=data["model"],
            endpoint=endpoint,
            preset=data.get("preset") or "",
            max_tokens=data.get("max_tokens"),
            created_by=request.user,
            batch=data["batch"],
        )
        generation.refresh_from_db()
        return Response(GenerationSerializer(generation).data, status=status.HTTP_201_CREATED)


class GenerationDetailApi(APIView):
    permission_classes = [ResearcherPermission]

    @extend_schema(responses=GenerationSerializer)
    def get(self, request, name: str, generation_id: int):
        return Response(GenerationSerializer(_generation(name, generation_id, request.user)).data)


class GenerationCancelApi(APIView):
    permission_classes = [ResearcherPermission]

    @extend_schema(request=None, responses=GenerationSerializer)
    def post(self, request, name: str, generation_id: int):
        generation = generation_cancel(generation=_generation(name, generation_id, request.user), actor=request.user)
        return Response(GenerationSerializer(generation).data)


class GenerationResumeApi(APIView):
    permission_classes = [ResearcherPermission]

    @extend_schema(request=None, responses=GenerationSerializer)
    def post(self, request, name: str, generation_id: int):
        generation = generation_resume(generation=_generation(name, generation_id, request.user), actor=request.user)
        return Response(GenerationSerializer(generation).data)
