"""factory-boy factories for Userbench's models. Tests build exactly what they assert on."""

import datetime

import factory
from django.contrib.auth import get_user_model

from annotation.models import Campaign, ComparisonPair, Vote, Winner
from core.models import Workspace, default_workspace_id
from core.workspaces import membership_set
from curation.choices import Intent
from curation.models import Case, Dataset, Item, Study, Submission
from judging.models import Answer, CandidateModel, JudgeMode, JudgeRun, Judgment


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ["username"]
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"person{n}")
    password = factory.PostGenerationMethodCall("set_password", "pw-for-tests")

    @factory.post_generation
    def roles(self, create, extracted, **kwargs):
        """UserFactory(roles=["researcher"]) makes the user a member of the default workspace with
        those roles; UserFactory(roles=[...], roles__workspace=w) of workspace w."""
        if create and extracted:
            membership_set(user=self, workspace=kwargs.get("workspace"), roles=extracted)
        self.save()


class StudyFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Study

    slug = factory.Sequence(lambda n: f"study-{n}")
    # Titles are unique within a workspace: each study's its own.
    title_en = factory.LazyAttribute(lambda study: f"A study ({study.slug})")
    title_zh = "一项研究"


class SubmissionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Submission

    study = factory.SubFactory(StudyFactory)
    status = Submission.Status.SUBMITTED


class CaseFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Case

    submission = factory.SubFactory(SubmissionFactory)
    position = factory.Sequence(lambda n: n + 1)
    service = "ChatGPT"
    conversation = "Question: What is 2 + 2?\nAnswer: 4."
    intent = Intent.FACTUAL_QA


class DatasetFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Dataset

    name = factory.Sequence(lambda n: f"dataset-{n}")


class ItemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Item

    dataset = factory.SubFactory(DatasetFactory)
    external_id = factory.Sequence(lambda n: f"q{n:04d}")
    question = "What is the capital of France?"
    reference = "Paris."
    intent = Intent.FACTUAL_QA


class CandidateModelFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = CandidateModel
        django_get_or_create = ["name", "workspace"]

    name = factory.Sequence(lambda n: f"model-{n}")
    # Names are unique within a workspace: the default one unless a test names another.
    workspace = factory.LazyFunction(lambda: Workspace.objects.get(pk=default_workspace_id()))


class AnswerFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Answer

    item = factory.SubFactory(ItemFactory)
    model = factory.SubFactory(CandidateModelFactory)
    text = "An answer."


class JudgeRunFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = JudgeRun

    dataset = factory.SubFactory(DatasetFactory)
    mode = JudgeMode.POINTWISE
    judge_model = "judge"


class JudgmentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Judgment
        skip_postgeneration_save = True

    run = factory.SubFactory(JudgeRunFactory)
    item = factory.SubFactory(ItemFactory)
    model = factory.SubFactory(CandidateModelFactory)
    final_score = 7

    @factory.post_generation
    def counted(judgment, create, extracted, **kwargs):
        """The engine keeps a run's running counts as it saves judgments; so does the factory."""
        if create:
            from judging.engine.counters import run_counters_refresh

            run_counters_refresh(run=judgment.run)


class CampaignFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Campaign

    slug = factory.Sequence(lambda n: f"campaign-{n}")
    title = factory.LazyAttribute(lambda campaign: f"A campaign ({campaign.slug})")
    dataset = factory.SubFactory(DatasetFactory)


class ComparisonPairFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ComparisonPair

    campaign = factory.SubFactory(CampaignFactory)
    item = factory.SubFactory(ItemFactory)
    model_a = factory.SubFactory(CandidateModelFactory)
    model_b = factory.SubFactory(CandidateModelFactory)


class VoteFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Vote

    item = factory.SubFactory(ItemFactory)
    model_a = factory.SubFactory(CandidateModelFactory)
    model_b = factory.SubFactory(CandidateModelFactory)
    winner = Winner.MODEL_A
    annotator_label = "outside-annotator"


def two_model_judge_run(endpoint, *, dataset_name: str, items: int, shard_size: int, concurrency: int) -> JudgeRun:
    """A pointwise run of models m1 and m2 over `items` questions on `endpoint`: each answer holds
    a marker `<<model:n>>`, so what the provider was asked can be told apart by unit."""
    # Imported here: the run's services are not needed by the other factories' users.
    from judging.runs.creation import run_create
    from judging.runs.spec import RunSpec

    dataset = DatasetFactory(name=dataset_name)
    models = [CandidateModelFactory(name="m1"), CandidateModelFactory(name="m2")]
    for n in range(items):
        item = ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"question {n}")
        for model in models:
            AnswerFactory(item=item, model=model, text=f"<<{model.name}:{n}>>")
    spec = RunSpec(
        dataset=dataset,
        mode="pointwise",
        judge_model="j",
        candidates=models,
        endpoint=endpoint,
        concurrency=concurrency,
        shard_size=shard_size,
    )
    return run_create(spec=spec)


# When the finished submissions below consented, so that their durations are known.
SUBMISSIONS_T0 = datetime.datetime(2026, 3, 1, 9, 0, tzinfo=datetime.UTC)


def finished_submission(study, pid: str, minutes: float, *, excluded=False, passed=None, **fields):
    """A submitted case of Prolific participant `pid` that took `minutes` from consent; an excluded
    one failed the attention check (its `attention_passed` is `not excluded` unless `passed` says)."""
    return SubmissionFactory(
        study=study,
        prolific_pid=pid,
        consented_at=SUBMISSIONS_T0,
        submitted_at=SUBMISSIONS_T0 + datetime.timedelta(minutes=minutes),
        attention_passed=(not excluded) if passed is None else passed,
        excluded=excluded,
        exclusion_reason="Failed the attention check." if excluded else "",
        **fields,
    )
