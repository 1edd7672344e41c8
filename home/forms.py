"""Forms of the people pages: they parse and validate; home.services makes the changes."""

from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.utils.translation import gettext_lazy as _

from core.forms import ErrorSummary, NoLabelSuffix
from core.roles import Role
from home.services import INVITATION_DAYS_DEFAULT, INVITATION_DAYS_MAX


def role_field(*, label, required: bool, initial=()) -> forms.MultipleChoiceField:
    return forms.MultipleChoiceField(
        label=label,
        choices=Role.choices,
        widget=forms.CheckboxSelectMultiple,
        required=required,
        initial=list(initial),
    )


class AccountForm(ErrorSummary, NoLabelSuffix, UserCreationForm):
    """Username and password twice (Django's checks: unique name, password validators), plus roles."""

    roles = role_field(label=_("Roles"), required=False, initial=[Role.ANNOTATOR])

    class Meta(UserCreationForm.Meta):
        fields = ("username",)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # The people page opens on the list of accounts, not in this form.
        self.fields["username"].widget.attrs.pop("autofocus", None)
        self.fields["password1"].help_text = _("At least 8 characters, not only digits, not a common password.")
        for name in ("password1", "password2"):
            self.fields[name].widget.attrs["autocomplete"] = "new-password"


class InvitationForm(ErrorSummary, NoLabelSuffix, forms.Form):
    roles = role_field(label=_("Roles of the invitee"), required=True, initial=[Role.ANNOTATOR])
    note = forms.CharField(
        label=_("Note for yourself"),
        max_length=200,
        required=False,
        help_text=_("For example “annotators, batch 2”. The invitee does not see it."),
    )
    days = forms.IntegerField(
        label=_("Valid for (days)"), min_value=1, max_value=INVITATION_DAYS_MAX, initial=INVITATION_DAYS_DEFAULT
    )


class RolesForm(ErrorSummary, NoLabelSuffix, forms.Form):
    roles = role_field(label=_("Roles"), required=False)
    # Shown (and then sent, with the "admin_shown" marker) only to those who may change it.
    admin = forms.BooleanField(label=_("Admin of this workspace"), required=False)


class AcceptInvitationForm(ErrorSummary, NoLabelSuffix, UserCreationForm):
    """The invitee chooses a username and a password; the roles come with the invitation."""

    class Meta(UserCreationForm.Meta):
        fields = ("username",)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["username"].widget.attrs["autocomplete"] = "username"
        for name in ("password1", "password2"):
            self.fields[name].widget.attrs["autocomplete"] = "new-password"


class MemberForm(ErrorSummary, NoLabelSuffix, forms.Form):
    """An existing account, by user name, added to the workspace with roles."""

    # Not "Username": that is the new account's field on the same page, and both read 用户名 in Chinese.
    username = forms.CharField(label=_("User name of an existing account"), max_length=150)
    roles = role_field(label=_("Roles"), required=False, initial=[Role.RESEARCHER])
    admin = forms.BooleanField(label=_("Admin of this workspace"), required=False)


class WorkspaceForm(ErrorSummary, NoLabelSuffix, forms.Form):
    """A new workspace (superusers): its short name for links, its name, and its first admin."""

    slug = forms.CharField(
        label=_("Short name"), max_length=50, help_text=_("Lower-case letters, digits and dashes, as in lab-b.")
    )
    name = forms.CharField(label=_("Name"), max_length=100)
    first_admin = forms.CharField(
        label=_("First admin (user name)"),
        max_length=150,
        required=False,
        help_text=_("An existing account; they become its admin and a researcher there."),
    )


class WorkspaceRenameForm(NoLabelSuffix, forms.Form):
    name = forms.CharField(label=_("Name"), max_length=100)
