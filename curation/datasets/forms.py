"""The researcher's form for a dataset imported from a public file. It parses input;
curation.datasets.importers decides."""

from django import forms
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext_lazy as _

from core.forms import ErrorSummary, NoLabelSuffix, UploadField, WorkspaceChoice
from curation.models import Dataset
from curation.registry import formats


def _format_choices():
    # The benchmarks' formats (curation/registry.py), with the labels they registered.
    return [(name, fmt.label) for name, fmt in formats().items()]


class DatasetImportForm(ErrorSummary, WorkspaceChoice, NoLabelSuffix, forms.Form):
    """A public file, the format it is in, and the new dataset's name (and workspace)."""

    name = forms.CharField(
        label=_("Dataset name"),
        max_length=Dataset._meta.get_field("name").max_length,
        help_text=_("How runs, campaigns and exports name it; it cannot be changed later."),
    )
    format = forms.ChoiceField(label=_("File format"), choices=_format_choices)
    file = UploadField(
        label=_("File"),
        help_text=_(
            "UTF-8. The whole file or nothing: a line that cannot be read is named, and nothing is imported. "
            "The dataset is frozen as it is imported; make a working copy to change its items."
        ),
    )
    description = forms.CharField(
        label=_("Description"), required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 2})
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Built per request: the labels in the reader's language, the field names as the file has them.
        self.fields["format"].help_text = format_html(
            "{} {}",
            _("A URS file has these columns, the JSONL formats these fields on each line:"),
            format_html_join(
                "; ",
                "{} <code>{}</code>",
                ((fmt.label, ", ".join(fmt.fields)) for fmt in formats().values()),
            ),
        )
