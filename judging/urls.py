from django.urls import path

from judging import views
from judging.answers import views as answer_views

app_name = "judging"
urlpatterns = [
    path("runs/", views.run_list, name="run-list"),
    path("runs/new/", views.run_new, name="run-new"),
    path("runs/<int:run_id>/", views.run_detail, name="run-detail"),
    path("runs/<int:run_id>/manifest.json", views.run_manifest_download, name="run-manifest"),
    path("runs/<int:run_id>/archive/", views.run_archive_view, {"archived": True}, name="run-archive"),
    path("runs/<int:run_id>/restore/", views.run_archive_view, {"archived": False}, name="run-restore"),
    path("runs/<int:run_id>/<str:action>/", views.run_action, name="run-action"),
    path("judge-templates/", views.templates, name="templates"),
    path("judge-templates/<int:template_id>/", views.template_edit, name="template-edit"),
    path("judge-templates/<int:template_id>/copy/", views.template_copy_view, name="template-copy"),
    path("judge-templates/<int:template_id>/compare/", views.template_diff_pick, name="template-diff-pick"),
    path("judge-templates/<int:old_id>/diff/<int:new_id>/", views.template_diff, name="template-diff"),
    # A dataset's candidate answers; a dataset name may hold "/", so config/urls.py lists these
    # before curation's `datasets/<name>/`, which would take any path under it.
    path("datasets/<path:name>/answers/", answer_views.dataset_answers, name="dataset-answers"),
    path(
        "datasets/<path:name>/answers/generations/<int:generation_id>/<str:action>/",
        answer_views.generation_action,
        name="generation-action",
    ),
    path(
        "datasets/<path:name>/answers/uploads/<int:upload_id>/resume/",
        answer_views.upload_resume_view,
        name="answers-upload-resume",
    ),
    path(
        "datasets/<path:name>/answers/uploads/<int:upload_id>/discard/",
        answer_views.upload_discard_view,
        name="answers-upload-discard",
    ),
    # Posted from a working dataset's page (curation); the filter reads this app's judgments.
    path("review/datasets/<int:dataset_id>/difficulty/", views.dataset_difficulty_view, name="dataset-difficulty"),
]
