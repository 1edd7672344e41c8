"""Judge templates: which template judges an item, the built-in ones, the published texts a
reproduction pins, and a researcher's edits and imports as new versions (runs keep pointing at
the version they used).

Built-in templates (no workspace) are shared and read-only; a workspace changes a copy of one
(`template_copy`), and a run judges with its dataset's workspace's version of a name first, else
the built-in one (`latest_templates`)."""

from __future__ import annotations

import re
from typing import cast

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Max, Q
from django.utils.translation import gettext as _

from core.audit import AuditAction, audit_record
from core.models import Workspace
from curation.models import Dataset, Item
from judging.benchmarks.registry import default_template_set, template_set_for_source, template_sets
from judging.errors import RunError
from judging.models import JudgeMode, JudgeRun, JudgeTemplate
from judging.prompts.building import TEMPLATE_SETS, default_templates, template_name_for
from judging.prompts.placeholders import template_problem_messages


def template_set_check(template_set: str | None, mode: str | None = None) -> None:
    """Refuse a template set Userbench does not ship, or one of another mode than the run's
    (RunError naming the ones it ships for that mode)."""
    known = [name for name, ts in template_sets().items() if mode is None or ts.mode == mode]
    if template_set not in known:
        raise RunError(
            _("Unknown template set %(name)s; choose among %(sets)s.")
            % {"name": repr(template_set), "sets": ", ".join(known)},
            parameter="template_set",
        )


def template_family(dataset: Dataset, mode: str = JudgeMode.POINTWISE) -> str:
    """The template set a dataset is judged with in `mode` unless the run names another: its
    benchmark's (judging/benchmarks/), else the mode's default set."""
    return template_set_for_source(dataset.source, mode).name


def run_template_family(run: JudgeRun, templates) -> str:
    """The template set a run was created with, read from the templates it recorded.

    A run's templates all belong to the set it was created with (e.g. only `urs-code/...`); a
    run without templates uses its dataset's set."""
    sets = {template.name.split("/", 1)[0] for template in templates}
    if len(sets) == 1 and next(iter(sets)) in TEMPLATE_SETS:
        return next(iter(sets))
    return template_family(run.dataset, run.mode)


def item_template_name(run: JudgeRun, item: Item, family: str) -> str:
    return template_name_for(
        family=family,
        mode=run.mode,
        intent=item.intent,
        category=item.category,
        subcategory=item.subcategory,
        language=item.language,
    )


@transaction.atomic
def templates_ensure_defaults() -> int:
    """Create version 1 of every built-in template that is missing; returns how many were made."""
    existing = set(JudgeTemplate.objects.filter(workspace=None).values_list("name", flat=True))
    missing = [
        JudgeTemplate(name=t.name, version=1, mode=t.mode, language=t.language, text=t.text)
        for t in default_templates()
        if t.name not in existing
    ]
    JudgeTemplate.objects.bulk_create(missing)
    return len(missing)


@transaction.atomic
def templates_as_published(*, template_set: str | None, mode: str) -> tuple[list[JudgeTemplate], list[str]]:
    """A version of every built-in template of the set (None: the mode's default set) whose
    text is exactly the one Userbench ships as the paper's, for a run that must judge with it
    whatever researchers changed since. Returns the versions and a note for each one stored anew.

    The newest version holding that text is taken; a name with none (never seeded, or edited
    since) gets it as its next version."""
    wanted = [
        template
        for template in default_templates()
        if template.mode == mode and template.name.split("/", 1)[0] == (template_set or default_template_set(mode).name)
    ]
    if not wanted:
        template_set_check(template_set)
    versions: dict[str, list[JudgeTemplate]] = {}
    builtin = JudgeTemplate.objects.filter(workspace=None)
    for row in builtin.filter(name__in=[t.name for t in wanted]).order_by("name", "version"):
        versions.setdefault(row.name, []).append(row)
    chosen: list[JudgeTemplate] = []
    notes: list[str] = []
    for template in wanted:
        rows = versions.get(template.name, [])
        same = [row for row in rows if row.text == template.text]
        if same:
            chosen.append(same[-1])
            continue
        stored = JudgeTemplate.objects.create(
            name=template.name,
            version=rows[-1].version + 1 if rows else 1,
            mode=template.mode,
            language=template.language,
            text=template.text,
        )
        chosen.append(stored)
        if rows:
            notes.append(
                f"Template {template.name}: no version held the published text (v{rows[-1].version} was edited); "
                f"it is stored again as v{stored.version}."
            )
    return chosen, notes


def template_problems_shown(text: str, mode: str) -> list[str]:
    """A template's problems in the reader's language (the pure check gives them in English)."""
    return [_(message) % values if values else _(message) for message, values in template_problem_messages(text, mode)]


def template_placeholders_check(*, text: str, mode: str) -> None:
    """Refuse a judge template whose placeholders `judging.engine.execution.build_prompt` cannot fill.

    The one check of template text, for the template pages and for `import_template` (call it
    before saving): prompts.building.template_problem_messages names each unknown or misspelled `{name}` with
    its line, a close valid name and the valid ones, and a missing required placeholder.
    Raises RunError with all of them, one per line.
    """
    problems = template_problems_shown(text, mode)
    if problems:
        raise RunError("\n".join(problems))


class TemplateBuiltIn(RunError):
    """An edit of a built-in template, which is read-only: a workspace changes its own copy."""


def _visible_to(workspace_id: int | None) -> Q:
    """The versions a workspace reads of any name: the built-in ones and its own."""
    return Q(workspace=None) | Q(workspace_id=workspace_id) if workspace_id is not None else Q(workspace=None)


def _next_version(name: str, workspace_id: int) -> int:
    """The next version number of `name` in a workspace, counted after the built-in versions too,
    so that a copy's versions never repeat the number of the built-in text they started from.
    Other workspaces' versions do not count: a team's numbers say nothing of another's."""
    rows = JudgeTemplate.objects.filter(_visible_to(workspace_id), name=name)
    return (rows.aggregate(top=Max("version"))["top"] or 0) + 1


def _workspace_latest(name: str, workspace_id: int) -> JudgeTemplate | None:
    """The newest version of `name` the workspace owns, locked until the transaction ends."""
    rows = JudgeTemplate.objects.select_for_update().filter(workspace_id=workspace_id, name=name)
    return rows.order_by("-version").first()


@transaction.atomic
def template_copy(
    *, template: JudgeTemplate, workspace: Workspace, user: User | None = None
) -> tuple[JudgeTemplate, bool]:
    """Copy a built-in template into a workspace, under the same name, to be changed there; the
    workspace's runs then judge with the copy. Returns (the workspace's version, whether it was
    made): a workspace that already has its own version of the name keeps it."""
    own = _workspace_latest(template.name, workspace.pk)
    if own is not None:
        return own, False
    copy = JudgeTemplate.objects.create(
        workspace=workspace,
        name=template.name,
        version=_next_version(template.name, workspace.pk),
        mode=template.mode,
        language=template.language,
        text=template.text,
        created_by=user,
    )
    audit_record(
        actor=user,
        action=AuditAction.TEMPLATE_CHANGED,
        target=f"template:{template.name}",
        details={"version": copy.version, "copied_from_version": template.version},
        workspace=workspace,
    )
    return copy, True


@transaction.atomic
def template_revise(*, template: JudgeTemplate, text: str, user: User | None = None) -> tuple[JudgeTemplate, bool]:
    """Save an edit of a workspace's template as a new version in that workspace; runs keep
    pointing at the version they used.

    Returns (the version now current, whether it was made). Text equal to the latest version
    (surrounding whitespace aside) makes no new version. Raises TemplateBuiltIn for a built-in
    template, and RunError, writing nothing, for empty text or placeholders the judge prompt
    cannot fill (template_placeholders_check). Who may edit the workspace's templates is the
    caller's check.
    """
    if template.workspace_id is None:
        raise TemplateBuiltIn(_("Built-in templates cannot be changed. Copy it to this workspace, then edit the copy."))
    text = text.strip()
    if not text:
        raise RunError(_("A template cannot be empty."))
    template_placeholders_check(text=text, mode=template.mode)
    latest = _workspace_latest(template.name, template.workspace_id) or template
    if latest.text.strip() == text:
        return latest, False
    revised = JudgeTemplate.objects.create(
        workspace_id=template.workspace_id,
        name=template.name,
        version=_next_version(template.name, template.workspace_id),
        mode=template.mode,
        language=template.language,
        text=text,
        created_by=user,
    )
    audit_record(
        actor=user,
        action=AuditAction.TEMPLATE_CHANGED,
        target=f"template:{template.name}",
        details={"version": revised.version, "from_version": template.version},
        workspace=template.workspace_id,
    )
    return revised, True


@transaction.atomic
def template_import(
    *, name: str, mode: str, language: str | None, text: str, workspace: Workspace, user: User | None = None
) -> JudgeTemplate:
    """Store a prompt exactly as given (nothing stripped or normalised) in a workspace, as a new
    version when the workspace has the name or a built-in one does (the workspace's runs then
    judge with it). Raises RunError listing every problem; then nothing is written.

    Without `language`, a new name takes Chinese when the text has any CJK character and
    English otherwise; an existing name keeps its language."""
    problems = []
    # The name is a CharField: it has a max_length, which the stubs type as optional.
    if not name or len(name) > cast(int, JudgeTemplate._meta.get_field("name").max_length):
        problems.append(_("Name the template, in at most 100 characters."))
    if language is not None and language not in ("en", "zh"):
        problems.append(_("Unknown language %(language)s; use en or zh.") % {"language": repr(language)})
    if not text.strip():
        problems.append(_("The template is empty."))
    else:
        problems.extend(template_problems_shown(text, mode))
    latest = _workspace_latest(name, workspace.pk) or (
        JudgeTemplate.objects.filter(workspace=None, name=name).order_by("-version").first()
    )
    if latest is not None and latest.mode != mode:
        problems.append(
            _("Template %(name)s is %(mode)s; it cannot take a %(new_mode)s version.")
            % {"name": repr(name), "mode": latest.mode, "new_mode": mode}
        )
    if problems:
        raise RunError("\n".join(problems))
    if language is None:
        language = latest.language if latest else ("zh" if re.search(r"[\u4e00-\u9fff]", text) else "en")
    imported = JudgeTemplate.objects.create(
        workspace=workspace,
        name=name,
        version=_next_version(name, workspace.pk),
        mode=mode,
        language=language,
        text=text,
        created_by=user,
    )
    audit_record(
        actor=user,
        action=AuditAction.TEMPLATE_CHANGED,
        target=f"template:{name}",
        details={"version": imported.version, "imported": True},
        workspace=workspace,
    )
    return imported


def latest_templates(names: set[str], workspace_id: int | None) -> dict[str, JudgeTemplate]:
    """The newest version of each template named that a run of the workspace judges with: the
    workspace's own when it has one of that name, else the built-in one."""
    own: dict[str, JudgeTemplate] = {}
    builtin: dict[str, JudgeTemplate] = {}
    rows = JudgeTemplate.objects.filter(_visible_to(workspace_id), name__in=names).order_by("name", "version")
    for template in rows:
        (builtin if template.workspace_id is None else own)[template.name] = template
    return builtin | own
