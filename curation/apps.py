from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CurationConfig(AppConfig):
    name = "curation"
    verbose_name = _("Studies and curation")

    def ready(self):
        # Register this app's export tables with the one export writer.
        from curation import exports_dataset  # noqa: F401
        from curation import exports_study  # noqa: F401
