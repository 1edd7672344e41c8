from django.urls import path  # noqa: F401  (pages of judge runs are added here)

app_name = "judging"
urlpatterns = []
