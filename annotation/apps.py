from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = _("Annotation")

    def ready(self):
        # exports registers the "votes", "bt" and "agreement" tables with the shared export writer;
        # judge_link gives judging's run diagnostics the human votes to compare the judge with;
        # archive says what of annotation stops a dataset from being archived (its live campaigns).
        from annotation import archive, exports, judge_link  # noqa: F401
