"""Every command that takes a name a workspace chooses (a dataset, an endpoint, a study, a
campaign, a template, a candidate model) also takes `--workspace`: names are unique only within a
workspace, so without it a name two teams use could not be run at all. Commands that take only
ids (runs) need none: an id means one object on the whole server."""

from django.core.management import get_commands, load_command_class

# The options whose values are names chosen within a workspace.
NAMED = {"dataset", "endpoint", "study", "campaign", "template", "model", "models", "name", "slug"}
# The apps whose commands are Userbench's.
APPS = ("annotation", "core", "curation", "home", "judging", "llm")


def command_options() -> dict[str, set[str]]:
    """Each of Userbench's commands -> the destinations of its options and arguments."""
    options = {}
    for name, app in sorted(get_commands().items()):
        if app.startswith(APPS):
            parser = load_command_class(app, name).create_parser("manage.py", name)
            options[name] = {action.dest for action in parser._actions}
    return options


def name_taking_commands() -> list[str]:
    """The commands that take a workspace's names: an option of NAMED, or `--workspace` itself
    (describe_model takes its model names as arguments)."""
    return [name for name, options in command_options().items() if options & NAMED or "workspace" in options]


def test_every_command_taking_a_workspaces_name_takes_workspace():
    missing = [
        f"{name}: {sorted(options & NAMED)}"
        for name, options in command_options().items()
        if options & NAMED and "workspace" not in options
    ]
    assert missing == [], "commands naming a workspace's object without --workspace:\n" + "\n".join(missing)
