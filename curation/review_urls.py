"""Routes of the review queues, item histories and dataset versions, under /review/."""

from django.urls import path

from curation import review_views

urlpatterns = [
    path("", review_views.review_index, name="review"),
    path("take/<slug:queue>/", review_views.review_take, name="review-take"),
    path("task/<int:task_id>/", review_views.review_task, name="review-task"),
    path("task/<int:task_id>/release/", review_views.review_release, name="review-release"),
    path("items/<int:item_id>/", review_views.item_page, name="review-item"),
    path("cases/<int:case_id>/", review_views.case_page, name="review-case"),
    path("datasets/", review_views.datasets_page, name="review-datasets"),
    path("datasets/build/", review_views.dataset_build_view, name="review-build"),
    path("datasets/<int:dataset_id>/", review_views.dataset_page, name="review-dataset"),
    path("datasets/<int:dataset_id>/jobs/", review_views.dataset_job_view, name="review-job"),
    path("datasets/<int:dataset_id>/difficulty/", review_views.dataset_difficulty_view, name="review-difficulty"),
    path("datasets/<int:dataset_id>/freeze/", review_views.dataset_freeze_view, name="review-freeze"),
    path("datasets/<int:dataset_id>/diff/", review_views.dataset_diff_pick, name="review-diff-pick"),
    path("diff/<int:old_id>/<int:new_id>/", review_views.dataset_diff_page, name="review-diff"),
]
