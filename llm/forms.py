"""The researcher's form for an endpoint. It parses input; llm.services saves it."""

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from core.forms import ErrorSummary, NoLabelSuffix, WorkspaceChoice
from llm.config import max_tokens_problem
from llm.models import Endpoint
from llm.services import KEY_ROUTE_FIELDS

ENDPOINT_FIELDS = [
    "name",
    "base_url",
    "api_key_env",
    "default_model",
    "max_in_flight",
    "requests_per_minute",
    "tokens_per_minute",
    "timeout_seconds",
    "max_retries",
    "max_tokens",
    "input_price_per_million",
    "output_price_per_million",
    "batch_input_price_per_million",
    "batch_output_price_per_million",
]


class EndpointForm(ErrorSummary, WorkspaceChoice, NoLabelSuffix, forms.ModelForm):
    """An endpoint's settings; a new one's workspace too (`creator`: see WorkspaceChoice)."""

    class Meta:
        model = Endpoint
        fields = ENDPOINT_FIELDS
        labels = {
            "name": _("Name"),
            "base_url": _("Base URL"),
            "api_key_env": _("Environment variable holding the API key"),
            "default_model": _("Default model"),
            "max_in_flight": _("Calls in flight at most"),
            "requests_per_minute": _("Requests per minute at most"),
            "tokens_per_minute": _("Tokens per minute at most"),
            "timeout_seconds": _("Timeout per call (seconds)"),
            "max_retries": _("Retries after a failed call"),
            "max_tokens": _("Max tokens per reply"),
            "input_price_per_million": _("Price per million input tokens"),
            "output_price_per_million": _("Price per million output tokens"),
            "batch_input_price_per_million": _("Batch price per million input tokens"),
            "batch_output_price_per_million": _("Batch price per million output tokens"),
        }
        help_texts = {
            "name": _("How runs and commands name this endpoint (--endpoint NAME)."),
            "base_url": _(
                "An OpenAI-compatible server, usually ending in /v1: https://api.openai.com/v1, "
                "http://127.0.0.1:8080/v1 (llama.cpp), http://127.0.0.1:11434/v1 (Ollama)."
            ),
            "api_key_env": _(
                "Only the variable's name is stored, never the key. Set the variable where the web "
                "server and the workers run (e.g. in .env). A key is sent only to the hosts the LLM_KEY_HOSTS "
                "setting binds it to. Empty: no key is sent (a local server needs none)."
            ),
            "default_model": _("Used by the connection test and as the suggested judge model."),
            "max_in_flight": _(
                "Calls in flight across a run's workers. Empty: auto, the window finds the server's capacity "
                "(a local server with a few slots is best left on auto)."
            ),
            "timeout_seconds": _(
                "Counted from when a call is sent, not while it waits for its turn. Empty: long enough for "
                "the reply asked (max tokens at 5 a second, at least 120 s), which suits a slow local model."
            ),
            "max_tokens": _(
                "Longest reply of every call. Empty: each kind of call's default (judging, generation, "
                "reference drafting, translation)."
            ),
            "requests_per_minute": _("Empty: no pace, only the in-flight limit."),
            "tokens_per_minute": _(
                "Prompt tokens (estimated before sending) plus the max tokens asked, as providers count them; "
                "shared by every worker and run on this endpoint. Empty: no limit."
            ),
            "input_price_per_million": _("Prices only feed cost estimates; empty means unknown."),
            "output_price_per_million": _("In the same currency as the input price."),
            "batch_input_price_per_million": _(
                "Through the endpoint's Batch API (batch runs and generations). Empty: half the live price."
            ),
            "batch_output_price_per_million": _("Empty: half the live price."),
        }
        widgets = {
            "base_url": forms.URLInput(attrs={"placeholder": "http://127.0.0.1:8080/v1", "inputmode": "url"}),
            "api_key_env": forms.TextInput(attrs={"autocapitalize": "characters", "spellcheck": "false"}),
        }

    def __init__(self, *args: Any, key_route_locked: bool = False, **kwargs: Any) -> None:
        """`key_route_locked`: the person may not change where the endpoint sends its key (they
        are not an admin of its workspace); its base URL and key variable are shown read-only."""
        super().__init__(*args, **kwargs)
        # Empty sends no key; a new endpoint starts with none rather than the organisation's.
        self.fields["api_key_env"].required = False
        if self.instance.pk is None:
            self.initial["api_key_env"] = ""
        self.key_route_locked = key_route_locked
        for name in KEY_ROUTE_FIELDS if key_route_locked else ():
            # A page offers no change its viewer may not make (llm.services.endpoint_save refuses it).
            self.fields[name].disabled = True
            self.fields[name].help_text = _("Only an admin of workspace %(workspace)s changes this.") % {
                "workspace": self.instance.workspace.slug
            }

    def values(self) -> dict[str, Any]:
        """The settings to save, from the valid form. A browser never sends a read-only field, and
        Django ignores one sent; a value sent anyway for the base URL or key variable (a script, a
        forged post) is handed on, so that endpoint_save refuses it with its reason, as before."""
        values = {name: self.cleaned_data[name] for name in ENDPOINT_FIELDS}
        for name in KEY_ROUTE_FIELDS if self.key_route_locked else ():
            posted = self.data.get(self.add_prefix(name))
            if posted is not None:
                values[name] = posted.strip()
        return values

    def clean_api_key_env(self) -> str:
        return (self.cleaned_data.get("api_key_env") or "").strip()

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        if name.lower() == "default":
            raise forms.ValidationError(
                _("'default' is the endpoint set by OPENAI_BASE_URL in the environment; choose another name.")
            )
        return name

    def clean_timeout_seconds(self) -> float | None:
        value = self.cleaned_data["timeout_seconds"]
        if value is not None and value < 0.1:
            raise forms.ValidationError(_("A timeout is at least 0.1 seconds."))
        return value

    def clean_max_in_flight(self) -> int | None:
        value = self.cleaned_data["max_in_flight"]
        if value is not None and value < 1:
            raise forms.ValidationError(_("At least one call must be allowed in flight."))
        return value

    def clean_max_tokens(self) -> int | None:
        value = self.cleaned_data["max_tokens"]
        problem = max_tokens_problem(value)
        if problem:
            raise forms.ValidationError(problem)
        return value


class ConnectionTestForm(ErrorSummary, NoLabelSuffix, forms.Form):
    model = forms.CharField(
        label=_("Model to ask"),
        max_length=128,
        required=False,
        help_text=_("Empty: the endpoint's default model."),
    )
