"""Campaign builders for the annotation tests: a dataset, candidates with answers, annotators."""

import pytest

from annotation.campaigns import campaign_create
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory, UserFactory

MODEL_NAMES = ["orion-large", "vega-7b", "lyra-chat", "nova-mini"]


@pytest.fixture
def build_campaign(db):
    """build_campaign(questions=4, models=3, ...) -> (campaign, models, items, annotators)."""

    def build(questions=4, models=3, annotators=2, question_count=None, **options):
        dataset = DatasetFactory()
        candidates = [CandidateModelFactory(name=MODEL_NAMES[k]) for k in range(models)]
        items = [ItemFactory(dataset=dataset, question=f"Question **{n}**?") for n in range(questions)]
        for item in items:
            for model in candidates:
                AnswerFactory(item=item, model=model, text=f"Answer by the model to {item.external_id}.")
        people = [UserFactory(username=f"annotator{k}", roles=["annotator"]) for k in range(annotators)]
        options.setdefault("slug", "blind")
        # Titles are unique within a workspace: a second campaign of a test gets its own.
        options.setdefault("title", "Blind test" if options["slug"] == "blind" else f"Blind test ({options['slug']})")
        campaign = campaign_create(
            dataset=dataset,
            candidates=candidates,
            question_count=question_count or questions,
            annotators=people,
            **options,
        )
        return campaign, candidates, items, people

    return build
