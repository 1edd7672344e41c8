"""The lookups behind every annotation request (next pair, vote), as fixed SQL.

Next-pair is the request annotators wait on, and most of its time went into composing
these lookups with the ORM: about 4-5 ms of Python each for the current lease and for a
free pair (subqueries, a row lock, related rows), against well under 1 ms for PostgreSQL
to run them. As fixed text they cost nothing to compose and, with DB_PREPARED_STATEMENTS,
PostgreSQL plans them once per connection. The same SQL runs on SQLite, which has no row
locks: there the project opens every transaction IMMEDIATE, so writers take turns.

A pair's slots: it wants `votes_per_pair` votes, and an assignment holds one of its slots
while it is VOTED, or LEASED with time left.

No statement on the annotator's path counts a campaign's pairs or votes: each pair keeps its
votes (`votes_cast`, and `needs_votes` while it has fewer than the campaign wants), each annotator
and the campaign keep tallies (annotation.models.AnnotatorTally, CampaignTally), all updated in
the vote's transaction. Finding a pair with room walks the partial index of the pairs that need
votes in id order and stops at the first one with room, so it touches the pairs being worked on
now (about as many as annotators at work), never the pairs already full.

Adaptive campaigns (annotation/adaptive.py) add three: a slot of the budget taken under the
campaign's row lock (so concurrent draws take turns), given back when nothing could be drawn,
and an unused question for a model pair.
"""

import weakref
from functools import cache
from typing import Any, cast

from django.db import connection
from django.db.models import Model

from annotation.models import (
    AnnotatorTally,
    Assignment,
    Campaign,
    CampaignTally,
    ComparisonPair,
    ModelPairSlots,
)
from core.raw_rows import raw_first
from curation.models import Item
from judging.models import Answer

_LEASED, _VOTED = Assignment.Status.LEASED.value, Assignment.Status.VOTED.value
_RELEASED = Assignment.Status.RELEASED.value
# The pair and question columns read along with a lease, and the attributes they fill.
_PAIR_FIELDS = ["id", "campaign_id", "item_id", "model_a_id", "model_b_id", "is_gold", "gold_winner"]
_ITEM_FIELDS = ["id", "question", "language"]


@cache
def _statements(vendor: str) -> dict[str, str]:
    """The SQL for this database, composed once per process."""
    table = {
        name: connection.ops.quote_name(model._meta.db_table)
        for name, model in (
            ("campaign", Campaign),
            ("assignment", Assignment),
            ("pair", ComparisonPair),
            ("item", Item),
            ("answer", Answer),
            ("tally", AnnotatorTally),
            ("campaign_tally", CampaignTally),
            ("model_pairs", ModelPairSlots),
        )
    }
    features = connection.features
    lock_own_row = " FOR UPDATE OF s" if features.has_select_for_update_of else ""
    # A pair another annotator is leasing right now is skipped, never waited for.
    lock_free_pair = " FOR UPDATE OF p SKIP LOCKED" if features.has_select_for_update_skip_locked else ""
    pins = cast(type[Model], Campaign._meta.get_field("answer_sets").remote_field.through)._meta.db_table

    def answer_of(model_column: str) -> str:
        # The version of the model's answers the campaign pinned when it was made
        # (judging/answers/versions.py): a replace since never changes what annotators see.
        # Asked per answer row (one or two per item and model) through the pins' unique
        # (campaign, answer set) index: a lookup, never a read of every campaign's pins.
        return f"""SELECT a.text FROM {table["answer"]} a WHERE a.item_id = p.item_id AND a.model_id = {model_column}
            AND EXISTS (
                SELECT 1 FROM {connection.ops.quote_name(pins)} pin
                WHERE pin.campaign_id = p.campaign_id AND pin.answerset_id = a.answer_set_id
            )"""

    shown = f"""
        p.campaign_id AS pair_campaign_id, p.item_id AS pair_item_id, p.model_a_id AS pair_model_a_id,
        p.model_b_id AS pair_model_b_id, p.is_gold AS pair_is_gold, p.gold_winner AS pair_gold_winner,
        i.question AS item_question, i.language AS item_language,
        ({answer_of("p.model_a_id")}) AS answer_a_text,
        ({answer_of("p.model_b_id")}) AS answer_b_text"""
    holding_a_slot = f"(s.status = '{_VOTED}' OR (s.status = '{_LEASED}' AND s.leased_until > %s))"
    annotators = Campaign._meta.get_field("annotators")
    # A many-to-many field always has its through model once the models are loaded.
    membership = connection.ops.quote_name(cast(type[Model], annotators.remote_field.through)._meta.db_table)
    of_campaign, of_user = annotators.m2m_column_name(), annotators.m2m_reverse_name()
    # Every column but the manifest (a JSON document the annotator's path never reads, decoded on
    # every request otherwise); read on access, as a deferred field, where something asks for it.
    campaign_columns = ", ".join(
        f"c.{connection.ops.quote_name(field.column)}"
        for field in Campaign._meta.concrete_fields
        if field.name != "manifest" and field.column
    )
    return {
        # The campaign with this slug, open or closed, if the annotator was added to it.
        "campaign": f"""
            SELECT {campaign_columns} FROM {table["campaign"]} c
            WHERE c.slug = %s
              AND EXISTS (SELECT 1 FROM {membership} m WHERE m.{of_campaign} = c.id AND m.{of_user} = %s)""",
        # The annotator's open lease in a campaign; an item taken back by undo comes first.
        "held": f"""
            SELECT s.*, {shown}
            FROM {table["assignment"]} s
            JOIN {table["pair"]} p ON p.id = s.pair_id
            JOIN {table["item"]} i ON i.id = p.item_id
            WHERE p.campaign_id = %s AND s.annotator_id = %s AND s.status = '{_LEASED}'
            ORDER BY s.undone_at IS NULL, s.undone_at DESC, s.created_at
            LIMIT 1{lock_own_row}""",
        # The first ordinary pair after `after_id` that this annotator has never had and that
        # has a free slot (as far as this statement's snapshot sees: see slots_taken): its votes
        # are read from the pair, its running leases counted (at most votes_per_pair of them).
        # Only pairs that need votes are walked (pair_needs_votes_idx), in id order.
        # The integers are cast to the columns' type: psycopg sends a small integer as smallint,
        # and once the statement is prepared, PostgreSQL's generic plan for smallint parameters
        # walked the pairs that no longer need votes as well (ten times the work a lease).
        "free": f"""
            SELECT p.id AS id, {shown}
            FROM {table["pair"]} p
            JOIN {table["item"]} i ON i.id = p.item_id
            WHERE p.campaign_id = CAST(%s AS BIGINT) AND p.needs_votes AND NOT p.is_gold
              AND p.id > CAST(%s AS BIGINT)
              AND NOT EXISTS (SELECT 1 FROM {table["assignment"]} mine
                              WHERE mine.pair_id = p.id AND mine.annotator_id = CAST(%s AS BIGINT))
              AND p.votes_cast + (SELECT COUNT(*) FROM {table["assignment"]} s
                             WHERE s.pair_id = p.id AND s.status = '{_LEASED}' AND s.leased_until > %s)
                  < CAST(%s AS BIGINT)
            ORDER BY p.id
            LIMIT 1{lock_free_pair}""",
        # One annotator's votes in a campaign (and how many of them on gold pairs) and the items
        # they skipped, from their tally; whether an item taken back by undo waits for their new
        # vote (their LEASED assignments, a handful, through assignment_annotator_idx); the votes
        # on ordinary pairs of the whole campaign, by everyone, from its tally's shards.
        "progress": f"""
            SELECT COALESCE(t.voted, 0), COALESCE(t.gold_voted, 0),
                   (SELECT COUNT(*) FROM {table["assignment"]} s
                    JOIN {table["pair"]} p ON p.id = s.pair_id
                    WHERE s.annotator_id = %s AND s.status = '{_LEASED}' AND s.undone_at IS NOT NULL
                      AND p.campaign_id = %s),
                   COALESCE(t.released, 0),
                   (SELECT COALESCE(SUM(c.votes), 0) FROM {table["campaign_tally"]} c WHERE c.campaign_id = %s)
            FROM (SELECT 1 AS one) o
            LEFT JOIN {table["tally"]} t ON t.campaign_id = %s AND t.annotator_id = %s""",
        # Counters kept with the vote. A pair's votes, and whether it still needs some.
        "pair_votes": f"""
            UPDATE {table["pair"]} SET votes_cast = votes_cast + %s, needs_votes = (NOT is_gold AND votes_cast + %s < %s)
            WHERE id = %s""",
        # An annotator's tally in a campaign, created by its first change.
        "tally_add": f"""
            INSERT INTO {table["tally"]} (campaign_id, annotator_id, voted, gold_voted, released, last_pair_id)
            VALUES (%s, %s, %s, %s, %s, 0)
            ON CONFLICT (campaign_id, annotator_id) DO UPDATE SET
                voted = {table["tally"]}.voted + EXCLUDED.voted,
                gold_voted = {table["tally"]}.gold_voted + EXCLUDED.gold_voted,
                released = {table["tally"]}.released + EXCLUDED.released""",
        # The same when the tally exists (a count going down: its upsert's new row would break
        # the tally's own checks before the conflict is found).
        "tally_change": f"""
            UPDATE {table["tally"]} SET voted = voted + %s, gold_voted = gold_voted + %s, released = released + %s
            WHERE campaign_id = %s AND annotator_id = %s""",
        "campaign_tally_change": f"""
            UPDATE {table["campaign_tally"]} SET votes = votes + %s WHERE campaign_id = %s AND shard = %s""",
        "tally_read": f"""
            SELECT voted, last_pair_id FROM {table["tally"]} WHERE campaign_id = %s AND annotator_id = %s""",
        "tally_last_pair": f"""
            INSERT INTO {table["tally"]} (campaign_id, annotator_id, voted, gold_voted, released, last_pair_id)
            VALUES (%s, %s, 0, 0, 0, %s)
            ON CONFLICT (campaign_id, annotator_id) DO UPDATE SET last_pair_id = CASE
                WHEN EXCLUDED.last_pair_id > {table["tally"]}.last_pair_id THEN EXCLUDED.last_pair_id
                ELSE {table["tally"]}.last_pair_id END""",
        # One shard of the campaign's votes on ordinary pairs.
        "campaign_tally_add": f"""
            INSERT INTO {table["campaign_tally"]} (campaign_id, shard, votes) VALUES (%s, %s, %s)
            ON CONFLICT (campaign_id, shard) DO UPDATE SET votes = {table["campaign_tally"]}.votes + EXCLUDED.votes""",
        # Adaptive campaigns: how many pairs this annotator's requests drew that nobody has voted
        # on yet (pair_drawn_unvoted_idx; stops counting at the limit).
        "drawn_unvoted": f"""
            SELECT COUNT(*) FROM (SELECT 1 FROM {table["pair"]} p
                                  WHERE p.campaign_id = %s AND p.drawn_by_id = %s AND p.votes_cast = 0
                                  LIMIT %s) d""",
        # The model pairs (ids in order) that have no question left to draw.
        "model_pairs_used_up": f"""
            SELECT model_a_id, model_b_id FROM {table["model_pairs"]}
            WHERE campaign_id = %s AND drawn >= available""",
        "model_pair_drawn": f"""
            UPDATE {table["model_pairs"]} SET drawn = drawn + 1
            WHERE campaign_id = %s AND model_a_id = %s AND model_b_id = %s AND drawn < available""",
        "model_pair_used_up": f"""
            UPDATE {table["model_pairs"]} SET drawn = available
            WHERE campaign_id = %s AND model_a_id = %s AND model_b_id = %s""",
        # The annotator's assignment with this token, row-locked, with what a vote copies from
        # its pair and the campaign's overlap.
        "mine": f"""
            SELECT s.*, p.item_id AS pair_item_id, p.model_a_id AS pair_model_a_id,
                   p.model_b_id AS pair_model_b_id, p.campaign_id AS pair_campaign_id,
                   p.is_gold AS pair_is_gold, p.choice_probability AS pair_choice_probability,
                   c.votes_per_pair AS votes_per_pair
            FROM {table["assignment"]} s
            JOIN {table["pair"]} p ON p.id = s.pair_id
            JOIN {table["campaign"]} c ON c.id = p.campaign_id
            WHERE s.token = %s AND s.annotator_id = %s
            LIMIT 1{lock_own_row}""",
        "status_set": f"""UPDATE {table["assignment"]} SET status = %s WHERE id = %s""",
        "taken": f"""
            SELECT COUNT(*) FROM {table["assignment"]} s
            WHERE s.pair_id = %s AND s.id <> %s AND {holding_a_slot}""",
        # The pair's row lock, waited for (not skipped): whoever holds it is changing its slots.
        "lock_pair": f"""SELECT p.id FROM {table["pair"]} p WHERE p.id = %s{" FOR UPDATE" if lock_free_pair else ""}""",
        # Adaptive campaigns: one more pair of the budget, under the campaign's row lock (held to
        # the end of the transaction, so draws take turns); its number, or no row when spent.
        "take_slot": f"""
            UPDATE {table["campaign"]} SET pairs_drawn = pairs_drawn + 1
            WHERE id = %s AND pairs_drawn < %s
            RETURNING pairs_drawn""",
        "return_slot": f"""UPDATE {table["campaign"]} SET pairs_drawn = pairs_drawn - 1 WHERE id = %s""",
        # A question of the dataset that both models answered and that no pair of the campaign
        # shows with these two models (in either order, gold pairs included), with both answers:
        # the first in the order (item id * a + b) mod prime, a random order drawn per call.
        "unused_question": f"""
            SELECT x.item_id, i.question, i.language, x.text, y.text
            FROM {table["answer"]} x
            JOIN {table["answer"]} y ON y.item_id = x.item_id AND y.model_id = %s
            JOIN {table["item"]} i ON i.id = x.item_id
            WHERE x.model_id = %s AND i.dataset_id = %s
              AND NOT EXISTS (SELECT 1 FROM {table["pair"]} p
                              WHERE p.campaign_id = %s AND p.item_id = x.item_id
                                AND ((p.model_a_id = %s AND p.model_b_id = %s)
                                     OR (p.model_a_id = %s AND p.model_b_id = %s)))
            ORDER BY (x.item_id * %s + %s) %% %s
            LIMIT 1""",
    }


def _sql(name: str) -> str:
    return _statements(connection.vendor)[name]


def _attach_pair(instance, pair_id: int) -> ComparisonPair:
    """The pair and question read along with `instance`, as model instances (other columns deferred)."""
    db = instance._state.db
    pair = ComparisonPair.from_db(
        db,
        _PAIR_FIELDS,
        [
            pair_id,
            instance.pair_campaign_id,
            instance.pair_item_id,
            instance.pair_model_a_id,
            instance.pair_model_b_id,
            bool(instance.pair_is_gold),
            instance.pair_gold_winner,
        ],
    )
    pair.item = Item.from_db(db, _ITEM_FIELDS, [instance.pair_item_id, instance.item_question, instance.item_language])
    pair.answer_a_text, pair.answer_b_text = instance.answer_a_text, instance.answer_b_text
    return pair


def annotator_campaign(*, slug: str, annotator_id: int) -> Campaign | None:
    """The campaign with this slug (open or closed) if the annotator was added to it, else None."""
    return raw_first(Campaign, _sql("campaign"), [slug, annotator_id])


def held_lease(*, campaign_id: int, annotator_id: int) -> Assignment | None:
    """The annotator's open lease in the campaign, row-locked, with its pair, question and both
    answers' texts (`answer_a_text`, `answer_b_text`); None when they hold none.
    Call inside a transaction."""
    found = raw_first(Assignment, _sql("held"), [campaign_id, annotator_id])
    if found is not None:
        found.pair = _attach_pair(found, found.pair_id)
    return found


def free_pair(*, campaign_id: int, annotator_id: int, now, votes_per_pair: int, after_id: int = 0):
    """The first ordinary pair after `after_id` that the annotator never had and that has fewer
    than `votes_per_pair` slots taken at `now`, row-locked (pairs locked by others are skipped),
    with its question and both answers' texts; None when there is none. Call inside a transaction."""
    params = [campaign_id, after_id, annotator_id, now, votes_per_pair]
    found = raw_first(ComparisonPair, _sql("free"), params)
    return None if found is None else _attach_pair(found, found.pk)


def votes_and_waiting(*, campaign_id: int, annotator_id: int) -> tuple[int, int, int, int, int]:
    """(items voted on, those of them gold pairs, items taken back by undo and waiting for a new
    vote, items skipped) of one annotator, and the votes on the campaign's ordinary pairs by everyone."""
    with connection.cursor() as cursor:
        cursor.execute(_sql("progress"), [annotator_id, campaign_id, campaign_id, campaign_id, annotator_id])
        voted, gold, waiting, skipped, campaign_votes = cursor.fetchone()
    return int(voted), int(gold), int(waiting), int(skipped), int(campaign_votes)


def assignment_to_vote_on(*, token: str, annotator_id: int) -> Assignment | None:
    """The annotator's assignment with this token, row-locked; it carries `pair_item_id`,
    `pair_model_a_id`, `pair_model_b_id`, `pair_campaign_id`, `pair_is_gold` and the
    campaign's `votes_per_pair`. None when no such assignment is theirs.
    Call inside a transaction."""
    return raw_first(Assignment, _sql("mine"), [token, annotator_id])


def assignment_status_set(*, assignment_id: int, status: str) -> None:
    """Set an assignment's status (a vote cast on it: VOTED)."""
    _execute("status_set", [str(status), assignment_id])


def pair_lock(*, pair_id: int) -> None:
    """Wait for and take the pair's row lock (PostgreSQL; SQLite's IMMEDIATE transactions already
    serialise writers). Take it before counting a pair's slots to add one outside `free_pair`
    (renewing an expired lease, voting on one): a lease another annotator is taking on the pair
    right now is then committed, and counted, before we count. Call inside a transaction."""
    with connection.cursor() as cursor:
        cursor.execute(_sql("lock_pair"), [pair_id])


def slots_taken(*, pair_id: int, now, other_than: int = 0) -> int:
    """How many of the pair's slots are taken at `now`, not counting assignment `other_than`.

    Run as a new statement after the pair's row lock is granted: under READ COMMITTED it
    sees every lease committed before then, which the lookup that took the lock may not."""
    with connection.cursor() as cursor:
        cursor.execute(_sql("taken"), [pair_id, other_than, connection.ops.adapt_datetimefield_value(now)])
        return cursor.fetchone()[0]


def budget_slot_take(*, campaign_id: int, pairs_planned: int) -> int | None:
    """Count one more pair drawn by an adaptive campaign, unless it has drawn `pairs_planned`
    already: the new number of pairs drawn (which seeds the draw), or None when the budget is
    spent. Takes the campaign's row lock to the end of the transaction: call inside one."""
    with connection.cursor() as cursor:
        cursor.execute(_sql("take_slot"), [campaign_id, pairs_planned])
        row = cursor.fetchone()
    return None if row is None else int(row[0])


def budget_slot_return(*, campaign_id: int) -> None:
    """Give back the slot budget_slot_take counted when no pair could be drawn after all."""
    with connection.cursor() as cursor:
        cursor.execute(_sql("return_slot"), [campaign_id])


def unused_question_pair(
    *, campaign_id: int, dataset_id: int, model_a_id: int, model_b_id: int, order: tuple[int, int, int]
) -> ComparisonPair | None:
    """A new (unsaved) ordinary pair of the two models on a question of the dataset that both
    answered and that the campaign has never shown with them, with its question and both answers'
    texts; None when there is no such question. `order` is (a, b, prime): the question taken is
    the first in the order (item id * a + b) mod prime, so the caller's random a and b make it a
    random one. Call inside the transaction that takes the budget's slot."""
    multiplier, offset, prime = order
    params = [model_b_id, model_a_id, dataset_id, campaign_id, model_a_id, model_b_id, model_b_id, model_a_id]
    with connection.cursor() as cursor:
        cursor.execute(_sql("unused_question"), [*params, multiplier, offset, prime])
        row = cursor.fetchone()
    if row is None:
        return None
    item_id, question, language, text_a, text_b = row
    pair = ComparisonPair(item_id=item_id, model_a_id=model_a_id, model_b_id=model_b_id)
    pair.item = Item.from_db(connection.alias, _ITEM_FIELDS, [item_id, question, language])
    pair.answer_a_text, pair.answer_b_text = text_a, text_b
    return pair


def _execute(name: str, params: list) -> None:
    with connection.cursor() as cursor:
        cursor.execute(_sql(name), params)


def pair_votes_add(*, pair_id: int, delta: int, votes_per_pair: int) -> None:
    """Count a vote on the pair (delta 1) or one taken back (-1), and whether it still needs votes.
    Takes the pair's row lock to the end of the transaction: call inside one."""
    _execute("pair_votes", [delta, delta, votes_per_pair, pair_id])


def tally_add(*, campaign_id: int, annotator_id: int, voted: int = 0, gold_voted: int = 0, released: int = 0) -> None:
    """Change an annotator's tally in a campaign by these amounts (its database constraints refuse
    a count below zero or more gold votes than votes)."""
    if min(voted, gold_voted, released) < 0:
        _execute("tally_change", [voted, gold_voted, released, campaign_id, annotator_id])
    else:
        _execute("tally_add", [campaign_id, annotator_id, voted, gold_voted, released])


def campaign_votes_add(*, campaign_id: int, annotator_id: int, delta: int) -> None:
    """Count a vote on an ordinary pair of the campaign (delta 1) or one taken back (-1), in the
    voter's shard of the campaign's tally."""
    shard = annotator_id % CampaignTally.TALLY_SHARDS
    if delta < 0:
        _execute("campaign_tally_change", [delta, campaign_id, shard])
    else:
        _execute("campaign_tally_add", [campaign_id, shard, delta])


def tally_read(*, campaign_id: int, annotator_id: int) -> tuple[int, int]:
    """(items voted on, gold pairs included; the highest ordinary pair id leased to them) of an
    annotator in the campaign, from their tally."""
    with connection.cursor() as cursor:
        cursor.execute(_sql("tally_read"), [campaign_id, annotator_id])
        row = cursor.fetchone()
    return (0, 0) if row is None else (int(row[0]), int(row[1]))


def last_pair_note(*, campaign_id: int, annotator_id: int, pair_id: int) -> None:
    """Remember that the annotator was leased this ordinary pair (their lookups start after the highest)."""
    _execute("tally_last_pair", [campaign_id, annotator_id, pair_id])


def drawn_unvoted(*, campaign_id: int, annotator_id: int, limit: int) -> int:
    """How many pairs the annotator's requests drew in the campaign that have no vote yet, up to `limit`."""
    with connection.cursor() as cursor:
        cursor.execute(_sql("drawn_unvoted"), [campaign_id, annotator_id, limit])
        return int(cursor.fetchone()[0])


def model_pairs_used_up(*, campaign_id: int) -> set[tuple[int, int]]:
    """The model pairs (ids in order) of an adaptive campaign with no question left to draw."""
    with connection.cursor() as cursor:
        cursor.execute(_sql("model_pairs_used_up"), [campaign_id])
        return {(int(a), int(b)) for a, b in cursor.fetchall()}


def model_pair_drawn(*, campaign_id: int, model_ids: tuple[int, int], used_up: bool = False) -> None:
    """Count one more question drawn for the two models (`used_up`: none is left, whatever the count said)."""
    low, high = sorted(model_ids)
    _execute("model_pair_used_up" if used_up else "model_pair_drawn", [campaign_id, low, high])


# Prepared statements (DB_PREPARED_STATEMENTS) keep the plan PostgreSQL made for them on a
# connection until the tables' statistics change. Made while the annotation tables were nearly
# empty (a new deployment, an adaptive campaign's first pairs), a plan reads them whole, and goes
# on reading them as they fill, until autovacuum's ANALYZE comes by: up to a minute, or for ever
# where autovacuum is off (a fresh adaptive campaign's PostgreSQL CPU a round grew from 10 to
# 160 ms over 3,000 rounds on such a server; bench/README.md, "Plans made on empty tables").
# So a connection drops its plans after its 32nd lease, its 64th, 128th and so on, as a table
# that a campaign fills from empty doubles, then every 1,024th: each time the next executions
# plan again on the tables as they are. About twenty statements planned again now and then cost
# PostgreSQL a few milliseconds per thousand leases.
PLAN_AGAIN_FIRST = 32
PLAN_AGAIN_EVERY = 1024
# psycopg connection -> the leases it has made.
_leases_made: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()


def plan_again_due(leases: int) -> bool:
    """Whether a connection plans again after its `leases`-th lease: at PLAN_AGAIN_FIRST times a
    power of two below PLAN_AGAIN_EVERY, then at every multiple of PLAN_AGAIN_EVERY."""
    if leases % PLAN_AGAIN_EVERY == 0:
        return True
    share, rest = divmod(leases, PLAN_AGAIN_FIRST)
    return rest == 0 and share > 0 and share & (share - 1) == 0 and leases < PLAN_AGAIN_EVERY


def prepared_plans_renew_when_due() -> None:
    """Count a lease on this connection and, when plan_again_due says so, drop the statements it
    prepared (PostgreSQL with prepared statements only). Sent straight to the driver: it is the
    connection's upkeep, not one of the request's queries."""
    if connection.vendor != "postgresql":
        return
    driver = connection.connection
    if driver is None or getattr(driver, "prepare_threshold", None) is None:
        return
    leases = _leases_made[driver] = _leases_made.get(driver, 0) + 1
    if plan_again_due(leases):
        # psycopg forgets its own prepared statements too when it sees this command succeed.
        driver.execute("DEALLOCATE ALL")
