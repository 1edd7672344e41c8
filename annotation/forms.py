"""The researcher's form for a new campaign. It only parses input; campaign_create decides."""

from typing import cast

from django import forms
from django.utils.translation import gettext_lazy as _

from annotation.campaigns import (
    DEFAULT_UNIFORM_SHARE,
    MAX_BUDGET,
    MAX_GOLD_EVERY,
    MAX_SECONDS_PER_ITEM,
    MAX_VOTES_PER_PAIR,
)
from annotation.models import Campaign
from annotation.selectors import annotator_choices
from core.forms import ErrorSummary, NoLabelSuffix
from curation.models import Dataset, Item
from judging.models import Answer, CandidateModel

# Empty gold-pair rows the page offers at first; "Add a gold pair row" adds one more.
GOLD_ROWS = 3
MAX_GOLD_ROWS = 50


class CampaignForm(ErrorSummary, NoLabelSuffix, forms.Form):
    title = forms.CharField(label=_("Title"), max_length=200)
    title_zh = forms.CharField(
        label=_("Title (Chinese)"),
        max_length=200,
        required=False,
        help_text=_("Pages in Chinese show the title above while this is empty."),
    )
    slug = forms.SlugField(label=_("Slug"), max_length=50, help_text=_("Letters, digits, hyphens and underscores."))
    dataset = forms.ModelChoiceField(
        label=_("Dataset"), queryset=Dataset.objects.active().order_by("name"), to_field_name="name", empty_label="—"
    )
    candidates = forms.ModelMultipleChoiceField(
        label=_("Candidate models"),
        queryset=CandidateModel.objects.order_by("name"),
        to_field_name="name",
        widget=forms.CheckboxSelectMultiple,
        help_text=_("At least two."),
    )
    sampling = forms.ChoiceField(
        label=_("Sampling"),
        choices=Campaign.Sampling.choices,
        initial=Campaign.Sampling.FIXED,
        widget=forms.RadioSelect,
        # A post without it (a script written before adaptive sampling) is a fixed campaign.
        required=False,
        help_text=_(
            "Fixed: every pair is drawn now, balanced over the model pairs. Adaptive: each new pair is "
            "chosen from the votes so far, favouring close and little-measured models, until the vote "
            "budget is spent."
        ),
    )
    question_count = forms.IntegerField(
        label=_("Questions"), min_value=1, required=False, help_text=_("Fixed sampling: how many questions to draw.")
    )
    pairs_per_question = forms.IntegerField(label=_("Pairs per question"), min_value=1, initial=1, required=False)
    budget = forms.IntegerField(
        label=_("Vote budget"),
        min_value=1,
        max_value=MAX_BUDGET,
        required=False,
        help_text=_("Adaptive sampling: the votes on ordinary pairs to ask for in all."),
    )
    uniform_share = forms.FloatField(
        label=_("Share of uniformly drawn pairs"),
        min_value=0,
        max_value=1,
        initial=DEFAULT_UNIFORM_SHARE,
        required=False,
        help_text=_(
            "Adaptive sampling: this share of the pairs is drawn uniformly over the model pairs, so "
            "that every pair of models keeps being compared. Above 0, at most 1."
        ),
    )
    votes_per_pair = forms.IntegerField(
        label=_("Votes per pair"),
        min_value=1,
        max_value=MAX_VOTES_PER_PAIR,
        initial=1,
        help_text=_("More than one gives the overlap that agreement statistics need."),
    )
    annotators = forms.ModelMultipleChoiceField(
        label=_("Annotators"),
        queryset=annotator_choices(),
        to_field_name="username",
        widget=forms.CheckboxSelectMultiple,
        required=False,
    )
    gold_every = forms.IntegerField(
        label=_("A gold pair every N items"),
        min_value=0,
        max_value=MAX_GOLD_EVERY,
        initial=0,
        help_text=_("0: no gold pairs. Gold pairs, with the answer you expect, are chosen below."),
    )
    min_seconds_per_item = forms.FloatField(
        label=_("Flag annotators faster than (seconds per item)"),
        min_value=0,
        max_value=MAX_SECONDS_PER_ITEM,
        initial=0,
        required=False,
        help_text=_(
            "Annotators whose median time per item is below this are flagged and their votes left out "
            "of the statistics. 0: no check."
        ),
    )
    seed = forms.IntegerField(label=_("Random seed"), min_value=0, max_value=2**63 - 1, initial=0)
    instructions_en = forms.CharField(
        label=_("Instructions (English)"), widget=forms.Textarea(attrs={"rows": 3}), required=False, max_length=5000
    )
    instructions_zh = forms.CharField(
        label=_("Instructions (Chinese)"), widget=forms.Textarea(attrs={"rows": 3}), required=False, max_length=5000
    )

    def __init__(self, *args, dataset: Dataset | None = None, datasets=None, **kwargs):
        """`datasets`: the ones the person may use (their workspaces'); annotators are those of
        the chosen dataset's workspace. Archived datasets are left out."""
        super().__init__(*args, **kwargs)
        if datasets is not None:
            datasets = datasets.active()
            cast(forms.ModelChoiceField, self.fields["dataset"]).queryset = datasets.order_by("name")
            # Before a dataset is chosen: the models that answered one of the person's datasets.
            cast(forms.ModelMultipleChoiceField, self.fields["candidates"]).queryset = (
                CandidateModel.objects.filter(answers__item__dataset__in=datasets, answers__is_current=True)
                .distinct()
                .order_by("name")
            )
            cast(forms.ModelMultipleChoiceField, self.fields["annotators"]).queryset = annotator_choices(
                workspace_ids=datasets.values("workspace_id")
            )
        if dataset is not None:
            cast(forms.ModelMultipleChoiceField, self.fields["annotators"]).queryset = annotator_choices(
                workspace_id=dataset.workspace_id
            )
            # Only the models that answered this dataset can be compared on it.
            cast(forms.ModelMultipleChoiceField, self.fields["candidates"]).queryset = (
                CandidateModel.objects.filter(answers__item__dataset=dataset, answers__is_current=True)
                .distinct()
                .order_by("name")
            )

    def clean_sampling(self):
        return self.cleaned_data["sampling"] or Campaign.Sampling.FIXED

    def clean_min_seconds_per_item(self):
        # Left empty: no speed check.
        return self.cleaned_data["min_seconds_per_item"] or 0

    def clean(self):
        """Each design asks for its own numbers: questions for a fixed campaign, a budget for an
        adaptive one; the other design's fields are left aside."""
        cleaned = super().clean()
        assert cleaned is not None  # a Form's clean() returns its cleaned_data
        adaptive = cleaned.get("sampling") == Campaign.Sampling.ADAPTIVE
        if adaptive:
            if cleaned.get("budget") is None and "budget" not in self.errors:
                self.add_error("budget", _("An adaptive campaign needs a vote budget."))
            share = cleaned.get("uniform_share")
            if share is None and "uniform_share" not in self.errors:
                cleaned["uniform_share"] = DEFAULT_UNIFORM_SHARE
            elif share == 0:
                self.add_error(
                    "uniform_share",
                    _("Keep some pairs uniform: a share above 0, so that every pair of models is compared."),
                )
            cleaned["question_count"] = None
            cleaned["pairs_per_question"] = 1
        else:
            if cleaned.get("question_count") is None and "question_count" not in self.errors:
                self.add_error("question_count", _("A fixed campaign needs the number of questions to draw."))
            cleaned["pairs_per_question"] = cleaned.get("pairs_per_question") or 1
            cleaned["budget"] = 0
            cleaned["uniform_share"] = DEFAULT_UNIFORM_SHARE
        return cleaned


class GoldPairForm(NoLabelSuffix, forms.Form):
    """A pair whose better answer the researcher knows, to check annotators' attention."""

    question = forms.CharField(
        label=_("Question id"), max_length=64, required=False, help_text=_("As on the dataset's page.")
    )
    model_a = forms.ModelChoiceField(
        label=_("Model A"),
        queryset=CandidateModel.objects.order_by("name"),
        to_field_name="name",
        required=False,
        empty_label="—",
    )
    model_b = forms.ModelChoiceField(
        label=_("Model B"),
        queryset=CandidateModel.objects.order_by("name"),
        to_field_name="name",
        required=False,
        empty_label="—",
    )
    winner = forms.ChoiceField(
        label=_("Expected vote"),
        required=False,
        choices=[
            ("", "—"),
            ("model_a", _("A is better")),
            ("model_b", _("B is better")),
            ("tie", _("Equally good")),
        ],
    )

    def __init__(self, *args, dataset: Dataset | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.dataset = dataset
        self.fields["question"].widget.attrs["list"] = "gold-questions"
        # Before a dataset is chosen no model is offered: the list would name other teams' models.
        answered = (
            CandidateModel.objects.filter(answers__item__dataset=dataset, answers__is_current=True)
            .distinct()
            .order_by("name")
            if dataset is not None
            else CandidateModel.objects.none()
        )
        cast(forms.ModelChoiceField, self.fields["model_a"]).queryset = answered
        cast(forms.ModelChoiceField, self.fields["model_b"]).queryset = answered

    def clean(self):
        cleaned = super().clean()
        assert cleaned is not None  # a Form's clean() returns its cleaned_data
        question, model_a, model_b, winner = (cleaned.get(key) for key in ("question", "model_a", "model_b", "winner"))
        if not any([question, model_a, model_b, winner]):
            return cleaned  # an empty row
        for key, value in (("question", question), ("model_a", model_a), ("model_b", model_b), ("winner", winner)):
            if not value and key not in self.errors:
                self.add_error(key, _("Fill in every field of a gold pair, or none."))
        if self.errors or self.dataset is None:
            return cleaned
        assert question and model_a and model_b  # each was filled, or an error returned above
        item = Item.objects.filter(dataset=self.dataset, external_id=question.strip()).first()
        if item is None:
            self.add_error("question", _("No question with this id in the dataset."))
            return cleaned
        if model_a == model_b:
            self.add_error("model_b", _("Choose a model other than model A."))
            return cleaned
        answered = set(
            Answer.objects.filter(item=item, model__in=[model_a, model_b]).values_list("model_id", flat=True)
        )
        for key, model in (("model_a", model_a), ("model_b", model_b)):
            if model.pk not in answered:
                self.add_error(key, _("%(model)s has no answer to this question.") % {"model": model.name})
        cleaned["item"] = item
        return cleaned

    def pair(self):
        """(item, model_a, model_b, winner) of a filled row, None for an empty one."""
        data = self.cleaned_data
        if not data.get("question"):
            return None
        return data["item"], data["model_a"], data["model_b"], data["winner"]


GoldPairFormSet = forms.formset_factory(GoldPairForm, extra=0, max_num=MAX_GOLD_ROWS, validate_max=True)
GOLD_FIELDS = ("question", "model_a", "model_b", "winner")


def gold_rows_typed(data) -> list[dict]:
    """The gold rows as typed in a posted page, to show them again (one more row, no errors yet)."""
    try:
        total = min(MAX_GOLD_ROWS, int(data.get("gold-TOTAL_FORMS") or 0))
    except ValueError:
        total = 0
    return [{name: data.get(f"gold-{index}-{name}", "") for name in GOLD_FIELDS} for index in range(total)]


class CampaignEditForm(ErrorSummary, NoLabelSuffix, forms.Form):
    """A running campaign's title and instructions, as its page edits them (campaign_update checks)."""

    title = CampaignForm.base_fields["title"]
    title_zh = CampaignForm.base_fields["title_zh"]
    instructions_en = CampaignForm.base_fields["instructions_en"]
    instructions_zh = CampaignForm.base_fields["instructions_zh"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Ids of their own: the campaign page holds other forms.
        self.auto_id = "settings_%s"
