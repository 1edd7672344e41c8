"""A researcher opens a pairwise run whose judge always picked the first answer: the page shows
the position bias and the flips with their intervals, the LC win rate, and the manifest, which
downloads as JSON; in English and in Chinese, with nothing fetched from outside."""

import json

import pytest
from playwright.sync_api import expect

from judging.engine.counters import run_counters_refresh
from judging.models import Judgment
from judging.results.figures import run_figures_refresh
from judging.runs.creation import run_create
from judging.runs.spec import RunSpec
from tests.factories import UserFactory
from tests.judging import simulated

pytestmark = pytest.mark.django_db(transaction=True)


def build_first_position_run():
    """20 questions judged both ways; the judge always preferred whichever answer came first.

    Order 0 shows the candidate first: a win there, and a loss at order 1, is the first position winning."""
    dataset = simulated.build_dataset("e2e-diag", {"cand": [200] * 20, "ref": [400] * 20})
    from judging.models import CandidateModel

    run = run_create(
        spec=RunSpec(
            dataset=dataset,
            mode="pairwise",
            judge_model="judge-e2e",
            candidates=[CandidateModel.objects.get(name="cand")],
            reference_model=CandidateModel.objects.get(name="ref"),
            both_orders=True,
            seed=5,
        ),
    )
    template = run.templates.get()
    Judgment.objects.bulk_create(
        Judgment(
            run=run,
            item_id=item_id,
            model_id=model_id,
            order=order,
            template=template,
            raw_text="[{'model': 'model_1', 'rank': 1}, {'model': 'model_2', 'rank': 2}]",
            outcome=Judgment.Outcome.WIN if order == 0 else Judgment.Outcome.LOSE,
            reported_model="judge-e2e-0613",
        )
        for shard in run.shards.all()
        for item_id, model_id, order in shard.units
    )
    run_counters_refresh(run=run)  # the counts and figures the engine and its background task keep
    run_figures_refresh(run_id=run.pk)
    return run


def test_run_page_shows_diagnostics_and_manifest(page, live_server, log_in, blocked_requests):
    run = build_first_position_run()
    UserFactory(username="diag-researcher", roles=["researcher"])
    log_in("diag-researcher", "pw-for-tests")
    page.goto(f"{live_server.url}/runs/{run.pk}/")

    expect(page.get_by_role("heading", name="Judge diagnostics")).to_be_visible()
    position = page.locator("#diag-position")
    expect(position).to_contain_text("1.000")
    expect(position).to_contain_text("40 decisive verdicts")
    expect(position.locator(".ci")).to_contain_text("0.912 … 1.000")
    expect(page.locator("#diag-flips")).to_contain_text("20 pairs judged both ways")
    expect(page.get_by_role("columnheader", name="LC win rate (%)")).to_be_visible()

    manifest = page.locator("#manifest")
    expect(page.get_by_role("heading", name="Manifest")).to_be_visible()
    expect(manifest).to_contain_text("judge-e2e-0613 (40)")
    expect(manifest).to_contain_text(run.manifest["dataset"]["content_hash"][:14])
    with page.expect_download() as download_info:
        manifest.get_by_role("link", name="Download the manifest (JSON)").click()
    download = download_info.value
    assert download.suggested_filename == f"run-{run.pk}-manifest.json"
    saved = json.loads(open(download.path(), encoding="utf-8").read())
    assert saved["dataset"]["content_hash"] == run.manifest["dataset"]["content_hash"]
    assert saved["judge_reported_models"] == {"judge-e2e-0613": 40}

    page.get_by_label("Language").select_option("zh-hans")
    page.get_by_role("button", name="Switch").click()
    expect(page.get_by_role("heading", name="评判诊断")).to_be_visible()
    expect(page.get_by_role("heading", name="清单")).to_be_visible()
    expect(page.locator("#diag-position")).to_contain_text("位置偏差")
    assert blocked_requests == []
