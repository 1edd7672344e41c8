"""`describe_model NAME --provider P --family F [--workspace SLUG]`: who serves a model and which
family it belongs to, in one workspace (a model's name is unique there, not across the server)."""

from django.core.management.base import BaseCommand, CommandError

from core.command_workspace import workspace_said
from core.errors import UserbenchError
from core.workspaces import workspace_for_command
from judging.answers.candidates import candidate_model_describe
from judging.errors import RunError


class Command(BaseCommand):
    help = (
        "Record a model's provider and family (e.g. --provider openai --family gpt-4). A judge run's "
        "self-preference compares the candidates sharing the judge's provider or family with the others; "
        "a judge model named like a described model of the run's workspace takes its provider and family."
    )

    def add_arguments(self, parser):
        parser.add_argument("names", nargs="+", help="model names (created when new)")
        parser.add_argument("--provider", help="who serves the model; an empty string clears it")
        parser.add_argument("--family", help="the model family; an empty string clears it")
        parser.add_argument("--workspace", help="the workspace whose model it is (needed when there are several)")

    def handle(self, *args, names, provider, family, **options):
        if provider is None and family is None:
            raise CommandError("Give --provider, --family or both.")
        try:
            workspace = workspace_for_command(options.get("workspace"), required=True)
        except UserbenchError as error:
            raise CommandError(error.message) from None
        assert workspace is not None  # required=True never gives None
        workspace_said(self, workspace)
        for name in names:
            try:
                model = candidate_model_describe(name=name, workspace=workspace, provider=provider, family=family)
            except RunError as error:
                raise CommandError(str(error)) from None
            self.stdout.write(f"{model.name}: provider {model.provider or '-'}, family {model.family or '-'}")
