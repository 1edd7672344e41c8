"""The researcher's form for a new judge run. It parses input; judging.runs.spec decides."""

from typing import cast

from django import forms
from django.utils.translation import gettext_lazy as _

from core.forms import ErrorSummary, NoLabelSuffix
from core.params import ParameterError, int_param
from curation.models import Dataset
from judging.benchmarks.registry import pointwise_template_sets
from judging.models import CandidateModel, JudgeMode
from judging.prompts.templates import template_family
from judging.runs.spec import MAX_CONCURRENCY, MAX_SYSTEM_PROMPT_CHARS, MAX_TOKENS_RANGE, TEMPERATURE_RANGE

DEFAULT_ENDPOINT = "default"


class EndpointChoiceField(forms.ChoiceField):
    """One of the endpoints offered (those of the person's workspaces), or the default one from
    the environment: cleans to the Endpoint row itself (None for the default), so a form never
    looks an endpoint up again by name, nor finds one it did not offer."""

    def offer(self, endpoints) -> None:
        self.offered = {endpoint.name: endpoint for endpoint in endpoints}
        self.choices = [(DEFAULT_ENDPOINT, _("default (OPENAI_BASE_URL)"))] + [(name, name) for name in self.offered]

    def clean(self, value):
        name = super().clean(value)
        return None if name == DEFAULT_ENDPOINT else self.offered[name]


# The run stores its concurrency in a small integer column.


def _template_set_choices():
    # The benchmarks' pointwise sets (judging/benchmarks/), with the labels they registered.
    return [(name, ts.label) for name, ts in pointwise_template_sets().items()]


class BatchChoiceField(forms.ChoiceField):
    """How the calls are sent: live, or through the endpoint's Batch API. Cleans to True for batch."""

    def clean(self, value):
        return super().clean(value) == "batch"


def batch_field() -> BatchChoiceField:
    return BatchChoiceField(
        label=_("How calls are sent"),
        choices=[
            ("live", _("Live: replies as they come")),
            ("batch", _("Batch (about half price, results within 24 h)")),
        ],
        initial="live",
        required=False,
        widget=forms.RadioSelect,
        help_text=_(
            "Batch sends the calls through the endpoint's Batch API: the provider answers within 24 hours at "
            "its batch price. Replies already in the cache are never sent."
        ),
    )


class DatasetChoiceForm(ErrorSummary, NoLabelSuffix, forms.Form):
    """The first step: which dataset the run judges."""

    dataset = forms.ModelChoiceField(
        label=_("Dataset"), queryset=Dataset.objects.active().order_by("name"), to_field_name="name", empty_label=None
    )

    def __init__(self, *args, datasets=None, **kwargs):
        """`datasets`: the ones the person may judge (those of their workspaces; archived ones are
        left out)."""
        super().__init__(*args, **kwargs)
        if datasets is not None:
            cast(forms.ModelChoiceField, self.fields["dataset"]).queryset = datasets.active().order_by("name")


class CandidateChoiceField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, obj):
        return _("%(name)s (%(count)d answers)") % {"name": obj.name, "count": obj.answer_count}


class ReferenceChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj):
        return _("%(name)s (%(count)d answers)") % {"name": obj.name, "count": obj.answer_count}


class RunForm(ErrorSummary, NoLabelSuffix, forms.Form):
    """A judge run on one dataset: its candidates are the models that answered it."""

    dataset = forms.ModelChoiceField(queryset=Dataset.objects.all(), to_field_name="name", widget=forms.HiddenInput)
    mode = forms.ChoiceField(
        label=_("Mode"), choices=JudgeMode.choices, widget=forms.RadioSelect, initial=JudgeMode.POINTWISE
    )
    endpoint = EndpointChoiceField(label=_("Endpoint"))
    batch = batch_field()
    judge_model = forms.CharField(label=_("Judge model"), max_length=128)
    candidates = CandidateChoiceField(
        label=_("Candidate models"), queryset=CandidateModel.objects.none(), widget=forms.CheckboxSelectMultiple
    )
    reference_model = ReferenceChoiceField(
        label=_("Reference model"),
        queryset=CandidateModel.objects.none(),
        required=False,
        empty_label=_("none: the dataset's reference answers"),
        help_text=_(
            "Pairwise: the model every candidate is compared with (required). Pointwise: optional, its "
            "answers replace the dataset's references (cross-validation)."
        ),
    )
    template_set = forms.ChoiceField(
        label=_("Template set"),
        choices=_template_set_choices,
        help_text=_(
            "Pointwise runs. A pairwise run uses each language's published ranking prompt. Chinese items: "
            "ChineseAlpacaEval's (Figure 3). English items: AlpacaEval's alpaca_eval_gpt4, with its system message."
        ),
    )
    concurrency = forms.CharField(
        label=_("Calls in flight"),
        max_length=8,
        required=False,
        help_text=_(
            "The run's total across all workers: a number, or auto (the window finds the server's capacity). "
            "Empty: the endpoint's stated limit, else auto."
        ),
    )
    both_orders = forms.BooleanField(
        label=_("Judge both orders (pairwise): a pair judged differently in the two orders counts as a tie"),
        required=False,
    )
    exclude_missing_references = forms.BooleanField(
        label=_("Leave out the items without a reference answer (recorded in the run's manifest)"),
        required=False,
        help_text=_(
            "A template that judges against the reference ({reference}) would compare answers with nothing on "
            "those items; without this the run refuses them."
        ),
    )
    include_cut_off = forms.BooleanField(
        label=_("Include answers cut off at max_tokens (recorded in the run's manifest)"),
        required=False,
        help_text=_(
            "A generated answer the endpoint stopped at max_tokens is incomplete; runs leave it out unless this is ticked."
        ),
    )
    temperature = forms.FloatField(
        label=_("Temperature"),
        min_value=TEMPERATURE_RANGE[0],
        max_value=TEMPERATURE_RANGE[1],
        initial=0.0,
        required=False,
        help_text=_("Empty: no temperature is sent, so the server's default applies."),
    )
    max_tokens = forms.IntegerField(
        label=_("Max tokens per reply"),
        min_value=MAX_TOKENS_RANGE[0],
        max_value=MAX_TOKENS_RANGE[1],
        required=False,
        help_text=_("Empty: the endpoint's, else judging's default. A reply cut off by it is never scored."),
    )
    timeout_seconds = forms.FloatField(
        label=_("Timeout per call (seconds)"),
        min_value=0.1,
        required=False,
        help_text=_("Counted from when a call is sent. Empty: the endpoint's."),
    )
    system_prompt = forms.CharField(
        label=_("System prompt"),
        required=False,
        strip=False,
        max_length=MAX_SYSTEM_PROMPT_CHARS,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_(
            "Sent as a system message before each judge prompt, exactly as written. Empty: the template's own "
            "where its authors publish one (AlpacaEval's English pairwise prompt), else none."
        ),
    )
    seed = forms.IntegerField(
        label=_("Random seed"),
        min_value=0,
        max_value=2**31 - 1,
        required=False,
        help_text=_("Pairwise: which side each answer is shown on. Empty: a new random seed, recorded on the run."),
    )

    def __init__(self, *args, dataset: Dataset, candidates, endpoints, default_model: str = "", **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["dataset"].initial = dataset.name
        cast(forms.ModelChoiceField, self.fields["dataset"]).queryset = Dataset.objects.filter(pk=dataset.pk)
        # self.fields holds copies of the fields declared above; the stubs know them only as Field.
        cast(CandidateChoiceField, self.fields["candidates"]).queryset = candidates
        cast(ReferenceChoiceField, self.fields["reference_model"]).queryset = candidates
        endpoints = list(endpoints)
        cast(EndpointChoiceField, self.fields["endpoint"]).offer(endpoints)
        self.fields["template_set"].initial = template_family(dataset)
        self.fields["judge_model"].initial = default_model
        # Suggest the endpoints' default models; any other name can be typed.
        self.fields["judge_model"].widget.attrs["list"] = "judge-models"
        self.judge_models = sorted(
            {endpoint.default_model for endpoint in endpoints if endpoint.default_model} | ({default_model} - {""})
        )

    def clean_system_prompt(self):
        text = self.cleaned_data["system_prompt"]
        # Browsers send a textarea's line breaks as CRLF: the researcher typed plain new lines.
        return "" if not text.strip() else text.replace("\r\n", "\n")

    def clean_concurrency(self):
        value = self.cleaned_data["concurrency"].strip().lower()
        if not value:
            return None
        if value == "auto":
            return value
        try:
            return int_param(value, name="concurrency", low=1, high=MAX_CONCURRENCY)
        except ParameterError:
            raise forms.ValidationError(_("Give a whole number of calls (at least 1), or auto.")) from None

    def clean(self):
        cleaned = super().clean()
        assert cleaned is not None  # a Form's clean() returns its cleaned_data
        if cleaned.get("mode") == JudgeMode.PAIRWISE and not cleaned.get("reference_model"):
            self.add_error("reference_model", _("A pairwise run needs a reference model."))
        return cleaned
