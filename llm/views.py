"""Researchers' endpoint pages: list, create, edit, test the connection. Thin: parse, call, render."""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from core.list_workspaces import list_workspaces
from core.roles import AuthenticatedHttpRequest, Role, role_required
from core.workspaces import administers, workspace_get
from llm.errors import EndpointError
from llm.forms import ConnectionTestForm, EndpointForm
from llm.models import Endpoint
from llm.selectors import default_endpoint_summary, endpoint_by_name, endpoint_list, endpoint_row_config, key_is_set
from llm.services import (
    EndpointChangeRefused,
    EndpointNameTaken,
    endpoint_connection_test,
    endpoint_save,
    endpoint_test_record,
)

researcher_required = role_required(Role.RESEARCHER)


@researcher_required
def endpoints(request: HttpRequest) -> HttpResponse:
    """The default endpoint (from the environment) and the named ones of the person's workspaces;
    across several, each names its workspace and `?workspace=` keeps the list to one."""
    workspaces = list_workspaces(request, Role.RESEARCHER.value)
    rows = [
        {"endpoint": endpoint, "key_set": key_is_set(variable=endpoint.api_key_env)}
        for endpoint in workspaces.narrow(endpoint_list(user=request.user))
    ]
    return render(
        request,
        "llm/endpoint_list.html",
        {
            "default": default_endpoint_summary(),
            "rows": rows,
            "test_form": ConnectionTestForm(),
            "workspaces": workspaces,
        },
    )


def _edit(request: AuthenticatedHttpRequest, endpoint: Endpoint | None) -> HttpResponse:
    # A new endpoint's workspace is chosen on the form (when the person has several); never moved later.
    form = EndpointForm(
        request.POST or None,
        instance=endpoint,
        creator=None if endpoint else request.user,
        key_route_locked=endpoint is not None and not administers(request.user, endpoint.workspace_id),
    )
    if request.method == "POST" and form.is_valid():
        try:
            saved = endpoint_save(
                endpoint=endpoint, values=form.values(), actor=request.user, workspace=form.workspace_chosen()
            )
        except EndpointChangeRefused as error:
            form.add_error(None, str(error))
        except EndpointNameTaken as error:
            form.add_error("name", str(error))
        else:
            messages.success(request, _("Endpoint %(name)s saved.") % {"name": saved.name})
            return redirect("llm:endpoint-edit", endpoint_id=saved.pk)
    context = {
        "form": form,
        "endpoint": endpoint,
        "test_form": ConnectionTestForm(),
        "key_set": key_is_set(variable=endpoint.api_key_env) if endpoint else None,
    }
    return render(request, "llm/endpoint_form.html", context, status=400 if form.errors else 200)


@researcher_required
def endpoint_new(request: AuthenticatedHttpRequest) -> HttpResponse:
    return _edit(request, None)


@researcher_required
def endpoint_edit(request: AuthenticatedHttpRequest, endpoint_id: int) -> HttpResponse:
    return _edit(
        request, workspace_get(Endpoint.objects.all(), request.user, role=Role.RESEARCHER.value, pk=endpoint_id)
    )


@researcher_required
@require_POST
def endpoint_test(request: AuthenticatedHttpRequest) -> HttpResponse:
    """One cheap call to the named endpoint (or the default one); the answer or the error is shown."""
    name = request.POST.get("endpoint", "default")
    form = ConnectionTestForm(request.POST)
    model = form.cleaned_data["model"] if form.is_valid() else ""
    row = None
    try:
        if name != "default":
            row = endpoint_by_name(name=name, user=request.user)  # its page is where the result is shown
        config = endpoint_row_config(row)
    except EndpointError as error:
        messages.error(request, _("Connection test of %(name)s: %(error)s") % {"name": name, "error": error})
    else:
        result = endpoint_connection_test(config=config, model=model)
        endpoint_test_record(actor=request.user, result=result, endpoint=row)
        if result.ok:
            messages.success(
                request,
                _("Connection to %(name)s works: %(model)s answered “%(answer)s” in %(ms)d ms.")
                % {"name": result.endpoint, "model": result.model, "answer": result.answer, "ms": result.latency_ms},
            )
        else:
            messages.error(
                request,
                _("Connection to %(name)s failed: %(error)s") % {"name": result.endpoint, "error": result.error},
            )
    if row is None:
        return redirect("llm:endpoints")
    return redirect("llm:endpoint-edit", endpoint_id=row.pk)
