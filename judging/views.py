"""Researcher pages of judge runs and templates: parse, call one service or selector, render."""

import hashlib
import json
import os
import secrets
from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from core.archive_views import archive_page_action
from core.archiving import ArchivedError, refuse_if_archived
from core.list_workspaces import list_workspaces
from core.params import ParameterError, int_param
from core.plots import bar_chart
from core.roles import AuthenticatedHttpRequest, Role
from core.workspaces import current_of, in_workspace, workspace_for_new, workspace_get
from curation.choices import Intent, Language
from curation.datasets.selectors import DatasetNotFound, dataset_by_name, datasets_visible
from curation.datasets.services import VersionError
from curation.models import Dataset
from judging.access import researcher_required
from judging.benchmarks.registry import benchmarks
from judging.dispatch import run_enqueue
from judging.engine.queue import run_cancel
from judging.errors import RunError, RunNotFound
from judging.forms import DatasetChoiceForm, RunForm
from judging.models import JudgeMode, JudgeRun, JudgeTemplate
from judging.prompts.placeholders import PLACEHOLDERS
from judging.prompts.templates import TemplateBuiltIn, template_copy, template_revise
from judging.results.figures import run_figures_read
from judging.results.leaderboard import BEST_MARKED
from judging.results.selectors import (
    candidates_with_answers,
    judge_model_mismatch,
    run_get,
    run_list_with_progress,
    run_progress,
    template_list,
    template_versions,
    template_versions_diff,
    templates_visible,
)
from judging.runs.archive import run_archive_check
from judging.runs.creation import run_batch_check, run_start_once
from judging.runs.difficulty import difficulty_filter_from_run
from judging.runs.lookup import run_by_id
from judging.runs.manifest import run_manifest
from judging.runs.planning import run_plan
from judging.runs.records import run_change_record
from judging.runs.rerun import run_rerun
from judging.runs.resume import run_reparse, run_resume
from judging.runs.spec import run_spec_from, run_spec_values
from llm.config import default_endpoint_limits
from llm.errors import EndpointError
from llm.selectors import endpoint_list, endpoint_prices
from stats.sample_size import MIN_DECISIVE

GROUP_LABELS = {"intent": dict(Intent.choices), "language": dict(Language.choices)}

# What each flag of a suspicious answer (judging/prompts/untrusted.py: suspicious_flags) means.
FLAG_LABELS = {
    "judge_format": gettext_lazy("carries judge-format strings"),
    "instructions_to_judge": gettext_lazy("gives the judge instructions"),
    "delimiter": gettext_lazy("tries to close its own delimiter"),
}


def flag_label(flag: str) -> str:
    return str(FLAG_LABELS.get(flag, flag))


def _load_run(request: HttpRequest, run_id: int) -> JudgeRun:
    """The run for its pages: 404 when there is none, or it is another workspace's."""
    try:
        return run_get(run_id=run_id, user=request.user)
    except RunNotFound:
        raise Http404 from None


def _marked(cell: dict) -> dict:
    """A stored cell with its mark: 1-3 for the best three of its column (ties share one)."""
    rank = cell.get("rank")
    return {**cell, "best": rank if rank is not None and rank <= BEST_MARKED else None}


def _pointwise_sections(board: dict) -> list[dict]:
    """The stored board's tables as the page lays them out (cells are the stored dicts)."""
    sections = []
    for group, table in (board.get("tables") or {}).items():
        labels = GROUP_LABELS.get(group, {})
        columns = [{"key": c, "label": labels.get(c, c) or "—"} for c in table.get("columns", [])]
        rows = [
            {
                "model": row.get("model", ""),
                "overall": _marked(row.get("overall") or {}),
                "cells": [_marked((row.get("cells") or {}).get(c["key"]) or {}) for c in columns],
            }
            for row in table.get("rows", [])
        ]
        sections.append({"group": group, "columns": columns, "rows": rows})
    return sections


@researcher_required
def run_list(request: HttpRequest) -> HttpResponse:
    """The runs of the person's workspaces, newest first; across several, each names its workspace
    and `?workspace=` keeps the list to one (core.list_workspaces)."""
    workspaces = list_workspaces(request, Role.RESEARCHER.value)
    runs = workspaces.narrow(run_list_with_progress(user=request.user))[:200]
    return render(request, "judging/run_list.html", {"runs": runs, "workspaces": workspaces})


def _benchmark_tables(board: dict) -> list[dict]:
    """A benchmark's own leaderboard kept in the board (Arena-Hard's: score, 95 % CI, length, style
    control), with its intervals as the leaderboard prints them."""
    tables = []
    for name, benchmark in benchmarks().items():
        table = board.get(f"{name}_table")
        if not table:
            continue
        rows = []
        for row in table.get("rows", []):
            shown = dict(row)
            for prefix in ("", "style_"):
                score, lower, upper = row.get(f"{prefix}score"), row.get(f"{prefix}lower"), row.get(f"{prefix}upper")
                shown[f"{prefix}interval"] = (
                    f"(-{score - lower:.2f}, +{upper - score:.2f})" if None not in (score, lower, upper) else "—"
                )
            rows.append(shown)
        tables.append({"name": name, "paper": benchmark.paper, **table, "rows": rows})
    return tables


@researcher_required
def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    """The run, its progress (from the run's running counts) and its leaderboard, diagnostics,
    failures and flagged answers as the background task stored them, with when they were
    computed."""
    run = _load_run(request, run_id)
    payload, figures = run_figures_read(run=run)
    context: dict[str, Any] = {
        "run": run,
        # Read live (one aggregate): a fallback model shows while the run is still going.
        "model_mismatch": judge_model_mismatch(run=run),
        "progress": run_progress(run=run),
        "figures": figures,
        "min_decisive": MIN_DECISIVE,
    }
    if payload is None:
        context["manifest"] = run_manifest(run=run)
        return render(request, "judging/run_detail.html", context)
    # Read with defaults: figures stored by an older version render until they are computed again.
    board = payload.get("board") or {}
    context.update(
        {
            "board": board,
            "failures": payload.get("failures", []),
            "flagged": [
                {**row, "flag_labels": [flag_label(flag) for flag in row.get("flags", [])]}
                for row in payload.get("flagged", [])
            ],
            "diagnostics": payload.get("diagnostics"),
            "probe": payload.get("probe") if run.injection_probe else None,
            "drift": payload.get("drift"),
            "manifest": payload.get("manifest") or run_manifest(run=run),
        }
    )
    if run.mode == JudgeMode.PAIRWISE:
        context["benchmark_tables"] = _benchmark_tables(board)
        context["pairwise"] = [
            {
                **row,
                **{
                    f"{key}_pct": (100 * row[key] if row.get(key) is not None else None)
                    for key in (
                        "win_rate",
                        "win_rate_se",
                        "lose_rate",
                        "tie_rate",
                        "error_rate",
                        "lc_win_rate",
                        "lc_low",
                        "lc_high",
                    )
                },
            }
            for row in board.get("pairwise", [])
        ]
        context["chart"] = bar_chart(
            [
                (
                    r["model"],
                    100 * r["win_rate"],
                    100 * (r["win_rate"] - 1.96 * r["win_rate_se"]) if r["win_rate_se"] is not None else None,
                    100 * (r["win_rate"] + 1.96 * r["win_rate_se"]) if r["win_rate_se"] is not None else None,
                )
                for r in board.get("pairwise", [])
                if r.get("win_rate") is not None
            ],
            top=100,
        )
    else:
        context["sections"] = _pointwise_sections(board)
        context["zero_width"] = any(
            cell.get("note")
            for section in context["sections"]
            for row in section["rows"]
            for cell in [row["overall"], *row["cells"]]
        )
        context["chart"] = bar_chart(
            [
                (r.get("model", ""), r["overall"]["mean"], r["overall"].get("low"), r["overall"].get("high"))
                for r in ((board.get("tables") or {}).get("overall") or {}).get("rows", [])
                if (r.get("overall") or {}).get("mean") is not None
            ],
            top=10,
        )
        cross = payload.get("cross")
        context["cross"] = (
            cross if cross and len(cross.get("evaluators", [])) * len(cross.get("sources", [])) > 1 else None
        )
    return render(request, "judging/run_detail.html", context)


@researcher_required
@require_POST
def run_action(request: AuthenticatedHttpRequest, run_id: int, action: str) -> HttpResponse:
    # The plain row: an action needs none of what the run's page shows with it.
    try:
        run = run_by_id(run_id=run_id, user=request.user)
    except RunNotFound:
        raise Http404 from None
    try:
        refuse_if_archived(run)
        return _run_action(request, run, action)
    except ArchivedError as error:
        # The run archived, or (for all but a cancel, which only stops spending) its dataset.
        messages.error(request, error.message)
        return redirect("judging:run-detail", run_id=run.pk)


def _run_action(request: AuthenticatedHttpRequest, run: JudgeRun, action: str) -> HttpResponse:
    if action == "resume":
        count = run_resume(run=run, force=request.POST.get("force") == "1")
        run_change_record(actor=request.user, run=run, change="resumed", details={"shards": count})
        messages.success(request, _("%(count)d shard(s) queued again.") % {"count": count})
    elif action == "cancel":
        try:
            run_cancel(run=run, actor=request.user)
        except RunError as error:
            messages.error(request, str(error))
        else:
            messages.success(
                request,
                _("The run is cancelled; the provider is asked to stop its batches, and what they finished is kept.")
                if run.batch
                else _("The run is cancelled; running shards stop at their next heartbeat."),
            )
    elif action == "rerun":
        try:
            new = run_rerun(run=run, fresh_calls=True, created_by=request.user)
        except RunError as error:
            messages.error(request, str(error))
            return redirect("judging:run-detail", run_id=run.pk)
        run_enqueue(run=new)
        run_change_record(actor=request.user, run=new, change="rerun", details={"of": run.pk})
        messages.success(request, _("Run #%(id)d started: a re-run of this one with fresh calls.") % {"id": new.pk})
        return redirect("judging:run-detail", run_id=new.pk)
    elif action == "reparse":
        changed = run_reparse(run=run)
        run_change_record(actor=request.user, run=run, change="reparsed", details={"changed": changed})
        messages.success(request, _("%(count)d judgment(s) changed after parsing again.") % {"count": changed})
    else:
        raise Http404
    return redirect("judging:run-detail", run_id=run.pk)


@researcher_required
def templates(request: HttpRequest) -> HttpResponse:
    """The built-in templates and the current workspace's own, newest version of each."""
    latest: dict[tuple[int | None, str], JudgeTemplate] = {}
    for template in template_list(request.user):
        latest.setdefault((template.workspace_id, template.name), template)
    return render(request, "judging/template_list.html", {"templates": list(latest.values())})


def _copy_target(request: HttpRequest):
    """The workspace a built-in template is copied into: the current one, else the person's only
    (or default) workspace where they are researcher."""
    current = current_of(request.user)
    return workspace_for_new(request.user, Role.RESEARCHER.value, current.slug if current else "")


@researcher_required
def template_edit(request: AuthenticatedHttpRequest, template_id: int) -> HttpResponse:
    """Edit a workspace's template as a new version; unchanged text makes none. A built-in
    template is read-only: the page offers to copy it into the workspace instead."""
    template = get_object_or_404(templates_visible(request.user), pk=template_id)
    error = ""
    text = template.text
    builtin = template.workspace_id is None
    target = _copy_target(request) if builtin else None
    own_copy = (
        templates_visible(request.user).filter(workspace=target, name=template.name).order_by("-version").first()
        if target is not None
        else None
    )
    if request.method == "POST":
        text = request.POST.get("text", "")
        try:
            current, made = template_revise(template=template, text=text, user=request.user)
        except TemplateBuiltIn as problem:
            error = str(problem)
            text = template.text
        except RunError as problem:
            error = str(problem)
        else:
            if made:
                messages.success(request, _("Saved as version %(version)d.") % {"version": current.version})
            else:
                messages.info(
                    request,
                    _("Nothing changed: the text is the same as version %(version)d, so no new version was made.")
                    % {"version": current.version},
                )
            return redirect("judging:template-edit", template_id=current.pk)
    versions = list(template_versions(template=template))
    return render(
        request,
        "judging/template_edit.html",
        {
            "template": template,
            # Each version with the one before it, for its "changes" link.
            "versions": [(v, versions[i + 1] if i + 1 < len(versions) else None) for i, v in enumerate(versions)],
            "latest": versions[0] if versions else template,
            "placeholders": PLACEHOLDERS[template.mode],
            "text": text,
            "error": error,
            "builtin": builtin,
            "copy_target": target,
            "own_copy": own_copy,
        },
        status=400 if error else 200,
    )


@researcher_required
@require_POST
def template_copy_view(request: AuthenticatedHttpRequest, template_id: int) -> HttpResponse:
    """Copy a built-in template into the current workspace, then edit the copy there."""
    template = get_object_or_404(templates_visible(request.user).filter(workspace=None), pk=template_id)
    target = _copy_target(request)
    if target is None:
        raise Http404
    copy, made = template_copy(template=template, workspace=target, user=request.user)
    if made:
        messages.success(
            request,
            _("Copied to workspace %(workspace)s as version %(version)d; edit it here.")
            % {"workspace": target.name, "version": copy.version},
        )
    else:
        messages.info(request, _("This workspace has its own copy already; it is shown here."))
    return redirect("judging:template-edit", template_id=copy.pk)


@researcher_required
def template_diff(request: HttpRequest, old_id: int, new_id: int) -> HttpResponse:
    """What changed between two versions of one template."""
    visible = templates_visible(request.user)
    old = get_object_or_404(visible, pk=old_id)
    new = get_object_or_404(visible, pk=new_id, name=old.name, workspace=old.workspace_id)
    return render(
        request,
        "judging/template_diff.html",
        {
            "old": old,
            "new": new,
            "hunks": template_versions_diff(old=old, new=new),
            "versions": template_versions(template=old),
        },
    )


@researcher_required
def template_diff_pick(request: HttpRequest, template_id: int) -> HttpResponse:
    """The compare form's target: the diff page of the two chosen versions."""
    template = get_object_or_404(templates_visible(request.user), pk=template_id)
    try:
        old_id = int_param(request.GET.get("old"), name="old")
        new_id = int_param(request.GET.get("new"), name="new")
    except ParameterError:
        old_id = new_id = None
    if old_id is None or new_id is None:
        messages.error(request, _("Choose two versions to compare."))
        return redirect("judging:template-edit", template_id=template.pk)
    return redirect("judging:template-diff", old_id=old_id, new_id=new_id)


@researcher_required
@require_POST
def dataset_difficulty_view(request: AuthenticatedHttpRequest, dataset_id: int) -> HttpResponse:
    """Apply the difficulty filter of a judge run to a working dataset (posted from its page)."""
    workspace_get(Dataset.objects.all(), request.user, role=Role.RESEARCHER.value, pk=dataset_id)
    try:
        # A missing run is looked up as 0, which no run has: refused as an unknown one is.
        run_id = int_param(request.POST.get("run"), name="run", default=0)
        run = run_by_id(run_id=run_id, queryset=JudgeRun.objects.select_related("dataset"), user=request.user)
        percent = int_param(request.POST.get("percent"), name="percent", high=100, default=50)
        flt = difficulty_filter_from_run(run=run, percent=percent, created_by=request.user)
    except (VersionError, ArchivedError) as exc:
        # Before ValueError, which they are too: their own words say what stops the filter.
        messages.error(request, " ".join(exc.messages))
    except ValueError:  # a parameter that is no number, or no run with that number (RunNotFound)
        messages.error(request, _("Give the number of an existing judge run and a whole percentage."))
    else:
        messages.success(
            request,
            _("%(excluded)s of %(total)s items excluded.") % {"excluded": flt.excluded_count, "total": flt.item_count},
        )
    return redirect("curation:review-dataset", dataset_id=dataset_id)


def _plan_fingerprint(params: dict) -> str:
    """What a preview showed, so that a start with other settings shows the numbers first."""
    plain = {
        key: ([model.pk for model in value] if key == "candidates" else getattr(value, "pk", value))
        for key, value in params.items()
    }
    return hashlib.sha256(json.dumps(plain, sort_keys=True, default=str).encode()).hexdigest()[:32]


@researcher_required
def run_new(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Start a judge run: choose the dataset, then the run; the number of calls and the estimated
    cost are shown before it starts."""
    name = request.POST.get("dataset") or request.GET.get("dataset")
    try:
        dataset = dataset_by_name(name=name, user=request.user) if name else None
    except DatasetNotFound:
        dataset = None
    if dataset is None:
        choose = DatasetChoiceForm(request.GET if name else None, datasets=datasets_visible(user=request.user))
        return render(request, "judging/run_new.html", {"choose": choose}, status=400 if name else 200)
    # The dataset's workspace's endpoints: a run takes only those (names are unique there).
    endpoints = list(in_workspace(endpoint_list(user=request.user), dataset.workspace_id))
    try:
        default_limits = default_endpoint_limits()
    except EndpointError:
        default_limits = {}
    candidates = candidates_with_answers(dataset=dataset)
    form = RunForm(
        request.POST or None,
        dataset=dataset,
        candidates=candidates,
        endpoints=endpoints,
        default_model=os.environ.get("OPENAI_MODEL", ""),
        initial={"concurrency": default_limits.get("max_in_flight", "")},
    )
    preview = None
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            spec = run_spec_from(data, dataset=dataset)
            fingerprint = _plan_fingerprint(run_spec_values(spec))
            if request.POST.get("action") == "start" and request.POST.get("previewed") == fingerprint:
                # The preview's one-time token: the same preview submitted again (the back button)
                # shows the run it started instead of making a second one.
                token = request.POST.get("start_token", "").strip()[:64]
                run, made = run_start_once(
                    spec=spec, created_by=request.user, start_key=f"page:{token}" if token else ""
                )
                if not made:
                    messages.info(
                        request,
                        _("Run #%(id)d was already started from this preview: here it is (no second run was made).")
                        % {"id": run.pk},
                    )
                    return redirect("judging:run-detail", run_id=run.pk)
                run_enqueue(run=run)
                run_change_record(actor=request.user, run=run, change="started", details={"calls": run.total})
                if run.batch:
                    started = _("Run #%(id)d started: %(calls)d calls sent through the Batch API.") % {
                        "id": run.pk,
                        "calls": run.total,
                    }
                else:
                    started = _("Run #%(id)d started: %(calls)d calls in %(shards)d shard(s).") % {
                        "id": run.pk,
                        "calls": run.total,
                        "shards": run.shards.count(),
                    }
                messages.success(request, started)
                return redirect("judging:run-detail", run_id=run.pk)
            if request.POST.get("action") == "start":
                messages.info(request, _("The settings changed since the preview: check these numbers, then start."))
            plan = run_plan(spec=spec)
            run_batch_check(spec=spec)
        except RunError as problem:
            form.add_error(None, str(problem))
        else:
            endpoint = data["endpoint"]
            input_price, output_price = endpoint_prices(endpoint, batch=spec.batch)
            preview = {
                "plan": plan,
                "templates": sorted(plan.templates.values(), key=lambda t: t.name),
                "cost": plan.cost(input_price=input_price, output_price=output_price),
                "endpoint": endpoint,
                "batch": spec.batch,
                "fingerprint": fingerprint,
                "start_token": secrets.token_urlsafe(24),
            }
    return render(
        request,
        "judging/run_new.html",
        {"dataset": dataset, "form": form, "preview": preview, "has_candidates": candidates.exists()},
        status=400 if form.errors else 200,
    )


@researcher_required
def run_manifest_download(request: HttpRequest, run_id: int) -> HttpResponse:
    """The run's manifest as a JSON file."""
    run = _load_run(request, run_id)
    response = JsonResponse(run_manifest(run=run), json_dumps_params={"ensure_ascii": False, "indent": 1})
    response["Content-Disposition"] = f'attachment; filename="run-{run.pk}-manifest.json"'
    return response


@researcher_required
@require_POST
def run_archive_view(request: AuthenticatedHttpRequest, run_id: int, archived: bool) -> HttpResponse:
    """The run page's Archive (confirmed on the page) and Restore buttons."""
    try:
        run = run_by_id(run_id=run_id, user=request.user, queryset=JudgeRun.objects.select_related("dataset"))
    except RunNotFound:
        raise Http404 from None
    back = reverse("judging:run-detail", args=[run.pk])
    return archive_page_action(request, obj=run, archived=archived, kind="run", check=run_archive_check, back=back)
