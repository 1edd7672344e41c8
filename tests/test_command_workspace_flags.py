"""Every command that takes a name a workspace chooses (a dataset, an endpoint, a study, a
campaign, a template, a candidate model) also takes `--workspace`: names are unique only within a
workspace, so without it a name two teams use could not be run at all. Commands that take only
ids (runs) need none: an id means one object on the whole server."""

from django.core.management import get_commands, load_command_class

# The options whose values are names chosen within a workspace.
NAMED = {"dataset", "endpoint", "study", "campaign", "template", "model", "models", "name", "slug"}


def test_every_command_taking_a_workspaces_name_takes_workspace():
    missing = []
    for name, app in sorted(get_commands().items()):
        if not app.startswith(("annotation", "core", "curation", "home", "judging", "llm")):
            continue
        parser = load_command_class(app, name).create_parser("manage.py", name)
        options = {action.dest for action in parser._actions}
        if options & NAMED and "workspace" not in options:
            missing.append(f"{name}: {sorted(options & NAMED)}")
    assert missing == [], "commands naming a workspace's object without --workspace:\n" + "\n".join(missing)
