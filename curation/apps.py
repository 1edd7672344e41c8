from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CurationConfig(AppConfig):
    """Three rooms: the questionnaire (studies), the review pipeline (review), dataset versions (datasets)."""

    name = "curation"
    verbose_name = _("Studies and curation")

    def ready(self):
        # What of curation stops a dataset from being archived (its jobs at work).
        from curation.datasets import archive as dataset_archive  # noqa: F401

        # Register this app's export tables with the one export writer, once the models they read
        # are loaded.
        from curation.datasets import exports as dataset_exports  # noqa: F401

        # The same for the studies' tables.
        from curation.studies import exports as study_exports  # noqa: F401
