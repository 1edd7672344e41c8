"""The forms of a dataset's answers page: an upload of one model's answers, and a generation
from an endpoint. They parse input; judging/answers decides."""

from typing import cast

from django import forms
from django.utils.translation import gettext_lazy as _

from core.forms import ErrorSummary, NoLabelSuffix, UploadField
from judging.answers.generation import GENERATION_PRESETS
from judging.forms import EndpointChoiceField, batch_field
from judging.models import CandidateModel

MODEL_NAME_CHARS = CandidateModel._meta.get_field("name").max_length


def _preset_choices():
    # Each benchmark's preset (judging/benchmarks/), with the label it registered.
    return [("", _("default: temperature by category (AlignBench's table), 0.7 otherwise"))] + [
        (name, preset.label or name) for name, preset in GENERATION_PRESETS.items()
    ]


class AnswerUploadForm(ErrorSummary, NoLabelSuffix, forms.Form):
    """One model's answers from a JSONL or CSV file."""

    model = forms.CharField(
        label=_("Model"),
        max_length=MODEL_NAME_CHARS,
        help_text=_("The candidate model whose answers these are, as you want it named in the results."),
    )
    file = UploadField(
        label=_("File (JSONL or CSV)"),
        help_text=_(
            "JSONL: one object per line with question_id (or question, or instruction) and response. "
            "CSV: a header with the same columns. UTF-8. The whole file or nothing."
        ),
    )
    # Set by the page's "Replace" confirmation: the file becomes the model's next version.
    replace = forms.BooleanField(required=False, widget=forms.HiddenInput)


class GenerationForm(ErrorSummary, NoLabelSuffix, forms.Form):
    """A generation of one model's answers to the items it has not answered."""

    model = forms.CharField(
        label=_("Model"),
        max_length=MODEL_NAME_CHARS,
        help_text=_("Sent as the model name to the endpoint, and the name its answers get."),
    )
    endpoint = EndpointChoiceField(label=_("Endpoint"))
    batch = batch_field()
    preset = forms.ChoiceField(
        label=_("Ask as"),
        required=False,
        choices=_preset_choices,
    )
    max_tokens = forms.IntegerField(
        label=_("Max tokens per answer"),
        min_value=1,
        max_value=100_000,
        required=False,
        help_text=_(
            "Empty: the preset's, else the endpoint's, else generation's default. A cut-off answer is not kept."
        ),
    )

    def __init__(self, *args, endpoints, **kwargs):
        super().__init__(*args, **kwargs)
        endpoints = list(endpoints)
        cast(EndpointChoiceField, self.fields["endpoint"]).offer(endpoints)
        self.fields["model"].widget.attrs["list"] = "generation-models"
        self.models = sorted({endpoint.default_model for endpoint in endpoints if endpoint.default_model})
