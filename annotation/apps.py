from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = _("Annotation")

    def ready(self):
        # Registers the "votes", "bt" and "agreement" tables with the shared export writer.
        from annotation import exports  # noqa: F401
