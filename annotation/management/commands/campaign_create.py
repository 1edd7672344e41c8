from django.core.management.base import BaseCommand, CommandError

from annotation.campaigns import DEFAULT_UNIFORM_SHARE, campaign_create_by_names
from annotation.models import Campaign
from core.archiving import command_refuses_archived
from core.command_workspace import add_workspace_argument, command_workspace_said, named
from core.errors import UserbenchError
from curation.models import Dataset


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


class Command(BaseCommand):
    help = (
        "Create a blind pairwise campaign on a dataset: draw N questions, K balanced model pairs per "
        "question, V votes wanted per pair (--sampling fixed); or choose each pair from the votes so "
        "far until --budget votes are asked for (--sampling adaptive). Nothing is created when any "
        "argument is wrong."
    )

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True, help="Dataset name.")
        add_workspace_argument(parser, "the dataset and the campaign")
        parser.add_argument("--slug", required=True, help="Campaign slug (letters, digits, - and _).")
        parser.add_argument("--models", required=True, type=_names, help="Candidate model names, comma-separated.")
        parser.add_argument(
            "--sampling",
            choices=Campaign.Sampling.values,
            default=Campaign.Sampling.FIXED,
            help="fixed: every pair drawn now (default); adaptive: each pair chosen from the votes so far.",
        )
        parser.add_argument(
            "--budget", type=int, default=0, help="Adaptive sampling: the votes on ordinary pairs to ask for in all."
        )
        parser.add_argument(
            "--uniform-share",
            type=float,
            default=DEFAULT_UNIFORM_SHARE,
            help="Adaptive sampling: the share of pairs drawn uniformly over the model pairs (default %(default)s).",
        )
        parser.add_argument(
            "--questions", type=int, default=None, help="Fixed sampling: questions to draw (default: all eligible)."
        )
        parser.add_argument("--pairs-per-question", type=int, default=1)
        parser.add_argument("--votes-per-pair", type=int, default=1, help="Overlap: votes wanted per pair.")
        parser.add_argument("--annotators", type=_names, default=[], help="Usernames, comma-separated.")
        parser.add_argument("--gold-every", type=int, default=0, help="A gold pair every N items (0: none).")
        parser.add_argument(
            "--min-seconds-per-item",
            type=float,
            default=0,
            help="Flag annotators whose median time per item is below this (0: no check).",
        )
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--title", default="", help="Title shown to annotators (default: the slug).")
        parser.add_argument("--instructions-en", default="")
        parser.add_argument("--instructions-zh", default="")

    def handle(self, *args, **options):
        workspace = command_workspace_said(
            self,
            options["workspace"],
            [named("dataset", options["dataset"], Dataset.objects.filter(name=options["dataset"]))],
        )
        # Archived work is absent from the commands' choices (an unknown name is the service's to say).
        command_refuses_archived(Dataset.objects.filter(name=options["dataset"], workspace=workspace).first())
        try:
            campaign = campaign_create_by_names(
                workspace_id=workspace.pk if workspace else None,
                dataset=options["dataset"],
                slug=options["slug"],
                title=options["title"],
                models=options["models"],
                annotators=options["annotators"],
                question_count=options["questions"],
                pairs_per_question=options["pairs_per_question"],
                votes_per_pair=options["votes_per_pair"],
                gold_every=options["gold_every"],
                min_seconds_per_item=options["min_seconds_per_item"],
                seed=options["seed"],
                instructions_en=options["instructions_en"],
                instructions_zh=options["instructions_zh"],
                sampling=options["sampling"],
                budget=options["budget"],
                uniform_share=options["uniform_share"],
            )
        except UserbenchError as error:
            raise CommandError(str(error)) from None
        if campaign.is_adaptive:
            self.stdout.write(
                f"Created adaptive campaign {campaign.slug} on {campaign.dataset.name}: up to "
                f"{campaign.pairs_planned} pairs ({campaign.budget} votes, {campaign.votes_per_pair} per pair) "
                f"chosen from the votes so far among {campaign.question_count} questions, "
                f"{campaign.candidates.count()} models, {campaign.annotators.count()} annotators, "
                f"{campaign.uniform_share:.0%} of the pairs drawn uniformly."
            )
            return
        self.stdout.write(
            f"Created campaign {campaign.slug} on {campaign.dataset.name}: {campaign.pairs.count()} pairs over "
            f"{campaign.question_count} questions, {campaign.candidates.count()} models, "
            f"{campaign.annotators.count()} annotators, {campaign.votes_per_pair} votes wanted per pair."
        )
