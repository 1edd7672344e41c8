"""Forms of the questionnaire and of the study set-up. They validate; services write."""

from typing import TYPE_CHECKING, cast

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from core.forms import ErrorSummary, WorkspaceChoice
from curation.choices import SATISFACTION_INTENTS, Intent, intent_label
from curation.conversation import parse_turns
from curation.models import Study

if TYPE_CHECKING:
    from django_stubs_ext import StrPromise

# Size limits a participant can act on; the messages say the limit and the current length.
MAX_CONVERSATION = 20_000
MAX_LINK = 500
MAX_SHORT = 100
MAX_OTHER_INTENT = 200
MAX_OCCUPATION = 200
MAX_COUNTRY = 64
# Only exactly this value is stored; labels are translated when shown.
PREFER_NOT_TO_SAY = "prefer_not_to_say"
OTHER_SERVICE = "Other"


TOO_LONG = _(
    "“%(field)s” has %(length)s characters, more than the %(limit)s that fit. Please shorten it by "
    "%(over)s characters; everything you typed is still here."
)


class TextLimit:
    """Refuses a text longer than `limit` characters, naming the field and the numbers.

    Used instead of max_length, whose maxlength attribute makes a browser cut a longer paste
    without a word: the end of a conversation (and its "Answer:") vanished unseen, and the
    participant was refused for a missing answer. The widget carries data-max-length instead,
    for the counter in curation/static/curation/study.js, which counts the same way.
    """

    def __init__(self, limit: int, label):
        self.limit, self.label = limit, label

    def __call__(self, value: str) -> None:
        length = len(value)
        if length > self.limit:
            raise ValidationError(
                TOO_LONG,
                code="too_long",
                params={
                    "field": str(self.label),
                    "length": f"{length:,}",
                    "limit": f"{self.limit:,}",
                    "over": f"{length - self.limit:,}",
                },
            )


class LimitedText(forms.CharField):
    """Text with a length limit that is shown and counted, never enforced by cutting."""

    def __init__(self, limit: int, **kwargs):
        self.limit = limit  # before Field.__init__, which asks widget_attrs
        super().__init__(**kwargs)
        self.validators.append(TextLimit(limit, kwargs.get("label", "")))

    def to_python(self, value):
        # Browsers send a textarea's line breaks as CRLF; count (and keep) one character each,
        # as the counter does.
        value = super().to_python(value)
        return value.replace("\r\n", "\n")

    def widget_attrs(self, widget):
        return {**super().widget_attrs(widget), "data-max-length": str(self.limit)}


class LimitedURL(forms.URLField):
    def __init__(self, limit: int, **kwargs):
        super().__init__(**kwargs)
        self.validators.append(TextLimit(limit, kwargs.get("label", "")))


# Services that people in China know by a Chinese name. Only the label is translated: the stored
# value stays the key, so answers given in either language count as the same service.
SERVICE_NAMES = {
    "ERNIE Bot": pgettext_lazy("LLM service", "ERNIE Bot"),
    "Qwen": pgettext_lazy("LLM service", "Qwen"),
    "Spark": pgettext_lazy("LLM service", "Spark"),
    "ChatGLM": pgettext_lazy("LLM service", "ChatGLM"),
    "Kimi/Moonshot": pgettext_lazy("LLM service", "Kimi/Moonshot"),
    "Baichuan": pgettext_lazy("LLM service", "Baichuan"),
    "Doubao": pgettext_lazy("LLM service", "Doubao"),
    "Yuanbao": pgettext_lazy("LLM service", "Yuanbao"),
    "Copilot/New Bing": pgettext_lazy("LLM service", "Copilot/New Bing"),
    OTHER_SERVICE: _("Other"),
}


def service_label(service: str) -> str:
    """A service's name in the reader's language (a service typed by a researcher or a
    participant is shown as typed)."""
    return str(SERVICE_NAMES.get(service, service))


FREQUENCY_CHOICES = [
    ("daily", _("Every day")),
    ("weekly", _("Every week")),
    ("monthly", _("Every month")),
    ("rarely", _("Less than once a month")),
]

SATISFACTION_CHOICES = [
    ("1", _("Very dissatisfied")),
    ("2", _("Dissatisfied")),
    ("3", _("Neutral")),
    ("4", _("Satisfied")),
    ("5", _("Very satisfied")),
]
NOT_USED = ("0", _("Not used"))
ATTENTION_FIELD = "sat_attention"
# The instructed item sits inside the grid, not at its end, so it is read like the others.
ATTENTION_POSITION = 3


# What parse_turns (the curation pipeline's own format check) found wrong, in words.
CONVERSATION_PROBLEMS = {
    "": _("Please paste it as “Question: ... Answer: ...”."),
    "no_speaker_labels": _("Please mark the turns: start with “Question:” and put “Answer:” before the reply."),
    "no_question": _("Please start with “Question:” followed by what you asked."),
    "no_answer": _("Please add “Answer:” followed by the assistant's reply."),
    "text_before_first_label": _("Please start with “Question:”; move any text before it into the question."),
}


class ParticipantForm(ErrorSummary, forms.Form):
    """A questionnaire form: every error at once, in a summary at the top, the first wrong answer
    focused (core.forms.ErrorSummary)."""


class ConsentForm(ParticipantForm):
    agree = forms.BooleanField(
        label=_("I have read the notice above and agree to take part."),
        error_messages={"required": _("Please tick the box to agree before you start.")},
    )


class CaseForm(ParticipantForm):
    """One reported conversation: the service, the text or link, and the intent."""

    service = forms.ChoiceField(label=_("Which AI assistant (LLM service) did you ask?"))
    service_other = LimitedText(MAX_SHORT, required=False, label=_("Service in your own words"))
    conversation = LimitedText(
        MAX_CONVERSATION,
        required=False,
        strip=False,
        label=_("Your question and the assistant's answer"),
        widget=forms.Textarea(attrs={"rows": 8}),
    )
    share_link = LimitedURL(
        MAX_LINK,
        required=False,
        assume_scheme="https",
        label=_("Or a share link to the conversation"),
        error_messages={
            "invalid": _("Please enter a full web address, starting with https://."),
        },
    )
    intent = forms.ChoiceField(label=_("What did you want to achieve?"))
    intent_other = LimitedText(MAX_OTHER_INTENT, required=False, label=_("Your intent in your own words"))

    def __init__(self, *args, study: Study, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["conversation"].widget.attrs["placeholder"] = _("Question: ...\nAnswer: ...")
        self.fields["conversation"].help_text = _(
            "Paste it in this form: Question: ... Answer: ... Several turns are welcome, up to %(limit)s characters."
        ) % {"limit": f"{MAX_CONVERSATION:,}"}
        cast(forms.ChoiceField, self.fields["service"]).choices = [("", _("Choose a service"))] + [
            (service, service_label(service)) for service in study.services
        ]
        if OTHER_SERVICE not in study.services:
            # The choices setter stored them as a list.
            cast(list, cast(forms.ChoiceField, self.fields["service"]).choices).append(
                (OTHER_SERVICE, service_label(OTHER_SERVICE))
            )
        offered = [value for value in study.intents if value in Intent.values]
        if Intent.OTHER not in offered:
            offered.append(Intent.OTHER)
        cast(forms.ChoiceField, self.fields["intent"]).choices = [("", _("Choose an intent"))] + [
            (value, intent_label(value)) for value in offered
        ]

    def clean(self):
        data = super().clean()
        assert data is not None  # a Form's clean() returns its cleaned_data
        if data.get("service") == OTHER_SERVICE and "service_other" in data and not data["service_other"].strip():
            self.add_error("service_other", _("Please name the service you used."))
        if data.get("intent") == Intent.OTHER and "intent_other" in data and not data["intent_other"].strip():
            self.add_error("intent_other", _("Please describe your intent in a few words."))
        conversation = data.get("conversation", "")
        if "conversation" in data and "share_link" in data:
            if not conversation.strip() and not data["share_link"]:
                self.add_error("conversation", _("Please paste the conversation or give a share link."))
            elif conversation.strip() and (problem := parse_turns(conversation).format_error):
                self.add_error("conversation", CONVERSATION_PROBLEMS.get(problem, CONVERSATION_PROBLEMS[""]))
        return data

    @staticmethod
    def initial_from_case(case, study: Study) -> dict:
        offered = set(study.services) | {OTHER_SERVICE}
        known = case.service in offered
        return {
            "service": case.service if known else OTHER_SERVICE,
            "service_other": "" if known else case.service,
            "conversation": case.conversation,
            "share_link": case.share_link,
            "intent": case.intent,
            "intent_other": case.intent_other,
        }

    def case_values(self) -> dict:
        """The cleaned answers as Case fields."""
        data = self.cleaned_data
        service = data["service_other"].strip() if data["service"] == OTHER_SERVICE else data["service"]
        return {
            "service": service,
            "conversation": data["conversation"].strip(),
            "share_link": data["share_link"],
            "intent": data["intent"],
            "intent_other": data["intent_other"].strip() if data["intent"] == Intent.OTHER else "",
        }


class AboutForm(ParticipantForm):
    """Voluntary demographics; every question can be skipped or declined."""

    age_group = forms.ChoiceField(required=False, label=_("Age group"))
    occupation = LimitedText(MAX_OCCUPATION, required=False, label=_("Occupation"))
    occupation_declined = forms.BooleanField(required=False, label=_("Prefer not to say"))
    country = LimitedText(MAX_COUNTRY, required=False, label=_("Country or region where you live"))
    country_declined = forms.BooleanField(required=False, label=_("Prefer not to say"))

    def __init__(self, *args, study: Study, **kwargs):
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["age_group"]).choices = (
            [("", _("Not answered"))]
            + [(group, group) for group in study.age_groups]
            + [(PREFER_NOT_TO_SAY, _("Prefer not to say"))]
        )

    @staticmethod
    def initial_from_submission(submission) -> dict:
        return {
            "age_group": submission.age_group,
            "occupation": "" if submission.occupation == PREFER_NOT_TO_SAY else submission.occupation,
            "occupation_declined": submission.occupation == PREFER_NOT_TO_SAY,
            "country": "" if submission.country == PREFER_NOT_TO_SAY else submission.country,
            "country_declined": submission.country == PREFER_NOT_TO_SAY,
        }

    def about_values(self) -> dict:
        data = self.cleaned_data
        return {
            "age_group": data["age_group"],
            "occupation": PREFER_NOT_TO_SAY if data["occupation_declined"] else data["occupation"].strip(),
            "country": PREFER_NOT_TO_SAY if data["country_declined"] else data["country"].strip(),
        }


class UsageForm(ParticipantForm):
    """LLMs used, how often, and satisfaction per intent with one instructed item in the grid."""

    llms_used = forms.MultipleChoiceField(
        required=False, label=_("Which AI assistants have you used?"), widget=forms.CheckboxSelectMultiple
    )
    frequency = forms.ChoiceField(
        label=_("How often do you use AI assistants?"),
        choices=FREQUENCY_CHOICES,
        widget=forms.RadioSelect,
        error_messages={"required": _("Please choose how often you use them.")},
    )

    def __init__(self, *args, study: Study, **kwargs):
        super().__init__(*args, **kwargs)
        self.study = study
        cast(forms.ChoiceField, self.fields["llms_used"]).choices = [
            (service, service_label(service)) for service in study.services
        ]
        required = _("Please choose one answer in this row.")
        rows = []
        for intent in SATISFACTION_INTENTS:
            rows.append(
                (
                    f"sat_{intent.value}",
                    forms.ChoiceField(
                        label=intent.label,
                        choices=SATISFACTION_CHOICES + [NOT_USED],
                        widget=forms.RadioSelect,
                        error_messages={"required": required},
                    ),
                )
            )
        expected = dict(SATISFACTION_CHOICES)[str(study.attention_answer)]
        attention = forms.ChoiceField(
            label=_("Attention check: to show you read this, choose “%(option)s” in this row.") % {"option": expected},
            choices=SATISFACTION_CHOICES + [NOT_USED],
            widget=forms.RadioSelect,
            error_messages={"required": required},
        )
        rows.insert(ATTENTION_POSITION, (ATTENTION_FIELD, attention))
        for name, field in rows:
            self.fields[name] = field
            # Each radio is named by its column ("Satisfied"); the row's header says what is rated.
            field.widget.attrs["aria-describedby"] = f"{self[name].auto_id}_label"
        self.grid_names = [name for name, _field in rows]

    def full_clean(self):
        super().full_clean()
        for name in self.grid_names:
            if name in self.errors:
                field = self.fields[name]
                field.widget.attrs["aria-describedby"] += f" {self[name].auto_id}_error"

    def grid(self):
        return [self[name] for name in self.grid_names]

    @staticmethod
    def grid_columns() -> list[tuple[str, "StrPromise"]]:
        return SATISFACTION_CHOICES + [NOT_USED]

    @staticmethod
    def initial_from_usage(usage: dict) -> dict:
        initial = {"llms_used": usage.get("llms_used", []), "frequency": usage.get("frequency", "")}
        for intent, rating in (usage.get("satisfaction") or {}).items():
            initial[f"sat_{intent}"] = str(rating)
        if isinstance(usage.get("attention_check"), int):
            initial[ATTENTION_FIELD] = str(usage["attention_check"])
        return initial

    def usage_values(self) -> dict:
        data = self.cleaned_data
        return {
            "llms_used": data["llms_used"],
            "frequency": data["frequency"],
            "satisfaction": {intent.value: int(data[f"sat_{intent.value}"]) for intent in SATISFACTION_INTENTS},
            "attention_check": int(data[ATTENTION_FIELD]),
        }


class StudyForm(ErrorSummary, WorkspaceChoice, forms.ModelForm):
    """The researcher's study set-up. Lists are edited one entry per line; a new study's workspace
    (`creator`: see WorkspaceChoice)."""

    services_text = forms.CharField(
        label=_("Services offered (one per line)"), widget=forms.Textarea(attrs={"rows": 8})
    )
    age_groups_text = forms.CharField(label=_("Age groups (one per line)"), widget=forms.Textarea(attrs={"rows": 4}))
    intents = forms.MultipleChoiceField(
        label=_("Intents offered"), choices=Intent.choices, widget=forms.CheckboxSelectMultiple
    )

    class Meta:
        model = Study
        fields = [
            "slug", "title_en", "title_zh", "consent_en", "consent_zh", "instructions_en", "instructions_zh",
            "min_cases", "max_cases", "intents", "attention_answer", "completion_code", "screenout_code", "is_open",
        ]  # fmt: skip
        labels = {
            "slug": _("Short name in the participant link (slug)"),
            "title_en": _("Title (English)"),
            "title_zh": _("Title (Chinese)"),
            "consent_en": _("Consent notice (English)"),
            "consent_zh": _("Consent notice (Chinese)"),
            "instructions_en": _("Instructions (English)"),
            "instructions_zh": _("Instructions (Chinese)"),
            "min_cases": _("Fewest cases per participant"),
            "max_cases": _("Most cases per participant"),
            "attention_answer": _("Answer the attention check asks for"),
            "completion_code": _("Prolific completion code"),
            "screenout_code": _("Prolific screen-out code"),
            "is_open": _("Open to new participants"),
        }
        help_texts = {
            "slug": _(
                "Letters, digits and hyphens; the participant link is /study/ followed by it. End it with a "
                "hyphen (pilot-) and six random letters and digits are added: a link no one guesses."
            ),
            "title_zh": _("Participants reading in Chinese see the English title while this is empty."),
            "consent_zh": _("Participants reading in Chinese see the English notice while this is empty."),
            "instructions_zh": _("Participants reading in Chinese see the English instructions while this is empty."),
            "screenout_code": _("Given to participants who fail the attention check."),
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["services_text"].initial = "\n".join(self.instance.services)
        self.fields["age_groups_text"].initial = "\n".join(self.instance.age_groups)
        self.fields["attention_answer"].widget = forms.Select(choices=SATISFACTION_CHOICES)

    @staticmethod
    def _lines(text: str, limit: int) -> list[str]:
        lines = []
        for line in text.splitlines():
            line = line.strip()
            if line and line not in lines:
                if len(line) > limit:
                    raise forms.ValidationError(
                        _("Each entry must be at most %(limit)d characters: %(entry)s"),
                        params={"limit": limit, "entry": line[:40]},
                    )
                lines.append(line)
        return lines

    def clean_services_text(self):
        services = self._lines(self.cleaned_data["services_text"], MAX_SHORT)
        if not services:
            raise forms.ValidationError(_("List at least one service."))
        return services

    def clean_age_groups_text(self):
        return self._lines(self.cleaned_data["age_groups_text"], 32)

    def clean(self):
        data = super().clean()
        assert data is not None  # a Form's clean() returns its cleaned_data
        low, high = data.get("min_cases"), data.get("max_cases")
        if low is not None and high is not None and high < low:
            self.add_error("max_cases", _("The maximum must not be below the minimum."))
        if low is not None and low < 1:
            self.add_error("min_cases", _("At least one case is needed."))
        return data

    def validate_unique(self):
        """Left to curation.studies.services.study_save (the slug is a study's only unique field,
        the title unique within its workspace): a taken slug is answered there with a free
        proposal in words that do not say whose it is, where Django's own "Study with this Slug
        already exists." would confirm it is someone's."""

    def study_values(self) -> dict:
        values = {name: self.cleaned_data[name] for name in self.Meta.fields}
        values["services"] = self.cleaned_data["services_text"]
        values["age_groups"] = self.cleaned_data["age_groups_text"]
        return values
