"""The session store that reads a session with one plain query (core/sessions.py) and the
first-row reader of hand-written queries (core/raw_rows.py): they answer as Django's own do.

Sessions: a live one signs the API in; an expired one, an unknown key and a key of another
format do not (401 or 403, never a user); a tampered payload is no session; log-in still gives a
new key. Rows: the same instance `.raw()` gives (every field converted alike, extra columns as
attributes, a column not read is deferred and read on access), None for no row, and a query
without the primary key is refused as `.raw()` refuses it. Inserts (`raw_insert`): the row
save() writes, read back field for field, and no signal receiver that it would skip on the
annotator's path."""

from datetime import timedelta

import pytest
from django.contrib.sessions.models import Session
from django.core.exceptions import FieldDoesNotExist
from django.db import connection
from django.db.models.signals import post_save, pre_save
from django.utils import timezone

from annotation.models import Assignment, Campaign, ComparisonPair, Vote, Winner
from core.raw_rows import raw_first, raw_insert
from core.sessions import SessionStore
from tests.factories import CandidateModelFactory, DatasetFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db

ME = "/api/me/"


def test_a_live_session_signs_the_api_in_and_an_expired_or_unknown_one_does_not(client, annotator):
    client.force_login(annotator)
    assert client.get(ME).status_code == 200
    key = client.cookies["sessionid"].value
    assert SessionStore(key).load()["_auth_user_id"] == str(annotator.pk)

    Session.objects.filter(session_key=key).update(expire_date=timezone.now() - timedelta(seconds=1))
    assert client.get(ME).status_code in (401, 403)
    assert SessionStore(key).load() == {}

    for stranger in ("x" * 32, "' OR 1=1 --", "short"):
        client.cookies["sessionid"] = stranger
        assert client.get(ME).status_code in (401, 403), stranger


def test_a_tampered_session_is_no_session_and_log_in_gives_a_new_key(client, annotator):
    client.force_login(annotator)
    key = client.cookies["sessionid"].value
    Session.objects.filter(session_key=key).update(session_data="tampered" + "a" * 40)
    assert client.get(ME).status_code in (401, 403)
    client.force_login(annotator)
    assert client.cookies["sessionid"].value != key
    assert client.get(ME).status_code == 200


def test_a_session_read_plainly_holds_what_djangos_store_holds(annotator):
    from django.contrib.sessions.backends.db import SessionStore as DjangoStore

    stored = DjangoStore()
    stored["_auth_user_id"] = str(annotator.pk)
    stored["note"] = {"a": [1, 2], "zh": "中文"}
    stored.create()
    stored.save()
    assert SessionStore(stored.session_key).load() == DjangoStore(stored.session_key).load()


def _campaign():
    dataset = DatasetFactory()
    person = UserFactory(username="someone")
    campaign = Campaign.objects.create(
        slug="rows", title="Rows <b>", dataset=dataset, manifest={"format": "x", "models": ["m"]}, is_open=False
    )
    campaign.candidates.add(CandidateModelFactory(name="m1"))
    campaign.annotators.add(person)
    return campaign


def test_the_first_row_is_the_instance_raw_gives_with_extra_columns_and_deferred_fields():
    _campaign()
    table = connection.ops.quote_name(Campaign._meta.db_table)
    everything = f"SELECT c.*, 41 + 1 AS answer FROM {table} c WHERE c.slug = %s"
    mine = raw_first(Campaign, everything, ["rows"])
    theirs = next(iter(Campaign.objects.raw(everything, ["rows"])))
    assert mine is not None and mine._state.adding is False and mine._state.db == theirs._state.db
    for field in Campaign._meta.concrete_fields:
        assert getattr(mine, field.attname) == getattr(theirs, field.attname), field.name
        assert type(getattr(mine, field.attname)) is type(getattr(theirs, field.attname)), field.name
    assert mine.answer == theirs.answer == 42 and mine.is_open is False
    assert mine.manifest == {"format": "x", "models": ["m"]}

    fewer = f"SELECT c.id, c.slug FROM {table} c WHERE c.slug = %s"
    partial = raw_first(Campaign, fewer, ["rows"])
    assert partial is not None and partial.get_deferred_fields() >= {"manifest", "title"}
    assert partial.title == "Rows <b>"  # read on access, as a deferred field is

    assert raw_first(Campaign, fewer, ["no-such-campaign"]) is None
    with pytest.raises(FieldDoesNotExist):
        raw_first(Campaign, f"SELECT c.slug FROM {table} c", [])


def test_an_inserted_row_is_the_row_save_writes():
    campaign = _campaign()
    first, second = CandidateModelFactory(name="m2"), CandidateModelFactory(name="m3")
    item = ItemFactory(dataset=campaign.dataset)
    pair = ComparisonPair.objects.create(campaign=campaign, item=item, model_a=first, model_b=second)
    person = campaign.annotators.get()
    until = timezone.now() + timedelta(minutes=5)

    def lease(**extra):
        return Assignment(pair=pair, annotator=person, model_a_on_left=True, leased_until=until, **extra)

    before = timezone.now()
    mine = raw_insert(lease())
    assert mine.pk is not None and mine._state.adding is False and mine._state.db == "default"
    assert before <= mine.created_at <= timezone.now()  # auto_now_add, as save() sets it
    stored = Assignment.objects.get(pk=mine.pk)
    for field in Assignment._meta.concrete_fields:
        assert getattr(stored, field.attname) == getattr(mine, field.attname), field.name
    assert stored.status == Assignment.Status.LEASED and len(stored.token) == 24  # the fields' defaults

    vote = raw_insert(
        Vote(
            item=item,
            model_a=first,
            model_b=second,
            winner=Winner.TIE,
            campaign=campaign,
            assignment=mine,
            annotator=person,
            comment="fine <i>",
            seconds_spent=1.5,
        )
    )
    kept = Vote.objects.get(pk=vote.pk)
    for field in Vote._meta.concrete_fields:
        assert getattr(kept, field.attname) == getattr(vote, field.attname), field.name
    assert kept.choice_probability is None and kept.source_key == "" and kept.comment == "fine <i>"


@pytest.mark.parametrize("signal", [pre_save, post_save], ids=["pre_save", "post_save"])
@pytest.mark.parametrize("model", [Assignment, Vote], ids=lambda model: model.__name__)
def test_no_receiver_waits_for_the_saves_raw_insert_makes_on_the_annotators_path(signal, model):
    """raw_insert sends no signal: a receiver added for these models would never hear of the
    annotator's leases and votes, so it must go with save() there (annotation/services.py)."""
    assert not signal.has_listeners(model)
