"""`{% export_links "items answers" dataset=name %}`: download links (CSV and JSONL) for the
registered export tables, through the one export API, on every page that shows data."""

from urllib.parse import urlencode

from django import template
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

register = template.Library()
BUNDLE_SCOPES = ("study", "dataset", "run", "campaign")

TABLE_LABELS = {
    "items": _("items"),
    "answers": _("answers"),
    "judgments": _("judgments"),
    "leaderboard": _("leaderboard"),
    "votes": _("votes"),
    "bt": _("Bradley-Terry"),
    "agreement": _("agreement"),
    "submissions": _("submissions"),
    "cases": _("cases"),
    "manifests": _("manifests"),
}


@register.inclusion_tag("includes/export_links.html")
def export_links(tables: str, **scope):
    """One entry per table in `tables` (space-separated names), scoped by dataset=, study=, run= or
    campaign=; with one of them, a link to the zip of everything it holds (tables, manifest, README)."""
    query = {key: value for key, value in scope.items() if value not in (None, "")}
    links = []
    for what in tables.split():
        base = reverse("api-export", args=[what])
        links.append(
            {
                "label": TABLE_LABELS.get(what, what),
                "csv": f"{base}?{urlencode({**query, 'format': 'csv'})}",
                "jsonl": f"{base}?{urlencode({**query, 'format': 'jsonl'})}",
            }
        )
    # One zip of everything of the scope, when the links are about one study, dataset, run or campaign.
    bundle = ""
    if len(query) == 1 and next(iter(query)) in BUNDLE_SCOPES:
        bundle = f"{reverse('api-export-bundle')}?{urlencode(query)}"
    return {"links": links, "bundle": bundle}
