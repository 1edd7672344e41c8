from django.urls import path

from annotation import campaign_edit_views, views

app_name = "annotation"
urlpatterns = [
    path("annotate/", views.annotate_index, name="index"),
    path("annotate/<slug:slug>/", views.annotate, name="annotate"),
    path("annotate/<slug:slug>/vote/", views.vote, name="vote"),
    path("annotate/<slug:slug>/skip/", views.skip, name="skip"),
    path("annotate/<slug:slug>/undo/", views.undo, name="undo"),
    path("campaigns/new/", views.campaign_new, name="campaign-new"),
    path("campaigns/<slug:slug>/", views.results, name="results"),
    path("campaigns/<slug:slug>/pairs/", views.campaign_pairs, name="pairs"),
    path("campaigns/<slug:slug>/settings/", campaign_edit_views.campaign_settings, name="settings"),
    path("campaigns/<slug:slug>/archive/", views.campaign_archive_view, {"archived": True}, name="campaign-archive"),
    path("campaigns/<slug:slug>/restore/", views.campaign_archive_view, {"archived": False}, name="campaign-restore"),
]
