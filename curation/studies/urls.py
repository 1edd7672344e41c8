"""The participant's questionnaire under /study/ and the researcher's study pages under /studies/."""

from django.urls import path

from curation.studies import research_views, views

urlpatterns = [
    # The participant's questionnaire (anonymous).
    path("study/<slug:slug>/", views.study_start, name="study-start"),
    path("study/<slug:slug>/resume/", views.study_resume, name="study-resume"),
    # Links handed out before the token moved to the query string.
    path("study/<slug:slug>/resume/<str:token>/", views.study_resume_old_link, name="study-resume-path"),
    path("study/<slug:slug>/cases/", views.study_cases, name="study-cases"),
    path("study/<slug:slug>/cases/<int:position>/", views.study_case_edit, name="study-case-edit"),
    path("study/<slug:slug>/cases/<int:position>/remove/", views.study_case_remove, name="study-case-remove"),
    path("study/<slug:slug>/about/", views.study_about, name="study-about"),
    path("study/<slug:slug>/usage/", views.study_usage, name="study-usage"),
    path("study/<slug:slug>/review/", views.study_review, name="study-review"),
    path("study/<slug:slug>/done/", views.study_done, name="study-done"),
    # The researcher's study pages.
    path("studies/new/", research_views.study_edit, name="study-new"),
    path("studies/<slug:slug>/", research_views.study_detail, name="study-detail"),
    path("studies/<slug:slug>/edit/", research_views.study_edit, name="study-edit"),
    path("studies/<slug:slug>/submissions/", research_views.study_submissions_table, name="study-submissions"),
    path(
        "studies/<slug:slug>/submissions/<slug:decision>.txt",
        research_views.study_prolific_ids,
        name="study-prolific-ids",
    ),
    path(
        "studies/<slug:slug>/submissions/<int:submission_id>/decide/",
        research_views.study_submission_decide,
        name="study-submission-decide",
    ),
    path("studies/<slug:slug>/duplicates/", research_views.study_duplicate_resolve, name="study-duplicate-resolve"),
    path("studies/<slug:slug>/withdraw/", research_views.study_withdraw, name="study-withdraw"),
    path("studies/<slug:slug>/archive/", research_views.study_archive_view, {"archived": True}, name="study-archive"),
    path("studies/<slug:slug>/restore/", research_views.study_archive_view, {"archived": False}, name="study-restore"),
]
