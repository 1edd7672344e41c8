from django.urls import path

from judging import api
from judging.answers import api as answer_api

# Listed by config/urls.py before curation's, whose `datasets/<name>/restore/` would read it as
# a dataset named "<name>/answers" (and so before the model's path below, which would read
# "restore" as a model's name).
before_curation = [
    path(
        "datasets/<path:name>/answers/restore/",
        answer_api.AnswersRestoreApi.as_view(),
        name="api-dataset-answers-restore",
    ),
]

urlpatterns = [
    path("runs/", api.RunListApi.as_view(), name="api-runs"),
    path("runs/<int:run_id>/", api.RunDetailApi.as_view(), name="api-run-detail"),
    path("runs/<int:run_id>/progress/", api.RunProgressApi.as_view(), name="api-run-progress"),
    path("runs/<int:run_id>/leaderboard/", api.RunLeaderboardApi.as_view(), name="api-run-leaderboard"),
    path("runs/<int:run_id>/diagnostics/", api.RunDiagnosticsApi.as_view(), name="api-run-diagnostics"),
    path("runs/<int:run_id>/manifest/", api.RunManifestApi.as_view(), name="api-run-manifest"),
    path("runs/<int:run_id>/probe/", api.RunProbeApi.as_view(), name="api-run-probe"),
    path("runs/<int:run_id>/resume/", api.RunResumeApi.as_view(), name="api-run-resume"),
    path("runs/<int:run_id>/cancel/", api.RunCancelApi.as_view(), name="api-run-cancel"),
    path("runs/<int:key>/archive/", api.RunArchiveApi.as_view(archived=True), name="api-run-archive"),
    path("runs/<int:key>/restore/", api.RunArchiveApi.as_view(archived=False), name="api-run-restore"),
    path("judge-templates/", api.TemplateListApi.as_view(), name="api-judge-templates"),
    # A dataset name may hold "/": these end in a fixed word, so the name is what comes before it.
    path("datasets/<path:name>/answers/", answer_api.DatasetAnswersApi.as_view(), name="api-dataset-answers"),
    path(
        "datasets/<path:name>/answer-uploads/<int:upload_id>/",
        answer_api.UploadDetailApi.as_view(),
        name="api-dataset-answers-upload",
    ),
    path(
        "datasets/<path:name>/answer-uploads/<int:upload_id>/resume/",
        answer_api.UploadResumeApi.as_view(),
        name="api-dataset-answers-upload-resume",
    ),
    # The model name may hold "/" too: the dataset's is what comes before the last "/answers/".
    path("datasets/<path:name>/answers/<path:model>/", answer_api.ModelAnswersApi.as_view(), name="api-model-answers"),
    path("datasets/<path:name>/generations/", answer_api.GenerationListApi.as_view(), name="api-dataset-generations"),
    path(
        "datasets/<path:name>/generations/<int:generation_id>/",
        answer_api.GenerationDetailApi.as_view(),
        name="api-dataset-generation",
    ),
    path(
        "datasets/<path:name>/generations/<int:generation_id>/cancel/",
        answer_api.GenerationCancelApi.as_view(),
        name="api-dataset-generation-cancel",
    ),
    path(
        "datasets/<path:name>/generations/<int:generation_id>/resume/",
        answer_api.GenerationResumeApi.as_view(),
        name="api-dataset-generation-resume",
    ),
]
