"""The questionnaire's and the datasets' vocabulary: user intents (URS), languages, and the
lists a new study offers participants. Plain choices, on curation's ground floor beside the
models that store them."""

from django.db import models
from django.utils.translation import gettext_lazy as _


class Intent(models.TextChoices):
    """User intents of the URS study (SPEC 3.1). API is scored like Solve Professional Problem."""

    FACTUAL_QA = "factual_qa", _("Factual QA")
    SOLVE_PROBLEM = "solve_professional_problem", _("Solve professional problem")
    TEXT_ASSISTANT = "text_assistant", _("Text assistant")
    ASK_FOR_ADVICE = "ask_for_advice", _("Ask for advice")
    SEEK_CREATIVITY = "seek_creativity", _("Seek creativity")
    LEISURE = "leisure", _("Leisure")
    API = "api", _("Use through APIs")
    OTHER = "other", _("Other")


def intent_label(value: str) -> str:
    """An intent's label in the active language ("Factual QA" for "factual_qa"); an intent this
    version does not know (an older import's) reads as itself with spaces, never snake_case."""
    try:
        return str(Intent(value).label)
    except ValueError:
        return value.replace("_", " ")


class Language(models.TextChoices):
    EN = "en", _("English")
    ZH = "zh", _("Chinese")


DEFAULT_SERVICES = [
    "ChatGPT",
    "Gemini/Bard",
    "Copilot/New Bing",
    "Claude",
    "ERNIE Bot",
    "ChatGLM",
    "Qwen",
    "Baichuan",
    "Kimi/Moonshot",
    "Spark",
    "DeepSeek",
    "Character.AI",
    "Other",
]


# Intents a participant rates in the satisfaction grid (SPEC 3.9): the six of URS Table 7.
SATISFACTION_INTENTS = [
    Intent.FACTUAL_QA,
    Intent.SOLVE_PROBLEM,
    Intent.TEXT_ASSISTANT,
    Intent.ASK_FOR_ADVICE,
    Intent.SEEK_CREATIVITY,
    Intent.LEISURE,
]

DEFAULT_AGE_GROUPS = ["18-24", "25-34", "35-44", "45-54", "55-64", "65+"]


class ProlificDecision(models.TextChoices):
    """What a researcher decided for a flagged submission on Prolific."""

    APPROVE = "approve", _("Approve")
    REJECT = "reject", _("Reject")
