"""`reproduce --benchmark B --judge-model M --models A,B --data DIR`: a paper's method end to end."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.archiving import command_refuses_archived
from core.command_workspace import command_workspace_said, named
from core.errors import UserbenchError
from curation.models import Dataset
from judging.answers.generation import cut_off_text
from judging.management.commands.judge import run_here
from judging.papers.benchmarks import BENCHMARKS
from judging.papers.reproduce import (
    benchmark_get,
    published_checks,
    reproduction_answers,
    reproduction_dataset,
    reproduction_endpoint_check,
    reproduction_manifest,
    reproduction_run,
    reproduction_table,
)
from llm.cli import concurrency_option
from llm.models import Endpoint


class Command(BaseCommand):
    help = (
        "Reproduce a paper's method: import its public data, import or generate the models' answers with "
        "the benchmark's parameters, judge with the paper's prompts and the authors' judge parameters, and "
        "print the paper's table with a manifest of everything used. Public data (--data DIR: a clone of the "
        "benchmark's repository or a folder of its files): "
        + "; ".join(f"{name}: {b.data_from}" for name, b in BENCHMARKS.items())
        + "."
    )

    def add_arguments(self, parser):
        parser.add_argument("--benchmark", required=True, choices=list(BENCHMARKS))
        parser.add_argument("--judge-model", required=True)
        parser.add_argument("--models", required=True, help="comma-separated candidate model names")
        parser.add_argument(
            "--endpoint", help="a named endpoint for the judge and any generation; default: OPENAI_BASE_URL"
        )
        parser.add_argument(
            "--workspace",
            help="slug of the workspace the imported dataset and the run belong to (needed to import when there "
            "are several); a --dataset or --endpoint named must be one of its own",
        )
        parser.add_argument("--data", type=Path, help="the folder holding the benchmark's public files (read in place)")
        parser.add_argument(
            "--dataset", help="judge a dataset already in Userbench instead of importing --data's items"
        )
        parser.add_argument(
            "--limit", type=int, help="a small slice: this many items, spread over intents or categories"
        )
        parser.add_argument(
            "--reference-model",
            help="a pairwise benchmark: the model every candidate is compared with (default its own: "
            "ChineseAlpacaEval's text-davinci-003, Arena-Hard-Auto's gpt-4-0314, whose published answers "
            "--data holds)",
        )
        parser.add_argument(
            "--template-set",
            choices=[name for b in BENCHMARKS.values() if len(b.template_sets) > 1 for name in b.template_sets_names()],
            help="a benchmark judged with more than one set of prompts: which (default: its paper's); "
            + "; ".join(
                f"{name}: {', '.join(b.template_sets_names())}"
                for name, b in BENCHMARKS.items()
                if len(b.template_sets) > 1
            ),
        )
        parser.add_argument(
            "--concurrency",
            type=concurrency_option,
            help="calls in flight: a number, or auto (the default when the endpoint states no limit: the window "
            "finds the server's capacity, so a one-slot local server is never sent more than it can take)",
        )
        parser.add_argument("--seed", type=int, default=0, help="ChineseAlpacaEval: seed of the side order (default 0)")
        parser.add_argument(
            "--out",
            type=Path,
            default=Path("manifests"),
            help="folder for the table and the manifest, reproduce-<benchmark>-run-<id>.table.txt and "
            ".manifest.json (default: manifests/, which .gitignore lists; made when missing)",
        )
        parser.add_argument(
            "--manifest",
            type=Path,
            help="the manifest's file instead (default: next to --output, else in --out); '-' prints it",
        )
        parser.add_argument("--output", type=Path, help="the table's file instead of one in --out")
        parser.add_argument(
            "--api-apart", action="store_true", help="URS: show API apart instead of folded into Solve Problem"
        )
        parser.add_argument(
            "--exclude-missing-references",
            action="store_true",
            help="leave out the items whose template judges against a reference they lack (recorded in the "
            "manifest); without it such items refuse the run",
        )
        parser.add_argument(
            "--include-cut-off",
            action="store_true",
            help="judge answers cut off at max_tokens too (kept, marked cut off; left out by default)",
        )
        parser.add_argument(
            "--batch",
            action="store_true",
            help="generate and judge through the endpoint's Batch API (about half price, replies within 24 h); "
            "Ctrl-C stops the waiting, never the batches: the same command (or judge_resume RUN --inline) picks "
            "them up",
        )
        parser.add_argument(
            "--failures-as-minus-one",
            action="store_true",
            help="AlignBench: average parse failures as -1, as AlignBench's show_result.py does (default: left out)",
        )

    def handle(self, *args, **options):
        try:
            self._reproduce(**options)
        except UserbenchError as error:
            raise CommandError(str(error)) from None

    def _reproduce(
        self,
        *,
        benchmark,
        judge_model,
        models,
        endpoint,
        data,
        dataset,
        limit,
        reference_model,
        template_set,
        concurrency,
        seed,
        manifest,
        output,
        api_apart,
        out=Path("manifests"),
        failures_as_minus_one,
        exclude_missing_references=False,
        include_cut_off=False,
        workspace=None,
        batch=False,
        **options,
    ):
        chosen = benchmark_get(benchmark)
        place = command_workspace_said(
            self,
            workspace,
            [
                named("dataset", dataset, Dataset.objects.filter(name=dataset)),
                named("endpoint", endpoint if endpoint != "default" else None, Endpoint.objects.filter(name=endpoint)),
            ],
        )
        if template_set and len(chosen.template_sets) < 2:
            several = [str(b.format.source_label) for b in BENCHMARKS.values() if len(b.template_sets) > 1]
            raise CommandError(f"--template-set is for the {' or '.join(several)} benchmark.")
        if template_set and template_set not in chosen.template_sets_names():
            raise CommandError(
                f"--template-set {template_set} is not one of {chosen.name}'s: "
                f"{', '.join(chosen.template_sets_names())}."
            )
        names = list(dict.fromkeys(name.strip() for name in models.split(",") if name.strip()))
        if not names:
            raise CommandError("Name at least one model with --models.")
        reference = reference_model or chosen.reference_model
        if chosen.mode == "pointwise" and reference_model:
            raise CommandError("--reference-model is for a pairwise benchmark (ChineseAlpacaEval, Arena-Hard-Auto).")
        reproduction_endpoint_check(endpoint_name=endpoint, workspace=place)
        found, files, imported = reproduction_dataset(
            benchmark=chosen, data_dir=data, dataset_name=dataset, limit=limit, workspace=place
        )
        # The --dataset named, or the import of these files made before: absent while archived.
        command_refuses_archived(found)
        self.stdout.write(
            f"{chosen.paper}\nDataset {found.name}: {found.items.count()} items"
            + (" (imported now)" if imported else " (already in Userbench)")
        )
        checks = published_checks(benchmark=chosen, data_dir=data)
        for check in checks:
            if check["matches"] is False:
                self.stdout.write(
                    f"Warning: {check['path']} ({check['what']}) differs from the copy Userbench judges with."
                )

        shown: list[str] = []

        def show(model, counts):
            # One progress line per model, rewritten in place.
            start = "\n" if shown and shown[-1] != model else "\r"
            shown.append(model)
            self.stdout.write(
                f"{start}{model}: {counts['generated']}/{counts['total']} generated, {counts['failed']} failed, "
                f"{cut_off_text(counts['cut_off'], counts['cut_off_at'])}",
                ending="",
            )
            self.stdout.flush()

        answered = reproduction_answers(
            benchmark=chosen,
            dataset=found,
            data_dir=data,
            models=list(dict.fromkeys([*names, *([reference] if reference else [])])),
            endpoint_name=endpoint,
            concurrency=concurrency,
            on_progress=show,
            batch=batch,
        )
        if shown:
            self.stdout.write("")
        for entry in answered:
            origin = ", ".join(
                part
                for part in (
                    f"{entry['already']} already there" if entry["already"] else "",
                    f"{entry['imported']} imported from {entry['imported_from']['path']}"
                    if entry["imported_from"]
                    else "",
                    f"{entry['generated']} generated ({chosen.generation_preset.name} preset"
                    + (", batched)" if entry.get("batch") else ")")
                    if entry["generated"]
                    else "",
                    f"{entry['failed']} failed to generate" if entry["failed"] else "",
                    cut_off_text(entry["cut_off"], entry["cut_off_at"]) if entry["cut_off"] else "",
                )
                if part
            )
            self.stdout.write(f"Answers of {entry['model']}: {origin or 'none'}")
        table_options = {"api_apart": api_apart, "failures_as_minus_one": failures_as_minus_one}
        run, notes = reproduction_run(
            benchmark=chosen,
            dataset=found,
            judge_model=judge_model,
            models=names,
            reference_model=reference,
            endpoint_name=endpoint,
            concurrency=concurrency,
            template_set=template_set,
            seed=seed,
            exclude_missing_references=exclude_missing_references,
            include_cut_off=include_cut_off,
            batch=batch,
            table_options=table_options,
        )
        for note in notes:
            self.stdout.write(note)
        temperature = "not sent" if run.temperature is None else run.temperature
        self.stdout.write(
            f"Run {run.pk}: {run.total} judgments by {run.judge_model}; temperature {temperature}, max_tokens "
            f"{run.max_tokens or 'not sent'}, system prompt {'set' if run.system_prompt else 'none'}; templates "
            + ", ".join(f"{t.name} v{t.version}" for t in run.templates.order_by("name"))
        )
        try:
            run_here(self, run)
        except CommandError:
            pass  # failed calls: the table and the manifest are still written, and the end says how to go on
        run.refresh_from_db()
        table, lines = reproduction_table(
            benchmark=chosen, run=run, fold_api=not api_apart, failures_as_minus_one=failures_as_minus_one
        )
        self.stdout.write("")
        for line in lines:
            self.stdout.write(line)
        stem = f"reproduce-{chosen.name}-run-{run.pk}"
        in_out = output is None and manifest is None
        if in_out:
            # Nothing given a path of its own: both files go into --out, never loose in the checkout.
            out.mkdir(parents=True, exist_ok=True)
            output = out / f"{stem}.table.txt"
        if output is not None:
            output.write_text("\n".join(lines) + "\n", encoding="utf-8")
            self.stdout.write(f"Table: {output}")
        record = reproduction_manifest(
            benchmark=chosen,
            data_dir=data,
            files=files,
            checks=checks,
            dataset=found,
            imported=imported,
            limit=limit,
            answers=answered,
            run=run,
            table=table,
            table_options=table_options,
            notes=notes,
        )
        text = json.dumps(record, ensure_ascii=False, indent=1)
        if manifest is not None and str(manifest) == "-":
            self.stdout.write(text)
        else:
            if manifest is not None:
                target = manifest
            elif in_out:
                target = out / f"{stem}.manifest.json"
            else:
                assert output is not None  # neither path given means in_out
                target = output.with_name(output.name + ".manifest.json")
            target.write_text(text + "\n", encoding="utf-8")
            self.stdout.write(f"Manifest: {target}")
        failed = record["run"]["call_failures"]
        if record["run"]["status"] != "finished" or failed:
            raise CommandError(
                f"Run {run.pk} ended {record['run']['status']}, with {failed} failed call(s): the table above leaves "
                f"them out. Continue with 'judge_resume {run.pk} --inline', which ends with the table."
            )
