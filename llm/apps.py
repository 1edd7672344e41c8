from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class LlmConfig(AppConfig):
    """Everything that talks to an LLM: endpoints, the client, the response cache, delivery in chunks."""

    name = "llm"
    verbose_name = _("LLM endpoints")
