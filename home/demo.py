"""Demo data for `make run`: the fixtures plus three well-known accounts.

The accounts have printed passwords, so they are only ever made in demo mode
(USERBENCH_DEMO=1), never on a real deployment.
"""

from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.db import transaction

from annotation.figures import figures_read
from annotation.models import Campaign
from annotation.report import default_run_for
from annotation.style_report import PAGE_ROUNDS
from core.roles import Role
from core.workspaces import membership_set
from curation.models import Study
from judging.engine.counters import run_counters_refresh
from judging.models import JudgeRun, JudgeTemplate
from judging.prompts.templates import item_template_name, template_family, templates_ensure_defaults
from judging.results.figures import run_figures_refresh

# Loaded in this order; each app may add its own file (fixtures/demo_<app>.json).
DEMO_FIXTURES = ["demo.json", "demo_curation.json"]


@dataclass(frozen=True)
class DemoAccount:
    username: str
    password: str
    role: Role


DEMO_ACCOUNTS = [
    DemoAccount("researcher", "demo-researcher", Role.RESEARCHER),
    DemoAccount("reviewer", "demo-reviewer", Role.REVIEWER),
    DemoAccount("annotator", "demo-annotator", Role.ANNOTATOR),
]


@transaction.atomic
def demo_seed() -> bool:
    """Load the demo fixture and accounts unless they are there already.

    Returns whether anything was loaded. Running it again changes nothing, so a
    researcher's edits to the demo survive the next `make run`.
    """
    if not settings.DEMO_MODE:
        raise ImproperlyConfigured("Demo data is only loaded with USERBENCH_DEMO=1.")
    loaded = False
    if not Study.objects.filter(slug="demo").exists():
        for fixture in DEMO_FIXTURES:
            call_command("loaddata", str(settings.BASE_DIR / "fixtures" / fixture), verbosity=0)
        _demo_run_templates()
        loaded = True
    User = get_user_model()
    for account in DEMO_ACCOUNTS:
        user, created = User.objects.get_or_create(username=account.username)
        if created:
            user.set_password(account.password)
            user.save(update_fields=["password"])
            # Everyone of the demo is in its one workspace; the researcher administers it, so
            # /people/ can be tried out.
            membership_set(user=user, roles=[account.role.value], admin=account.role == Role.RESEARCHER)
            loaded = True
    annotator = User.objects.get(username="annotator")
    for campaign in Campaign.objects.filter(slug="demo"):
        campaign.annotators.add(annotator)
    if loaded:
        _demo_figures()
    return loaded


def _demo_run_templates() -> None:
    """Point the demo run and its judgments at the built-in templates that judge each item, as
    a run made today would (the fixture cannot name them: their ids depend on the database)."""
    templates_ensure_defaults()
    for run in JudgeRun.objects.filter(templates__isnull=True).select_related("dataset"):
        family = template_family(run.dataset)
        latest: dict[str, JudgeTemplate | None] = {}
        for judgment in run.judgments.select_related("item"):
            name = item_template_name(run, judgment.item, family)
            if name not in latest:
                latest[name] = JudgeTemplate.objects.filter(workspace=None, name=name).order_by("-version").first()
            judgment.template = latest[name]
            judgment.save(update_fields=["template"])
        run.templates.set([template for template in latest.values() if template is not None])


def _demo_figures() -> None:
    """The demo's figures, computed once at seeding (a worker would do it a moment later), so its
    pages show them on the first visit; its runs' running counts are recounted from their rows."""
    for run in JudgeRun.objects.all():
        run_counters_refresh(run=run)
        run_figures_refresh(run_id=run.pk)
    for campaign in Campaign.objects.select_related("dataset"):
        figures_read(
            what="campaign", campaign=campaign, run=default_run_for(dataset=campaign.dataset), compute="missing"
        )
        figures_read(what="style", campaign=campaign, rounds=PAGE_ROUNDS, compute="missing")
