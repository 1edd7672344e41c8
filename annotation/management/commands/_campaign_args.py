"""Arguments shared by the `bt`, `alignment` and `import_votes` commands."""

from django.core.management.base import CommandError

from annotation.models import Campaign
from annotation.selectors import campaign_by_slug
from core.archiving import refuse_archived_in_command
from core.command_workspace import command_workspace_said, named
from core.errors import UserbenchError
from core.templatetags.numbers import P_FLOOR
from curation.datasets.selectors import dataset_by_name
from curation.models import Dataset


def resolve(command, dataset_name: str, campaign_slug: str | None, workspace_slug: str | None = None):
    """The dataset named (in the workspace named, or the one holding it) and, when a slug is given,
    its campaign; CommandError otherwise. Says which workspace it used."""
    workspace = command_workspace_said(
        command,
        workspace_slug,
        [
            named("dataset", dataset_name, Dataset.objects.filter(name=dataset_name)),
            named("campaign", campaign_slug, Campaign.objects.filter(slug=campaign_slug)),
        ],
    )
    try:
        dataset = dataset_by_name(name=dataset_name, workspace_id=workspace.pk if workspace else None)
        campaign = campaign_by_slug(slug=campaign_slug, dataset=dataset) if campaign_slug else None
        # Archived work is absent from the commands' choices (restored first, it is back).
        refuse_archived_in_command(dataset, campaign)
    except UserbenchError as error:
        raise CommandError(str(error)) from None
    return dataset, campaign


def fmt(value, digits=3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def fmt_p(value) -> str:
    """A p-value with four decimals, "< 0.0001" below that, "-" when there is none."""
    if value is None:
        return "-"
    return f"< {P_FLOOR}" if value < P_FLOOR else f"{value:.4f}"
