"""Annotators' blind pages and the researcher's results page. Thin: parse, call, render."""

import json
from typing import cast

from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from annotation.access import annotator_campaign, annotator_required, researcher_campaign, researcher_required
from annotation.campaign_edit_views import campaign_settings_context
from annotation.campaigns import campaign_archive_check, campaign_create
from annotation.design import DESIGN_ROUNDS, DESIGN_WHAT, design_summary
from annotation.errors import AnnotationError, CampaignSlugTaken, CampaignTitleTaken
from annotation.figures import DEFAULT_ROUNDS, figures_read
from annotation.forms import GOLD_ROWS, MAX_GOLD_ROWS, CampaignForm, GoldPairFormSet, gold_rows_typed
from annotation.pair_status import campaign_pair_status
from annotation.reliability_report import RELIABILITY_ROUNDS
from annotation.report import default_run_for
from annotation.selectors import (
    annotator_by_username,
    annotator_progress,
    assignment_display,
    campaigns_for_annotator,
    gold_question_choices,
)
from annotation.services import assignment_next, assignment_skip, nothing_leased_reason, vote_cast, vote_undo
from annotation.style_report import PAGE_ROUNDS, style_beside_plain
from annotation.upkeep import pair_reassign, pair_release
from core import plots
from core.archive_views import archive_page_action
from core.list_workspaces import list_workspaces
from core.params import ParameterError, int_param
from core.roles import AuthenticatedHttpRequest, Role
from curation.choices import intent_label
from curation.datasets.selectors import DatasetNotFound, dataset_by_name, datasets_visible
from judging.errors import RunNotFound
from judging.models import JudgeRun
from judging.runs.lookup import run_by_id
from stats import correlation
from stats.elo import bt_on_elo


@annotator_required
def annotate_index(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The campaigns this annotator works in, with their own progress; across several workspaces,
    each names its workspace and `?workspace=` keeps the list to one (core.list_workspaces)."""
    workspaces = list_workspaces(request, Role.ANNOTATOR.value)
    campaigns = workspaces.narrow(campaigns_for_annotator(user=request.user))
    return render(request, "annotation/index.html", {"campaigns": campaigns, "workspaces": workspaces})


@annotator_required
def annotate(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """The next blind pair: question, answers A and B, the four choices, skip and undo."""
    campaign = annotator_campaign(request.user, slug)
    assignment = assignment_next(campaign=campaign, annotator=request.user)
    progress = annotator_progress(campaign=campaign, annotator=request.user)
    instructions = campaign.instructions_zh if get_language().startswith("zh") else campaign.instructions_en
    context = {
        "campaign": campaign,
        "instructions": instructions or campaign.instructions_en,
        "progress": progress,
        "can_undo": progress["can_undo"],
        "shown": assignment_display(assignment=assignment) if assignment else None,
        # Why nothing is shown: closed, wait for others, or done (read only then).
        "reason": nothing_leased_reason(campaign=campaign, annotator=request.user) if assignment is None else "",
        # While work goes on every item seen counts (telling gold ones apart would reveal them);
        # once nothing is left the end screen counts the campaign's pairs, gold checks apart.
        "items_voted": progress["voted"] if assignment else progress["pairs_voted"],
    }
    return render(request, "annotation/annotate.html", context)


@require_POST
@annotator_required
def vote(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    campaign = annotator_campaign(request.user, slug)
    try:
        vote_cast(
            campaign=campaign,
            token=request.POST.get("token", ""),
            annotator=request.user,
            choice=request.POST.get("choice", ""),
            comment=request.POST.get("comment", ""),
        )
    except AnnotationError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, _("Vote saved."))
    return redirect("annotation:annotate", slug=campaign.slug)


@require_POST
@annotator_required
def skip(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    campaign = annotator_campaign(request.user, slug)
    try:
        assignment_skip(campaign=campaign, token=request.POST.get("token", ""), annotator=request.user)
    except AnnotationError as error:
        messages.error(request, str(error))
    else:
        messages.info(request, _("Skipped. You will not see this item again."))
    return redirect("annotation:annotate", slug=campaign.slug)


@require_POST
@annotator_required
def undo(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    campaign = annotator_campaign(request.user, slug)
    try:
        vote_undo(campaign=campaign, annotator=request.user)
    except AnnotationError as error:
        messages.error(request, str(error))
    else:
        messages.info(request, _("Your last vote was taken back. Vote on it again."))
    return redirect("annotation:annotate", slug=campaign.slug)


# The long tables of stored figures (pairs of annotators, each annotator against the judge, the
# annotators) list this many rows at a time; the agreement export and the quality API have them all.
ROWS_PER_PAGE = 50


def _page_number(request: HttpRequest, name: str) -> int:
    """A page's number from the query (a hand-edited one that is not a number is the first)."""
    try:
        return int_param(request.GET.get(name), name=name, default=1) or 1
    except ParameterError:
        return 1


def _paged(request: HttpRequest, rows: list, name: str, anchor: str):
    """One page of a long table, with links to the pages before and after it (the rest of the
    query kept, the page scrolled back to the table)."""
    page = Paginator(rows, ROWS_PER_PAGE).get_page(_page_number(request, name))
    query = request.GET.copy()

    def link(number: int) -> str:
        query[name] = str(number)
        return f"?{query.urlencode()}#{anchor}"

    page.previous_link = link(page.previous_page_number()) if page.has_previous() else ""  # type: ignore[attr-defined]
    page.next_link = link(page.next_page_number()) if page.has_next() else ""  # type: ignore[attr-defined]
    return page


@researcher_required
def results(request: HttpRequest, slug: str) -> HttpResponse:
    """Bradley-Terry with intervals, style-controlled BT, judge alignment plots, agreement and
    annotator quality, as stored by the background task (the page says when they were computed
    and whether newer votes are waiting)."""
    campaign = researcher_campaign(slug, request.user)
    try:
        # A hand-edited link still shows the page: more rounds than 5000 are 5000.
        rounds = min(5000, int_param(request.GET.get("rounds"), name="rounds", default=DEFAULT_ROUNDS))
    except ParameterError:
        rounds = DEFAULT_ROUNDS
    run_id = int_param(request.GET.get("run"), name="run")
    run = None
    if run_id is not None:
        try:
            run = run_by_id(
                run_id=run_id, queryset=JudgeRun.objects.filter(dataset=campaign.dataset), user=request.user
            )
        except RunNotFound:
            run = None  # a hand-edited link shows the default run's alignment
    run = run or default_run_for(dataset=campaign.dataset)
    payload, figures = figures_read(what="campaign", campaign=campaign, run=run, rounds=rounds)
    style, _style_figures = figures_read(what="style", campaign=campaign, rounds=min(rounds, PAGE_ROUNDS))
    reliability, _reliability_figures = figures_read(
        what="reliability", campaign=campaign, rounds=min(rounds, RELIABILITY_ROUNDS)
    )
    design, design_figures = (
        figures_read(what=DESIGN_WHAT, campaign=campaign, rounds=DESIGN_ROUNDS, seed=0)
        if campaign.is_adaptive
        else (None, None)
    )
    context = {
        "campaign": campaign,
        "run": run,
        "figures": figures,
        "design": design_summary(campaign=campaign, payload=design),
        "design_figures": design_figures,
        # Live, not stored: a few small queries however many votes, a page of waiting pairs at a time.
        "pair_status": campaign_pair_status(campaign=campaign, page=_page_number(request, "pairs_page")),
        "figures_rounds": rounds,
        "manifest_json": json.dumps(campaign.manifest, ensure_ascii=False, indent=1),
        **campaign_settings_context(campaign=campaign),
    }
    # Read with defaults: figures stored by an older version render until they are computed again.
    if payload is None or not payload.get("bt"):
        return render(request, "annotation/results.html", context)
    bt, report = payload["bt"], payload.get("report")
    try:
        bt = bt_on_elo(bt, anchor=request.GET.get("anchor") or None)
    except ValueError:
        # A hand-edited link naming a model that is not ranked: the mean model reads 1000.
        bt = bt_on_elo(bt)
    context.update(
        {
            "bt": bt,
            "style": style,
            # The style fit is stored apart (fewer rounds); until it is computed the plain fit shows alone.
            "style_rows": style_beside_plain(bt, style) if style else [],
            "report": report,
            "report_reason": payload.get("report_reason"),
            "quality": payload.get("quality", []),
            "quality_page": _paged(request, payload.get("quality", []), "annotators_page", "quality-heading"),
            # Stored apart (each round refits the reliabilities too): shown once computed.
            "reliability": reliability if reliability and reliability.get("estimable", True) else None,
            "reliability_reason": reliability.get("reason") if reliability else None,
            "bt_plot": plots.interval_bars([(s["label"], s["score"], s["lower"], s["upper"]) for s in bt["scores"]]),
            "bt_zero_width": any(s["lower"] is not None and s["lower"] == s["upper"] for s in bt["scores"]),
            "min_points": correlation.MIN_POINTS,
        }
    )
    if report:
        agreement = report["agreement"]
        context["annotator_pairs"] = _paged(request, agreement["cohen_pairs"], "kappa_page", "annotator-pairs-heading")
        context["against_judge"] = _paged(request, agreement["against_judge"], "judge_page", "against-judge-heading")
        context["bt_judge_plot"] = plots.scatter(
            [(p["model"], p["judge"], p["bt"]) for p in report["bt_vs_judge"]["points"]]
        )
        context["satisfaction_plot"] = plots.scatter(
            [
                (intent_label(p["intent"]), p["judge"], p["satisfaction"])
                for p in report["satisfaction_vs_judge"]["points"]
            ]
        )
    return render(request, "annotation/results.html", context)


@require_POST
@researcher_required
def campaign_pairs(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """Release the skips of a waiting pair, or give it to an annotator; back to the pairs."""
    campaign = researcher_campaign(slug, request.user)
    action = request.POST.get("action", "")
    try:
        pair_id = int_param(request.POST.get("pair"), name="pair")
        if pair_id is None or action not in ("release", "reassign"):
            raise AnnotationError(_("Choose a pair and what to do with it."))
        if action == "release":
            names = pair_release(campaign=campaign, pair_id=pair_id, actor=request.user)
            messages.success(
                request,
                _("Pair %(pair)d may be offered again to %(names)s.") % {"pair": pair_id, "names": ", ".join(names)},
            )
        else:
            annotator = annotator_by_username(
                username=request.POST.get("annotator", ""), workspace_id=campaign.workspace_id
            )
            if annotator is None:
                raise AnnotationError(_("Choose an annotator of this campaign."))
            pair_reassign(campaign=campaign, pair_id=pair_id, annotator=annotator, actor=request.user)
            messages.success(
                request,
                _("Pair %(pair)d is leased to %(name)s.") % {"pair": pair_id, "name": annotator.get_username()},
            )
    except (AnnotationError, ParameterError) as error:
        messages.error(request, str(error))
    return redirect(reverse("annotation:results", args=[campaign.slug]) + "#pairs")


def _form_initial(form_class, data) -> dict:
    """A form's values as initial data, so a page shown again keeps what was typed without errors."""
    return {
        name: data.getlist(name) if isinstance(field, forms.MultipleChoiceField) else data.get(name)
        for name, field in form_class.base_fields.items()
        if name in data
    }


@researcher_required
def campaign_new(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Researchers design a campaign, its annotators and its gold pairs; a design that cannot work
    is shown again with the reasons beside the fields."""
    name = request.POST.get("dataset") or request.GET.get("dataset", "")
    try:
        dataset = dataset_by_name(name=name, user=request.user) if name else None
    except DatasetNotFound:
        dataset = None
    adding_row = request.method == "POST" and request.POST.get("action") == "add_gold"
    if request.method == "POST" and not adding_row:
        form = CampaignForm(request.POST, dataset=dataset, datasets=datasets_visible(user=request.user))
    else:
        initial = _form_initial(CampaignForm, request.POST) if adding_row else {"dataset": name} if dataset else {}
        form = CampaignForm(initial=initial, dataset=dataset, datasets=datasets_visible(user=request.user))
    if adding_row:
        rows = gold_rows_typed(request.POST)
        gold = GoldPairFormSet(prefix="gold", initial=(rows + [{}])[:MAX_GOLD_ROWS], form_kwargs={"dataset": dataset})
    elif "gold-TOTAL_FORMS" in request.POST:
        gold = GoldPairFormSet(request.POST, prefix="gold", form_kwargs={"dataset": dataset})
    else:
        # A post without gold rows (a script, or an older page) simply has none.
        gold = GoldPairFormSet(prefix="gold", initial=[{}] * GOLD_ROWS, form_kwargs={"dataset": dataset})
    if request.method == "POST" and not adding_row and form.is_valid() and (not gold.is_bound or gold.is_valid()):
        pairs = [pair for pair in (row.pair() for row in gold.forms) if pair] if gold.is_bound else []
        if form.cleaned_data["gold_every"] and not pairs:
            form.add_error(
                "gold_every",
                _("A gold pair every %(n)d items needs gold pairs: choose at least one below, or set 0.")
                % {"n": form.cleaned_data["gold_every"]},
            )
        else:
            try:
                campaign = campaign_create(**form.cleaned_data, gold_pairs=pairs, created_by=request.user)
            except CampaignSlugTaken as error:
                # The free proposal fills the field: creating again takes it.
                form.data = proposed = cast(QueryDict, form.data).copy()
                proposed["slug"] = error.proposal
                form.add_error("slug", error.message)
            except CampaignTitleTaken as error:
                form.add_error("title", error.message)
            except AnnotationError as error:
                form.add_error(None, str(error))
            else:
                if campaign.is_adaptive:
                    created = _("Campaign %(slug)s created: it chooses up to %(n)d pairs as the votes come in.") % {
                        "slug": campaign.slug,
                        "n": campaign.pairs_planned,
                    }
                else:
                    created = _("Campaign %(slug)s created with %(n)d pairs.") % {
                        "slug": campaign.slug,
                        "n": campaign.pairs.count(),
                    }
                messages.success(request, created)
                return redirect(reverse("annotation:results", args=[campaign.slug]))
    failed = request.method == "POST" and not adding_row
    return render(
        request,
        "annotation/campaign_new.html",
        {
            "form": form,
            "gold": gold,
            "dataset": dataset,
            "datasets": datasets_visible(user=request.user).active().order_by("name").values_list("name", flat=True),
            "gold_questions": gold_question_choices(dataset=dataset) if dataset else [],
        },
        status=400 if failed else 200,
    )


@researcher_required
@require_POST
def campaign_archive_view(request: AuthenticatedHttpRequest, slug: str, archived: bool) -> HttpResponse:
    """The campaign page's Archive (confirmed on the page) and Restore buttons."""
    campaign = researcher_campaign(slug, request.user)
    back = reverse("annotation:results", args=[campaign.slug])
    check = campaign_archive_check
    return archive_page_action(request, obj=campaign, archived=archived, kind="campaign", check=check, back=back)
