"""The session store that reads a session with one plain query (core/sessions.py) and the
first-row reader of hand-written queries (core/raw_rows.py): they answer as Django's own do.

Sessions: a live one signs the API in; an expired one, an unknown key and a key of another
format do not (401 or 403, never a user); a tampered payload is no session; log-in still gives a
new key. Rows: the same instance `.raw()` gives (every field converted alike, extra columns as
attributes, a column not read is deferred and read on access), None for no row, and a query
without the primary key is refused as `.raw()` refuses it."""

from datetime import timedelta

import pytest
from django.contrib.sessions.models import Session
from django.core.exceptions import FieldDoesNotExist
from django.db import connection
from django.utils import timezone

from annotation.models import Campaign
from core.raw_rows import raw_first
from core.sessions import SessionStore
from tests.factories import CandidateModelFactory, DatasetFactory, UserFactory

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
