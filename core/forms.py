"""What every form of the researcher's pages shares."""

from typing import Any, cast

from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy as _

from core.models import Workspace
from core.roles import Role
from core.workspaces import workspace_for_new, workspaces_of


class ErrorSummary:
    """A form that says everything wrong at once: after a failed submit its first wrong field has
    the focus (the autofocus attribute: it works without JavaScript), and error_summary() lists
    every error, linked to its field, for the top of the page (templates/includes/error_summary.html)."""

    def full_clean(self):
        super().full_clean()  # type: ignore[misc]
        form = cast(forms.BaseForm, self)
        if first := next((name for name in form.fields if name in form.errors), None):
            form.fields[first].widget.attrs["autofocus"] = True

    def error_summary(self) -> list[dict]:
        form = cast(forms.BaseForm, self)
        rows = [{"anchor": "", "label": "", "message": message} for message in form.non_field_errors()]
        for name in form.fields:
            if name in form.errors:
                field = form[name]
                # A group of radios or checkboxes is reached through its first input.
                several = isinstance(field.field.widget, forms.RadioSelect | forms.CheckboxSelectMultiple)
                anchor = f"{field.auto_id}_0" if several else field.auto_id
                # An ErrorList hands out its messages as text.
                messages = cast(list[str], form.errors[name])
                rows.append({"anchor": anchor, "label": field.label, "message": " ".join(messages)})
        return rows


class NoLabelSuffix:
    """Labels without Django's trailing colon: a label sits above its field, and in Chinese an
    ASCII colon after the label doubles the punctuation."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)


class UploadField(forms.FileField):
    """A file imported from a page: refused, naming the limit, when larger than
    UPLOAD_MAX_REQUEST_BYTES (the request-body limit of the import routes)."""

    def clean(self, data, initial=None):
        upload = super().clean(data, initial)
        if upload and upload.size > settings.UPLOAD_MAX_REQUEST_BYTES:
            raise forms.ValidationError(
                _("The file is larger than %(limit)d MB.")
                % {"limit": settings.UPLOAD_MAX_REQUEST_BYTES // (1024 * 1024)}
            )
        return upload


class WorkspaceField(forms.ModelChoiceField):
    def label_from_instance(self, obj):
        return obj.name if obj.name == obj.slug else f"{obj.name} ({obj.slug})"


class WorkspaceChoice:
    """Where a new object goes, on a form that creates one (a study, an imported dataset, an
    endpoint). `creator`: the person creating it; the form then offers a `workspace` field, first,
    when they hold `workspace_role` in more than one workspace, its choices exactly those, the
    one core.workspaces.workspace_for_new picks chosen at first. Any other value posted (a
    workspace they do not hold, an id made up) is an error on that field, so nothing is created.
    A person with one such workspace sees no field, and whatever they post goes there."""

    workspace_role = Role.RESEARCHER.value
    # Given by the Django form this is mixed into.
    fields: dict[str, forms.Field]
    cleaned_data: dict[str, Any]

    def __init__(self, *args, creator=None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.workspace_default: Workspace | None = None
        if creator is None:
            return
        self.workspace_default = workspace_for_new(creator, self.workspace_role)
        held = workspaces_of(creator, self.workspace_role).order_by("slug")
        if len(held[:2]) < 2:
            return
        field = WorkspaceField(
            label=_("Workspace"),
            queryset=held,
            empty_label=None,
            initial=self.workspace_default.pk if self.workspace_default else None,
            help_text=_("Who sees it: the members of this workspace."),
        )
        # First on the form: where the object goes is decided before what it holds.
        self.fields = {"workspace": field, **self.fields}

    def workspace_chosen(self) -> Workspace | None:
        """The workspace chosen on the valid form, else the one the person would get anyway."""
        return self.cleaned_data.get("workspace") or self.workspace_default
