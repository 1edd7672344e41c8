"""Candidate models: who serves a model and its family, and the injection probe's
pseudo-candidates with their constant answers."""

from __future__ import annotations

from django.db import transaction
from django.utils.translation import gettext as _

from core.models import Workspace
from core.workspaces import in_workspace
from curation.models import Dataset
from judging.answers.probe import ATTACKS
from judging.errors import RunError
from judging.models import Answer, CandidateModel


@transaction.atomic
def candidate_model_describe(
    *, name: str, workspace: Workspace, provider: str | None = None, family: str | None = None
) -> CandidateModel:
    """Record who serves a model of `workspace` and its family (None leaves a field as it is),
    creating the model there when it is new: a judge named like it is then known to share them
    (self-preference) in that workspace's runs. Another workspace's model of the same name is
    another model, its description untouched."""
    if provider is not None and len(provider.strip()) > 64:
        raise RunError(_("The provider is at most 64 characters."))
    if family is not None and len(family.strip()) > 64:
        raise RunError(_("The family is at most 64 characters."))
    if not name.strip() or len(name.strip()) > 128:
        raise RunError(_("Name the model (1 to 128 characters)."))
    model, _created = CandidateModel.objects.get_or_create(name=name.strip(), workspace=workspace)
    if provider is not None:
        model.provider = provider.strip()
    if family is not None:
        model.family = family.strip()
    model.save(update_fields=["provider", "family"])
    return model


@transaction.atomic
def probe_answers_ensure(*, dataset: Dataset) -> list[CandidateModel]:
    """The injection probe's pseudo-candidates (judging/answers/probe.py), each with its constant answer
    on every item of the dataset in the item's language; returns the probe models.

    A real model already named like a probe is refused rather than taken over."""
    models_here = in_workspace(CandidateModel.objects.all(), dataset.workspace_id)
    taken = list(
        models_here.filter(name__in=[a.model_name for a in ATTACKS], is_probe=False).values_list("name", flat=True)
    )
    if taken:
        raise RunError(
            _("The probe's model names are taken by real models: %(names)s.") % {"names": ", ".join(sorted(taken))}
        )
    items = list(dataset.items.order_by("id").values_list("id", "language"))
    probes = []
    for attack in ATTACKS:
        probe, _created = models_here.get_or_create(
            name=attack.model_name, defaults={"is_probe": True, "workspace_id": dataset.workspace_id}
        )
        probes.append(probe)
        for language in {language for _id, language in items}:
            # The constant is the attack as Userbench ships it now; an older wording is replaced.
            Answer.objects.filter(item__dataset=dataset, item__language=language, model=probe).exclude(
                text=attack.text_for(language)
            ).update(text=attack.text_for(language))
        Answer.objects.bulk_create(
            [
                Answer(
                    item_id=item_id,
                    model=probe,
                    text=attack.text_for(language),
                    origin=Answer.Origin.PROBE,
                    parameters={"attack": attack.key},
                )
                for item_id, language in items
            ],
            ignore_conflicts=True,
        )
    return probes
