"""`import_template FILE --name N --mode {pointwise,pairwise} [--language {en,zh}] [--workspace SLUG]`: a
judge prompt, exactly as written, into a workspace (built-in templates ship with Userbench only)."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.command_workspace import command_workspace, named
from core.errors import UserbenchError
from core.workspaces import workspace_for_command
from judging.models import JudgeTemplate
from judging.prompts.placeholders import PLACEHOLDERS
from judging.prompts.templates import template_import


def _decode(data: bytes, path: Path) -> str:
    """The file's text, or an error naming where the first byte that is not UTF-8 sits."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        raise CommandError(
            f"Nothing imported. {path} is not UTF-8 text: byte 0x{data[error.start]:02x} at line {line}, "
            f"column {column} ({error.reason})."
        ) from None


class Command(BaseCommand):
    help = (
        "Load a judge prompt from a file byte for byte (nothing stripped or re-encoded) as a new template, or as the "
        "next version of an existing one. Placeholders use Python format syntax ({{ and }} are literal braces): "
        + "; ".join(f"{mode}: " + ", ".join("{" + name + "}" for name in names) for mode, names in PLACEHOLDERS.items())
        + "."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--name", required=True, help="template name, e.g. urs/leisure/en or my-judge/zh")
        parser.add_argument("--mode", required=True, choices=list(PLACEHOLDERS))
        parser.add_argument(
            "--language",
            choices=["en", "zh"],
            help="default: the existing template's, else zh when the text has Chinese characters",
        )
        parser.add_argument(
            "--workspace", help="the workspace whose runs judge with it (needed when there are several)"
        )

    def handle(self, *args, file: Path, name: str, mode: str, language: str | None, **options):
        # A new version goes to the workspace that holds the template; a new template needs the
        # workspace named once there are several.
        workspace = command_workspace(
            options.get("workspace"), [named("template", name, JudgeTemplate.objects.filter(name=name))]
        )
        try:
            workspace = workspace or workspace_for_command(None, required=True)
        except UserbenchError as error:
            raise CommandError(str(error)) from None
        assert workspace is not None  # required=True never gives None
        try:
            data = file.read_bytes()
        except OSError as error:
            raise CommandError(f"Cannot read {file}: {error.strerror}.") from None
        text = _decode(data, file)
        try:
            template = template_import(name=name, mode=mode, language=language, text=text, workspace=workspace)
        except ValueError as error:
            raise CommandError(f"Nothing imported. {file}:\n{error}") from None
        self.stdout.write(
            f"Template {template.name} v{template.version} ({template.mode}, {template.language}) in workspace "
            f"{workspace.slug}: "
            f"{len(text)} characters from {file}."
        )
