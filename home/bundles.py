"""A study's, dataset's, run's or campaign's bundle: which tables it holds, its manifest, and
the zip streamed (core/bundles.py), every table through the one export writer and scoped to
the person's workspaces like every export."""

import re
from dataclasses import dataclass

from django.http import Http404, StreamingHttpResponse

from annotation.models import Campaign
from core.bundles import BundleTable, iter_bundle
from core.exports import QUESTION_TEXT_EXPORTS, export_table
from core.roles import Role
from core.workspaces import scoped, workspace_ids
from curation.datasets.selectors import DatasetNotFound, dataset_by_name
from curation.models import Study
from judging.errors import RunNotFound
from judging.models import JudgeRun
from judging.runs.lookup import run_by_id
from judging.runs.manifest import dataset_entry, run_manifest

# The tables of each kind of bundle, in the order of the zip.
BUNDLE_TABLES = {
    "study": ["submissions", "cases", "votes", "judgments", "leaderboard", "manifests"],
    "dataset": ["items", "answers", "votes", "judgments", "leaderboard", "manifests", "bt", "agreement"],
    "run": ["judgments", "leaderboard", "manifests"],
    "campaign": ["votes", "bt", "agreement"],
}
BUNDLE_KINDS = tuple(BUNDLE_TABLES)


@dataclass(frozen=True)
class Bundle:
    filename: str
    title: str
    scope: dict
    manifest: dict


def bundle_find(*, kind: str, key: str, user) -> Bundle:
    """The bundle of the study (slug), dataset (name), run (id) or campaign (slug) named, among
    what the person may read as a researcher; Http404 for anything else."""
    researcher = Role.RESEARCHER.value
    if kind == "study":
        study = scoped(Study.objects.all(), user, role=researcher).filter(slug=key).first()
        if study is None:
            raise Http404("No such study.")
        manifest = {
            "study": {
                "slug": study.slug,
                "title_en": study.title_en,
                "title_zh": study.title_zh,
                "min_cases": study.min_cases,
                "max_cases": study.max_cases,
                "attention_answer": study.attention_answer,
                "completion_code": study.completion_code,
                "screenout_code": study.screenout_code,
            }
        }
        return Bundle(f"study-{study.slug}", f"Userbench study {study.slug}", {"study": study}, manifest)
    if kind == "dataset":
        try:
            dataset = dataset_by_name(name=key, user=user)
        except DatasetNotFound:
            raise Http404("No such dataset.") from None
        return Bundle(
            f"dataset-{dataset.name}",
            f"Userbench dataset {dataset.name}",
            {"dataset": dataset},
            {"dataset": dataset_entry(dataset)},
        )
    if kind == "run":
        try:
            run = run_by_id(
                run_id=int(key) if key.isdigit() else 0, queryset=JudgeRun.objects.select_related("dataset"), user=user
            )
        except RunNotFound:
            raise Http404("No such run.") from None
        return Bundle(f"run-{run.pk}", f"Userbench judge run {run.pk}", {"run": run}, {"run": run_manifest(run=run)})
    if kind == "campaign":
        campaign = scoped(Campaign.objects.select_related("dataset"), user, role=researcher).filter(slug=key).first()
        if campaign is None:
            raise Http404("No such campaign.")
        return Bundle(
            f"campaign-{campaign.slug}",
            f"Userbench campaign {campaign.slug}",
            {"campaign": campaign, "dataset": campaign.dataset},
            {"campaign": campaign.manifest or {"campaign": campaign.slug, "dataset": dataset_entry(campaign.dataset)}},
        )
    raise Http404("No such bundle.")


def bundle_tables(*, kind: str, bundle: Bundle, user, question_text: bool = False) -> list[BundleTable]:
    """The bundle's tables, each made by the one export writer (personal ones audited as every
    export of them is, "via" the bundle); their rows are read only as the zip is sent."""
    readable = workspace_ids(user, Role.RESEARCHER.value)
    tables = []
    for what in BUNDLE_TABLES[kind]:
        scope = dict(bundle.scope)
        if kind == "campaign":
            # A campaign's tables are its own: the campaign scope, not the whole dataset.
            scope = {"campaign": scope["campaign"]}
        table = export_table(
            what,
            **scope,
            actor=user,
            via="bundle",
            workspaces=readable,
            question_text=question_text and what in QUESTION_TEXT_EXPORTS,
        )
        tables.append(BundleTable(name=what, table=table))
    return tables


def _file_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "bundle"


def bundle_response(*, kind: str, key: str, user, fmt: str, question_text: bool = False) -> StreamingHttpResponse:
    """The bundle as a zip download, streamed."""
    bundle = bundle_find(kind=kind, key=key, user=user)
    tables = bundle_tables(kind=kind, bundle=bundle, user=user, question_text=question_text)
    chunks = iter_bundle(title=bundle.title, tables=tables, manifest=bundle.manifest, fmt=fmt)
    response = StreamingHttpResponse(chunks, content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{_file_name(bundle.filename)}.zip"'
    return response
