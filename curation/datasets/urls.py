"""Routes of the dataset pages: building, imports, copies, LLM steps, freezing and diffs under /review/; the
list of every dataset and each one's items at /datasets/."""

from django.urls import path

from curation.datasets import import_views, views

urlpatterns = [
    path("datasets/", views.datasets_page, name="review-datasets"),
    path("datasets/build/", views.dataset_build_view, name="review-build"),
    path("datasets/copy/", views.dataset_copy_view, name="review-copy"),
    # Beside build and copy (a dataset name may be any path, so not under /datasets/).
    path("datasets/import/", import_views.dataset_import_view, name="review-import"),
    path(
        "datasets/import/uploads/<int:upload_id>/resume/",
        import_views.dataset_upload_resume_view,
        name="review-import-resume",
    ),
    path(
        "datasets/import/uploads/<int:upload_id>/discard/",
        import_views.dataset_upload_discard_view,
        name="review-import-discard",
    ),
    path("datasets/<int:dataset_id>/", views.dataset_page, name="review-dataset"),
    path("datasets/<int:dataset_id>/jobs/", views.dataset_job_view, name="review-job"),
    path(
        "datasets/<int:dataset_id>/jobs/<int:job_id>/restart/",
        views.dataset_job_restart_view,
        name="review-job-restart",
    ),
    path("datasets/<int:dataset_id>/freeze/", views.dataset_freeze_view, name="review-freeze"),
    path("datasets/<int:dataset_id>/archive/", views.dataset_archive_view, {"archived": True}, name="dataset-archive"),
    path("datasets/<int:dataset_id>/restore/", views.dataset_archive_view, {"archived": False}, name="dataset-restore"),
    path("datasets/<int:dataset_id>/diff/", views.dataset_diff_pick, name="review-diff-pick"),
    path("diff/<int:old_id>/<int:new_id>/", views.dataset_diff_page, name="review-diff"),
]

# Every dataset and its items, for researchers; a name may hold "@" (versions) or "/".
browse_urlpatterns = [
    path("datasets/", views.dataset_list_page, name="datasets"),
    path("datasets/<path:name>/", views.dataset_detail_page, name="dataset-detail"),
]
