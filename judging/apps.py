from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class JudgingConfig(AppConfig):
    name = "judging"
    verbose_name = _("Judging")

    def ready(self):
        # Every benchmark registers itself, and its dataset format with curation, before any
        # command, page or check asks for them.
        from judging.benchmarks.registry import benchmarks_load

        benchmarks_load()
        # Register the judgments and leaderboard tables with the one export writer, and what
        # judging keeps of a participant's question with the eraser of withdrawals.
        from judging import erasure  # noqa: F401
        from judging.results import exports  # noqa: F401

        # What of judging stops a dataset from being archived (its runs, generations, uploads).
        from judging.runs import archive  # noqa: F401
