"""Play one seat of a Hearts game over cardtable's gRPC API, then check the scores from the log.

The smallest complete client of a table, in the order it runs:

1. sign a player token: an HS256 JWT under the stack's ``TOKEN_SIGNING_KEY``;
2. create a Hearts table whose empty seats computer players fill, and take a seat at it;
3. play that seat to the end: ``WatchTurns`` sends the seat's own view whenever it is to act,
   and ``MakeMove`` answers with one of the legal actions the view lists;
4. read the table's events from NATS JetStream as the operator, a user that may only read, and
   work the final totals out from the typed facts alone (docs/rules.md#hearts-scoring);
5. compare them with the table's ``GameFinished`` event and the scoring service's answer.

It prints a verdict line, and exits with status 1 when the three disagree. With ``make run``
serving in one shell, in another, from the repository's root:

    source .run/env
    python examples/python/play_hearts.py --quick    # one deal; without --quick, to 100

It needs only the generated API (``cardtable_api``), grpcio, nats-py and PyJWT.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import time
import uuid
from collections.abc import Iterable
from typing import cast

import grpc
import jwt
import nats
from nats.js.errors import NotFoundError

from cardtable_api.common.v1 import common_pb2, views_pb2
from cardtable_api.events.v1 import events_pb2
from cardtable_api.scoring.v1 import scoring_pb2, scoring_pb2_grpc
from cardtable_api.table.v1 import table_pb2, table_pb2_grpc

SEATS, TRICKS_PER_DEAL = 4, 13
MOON = 26  # all 13 hearts at 1 point each and the queen of spades at 13
Metadata = tuple[tuple[str, str], ...]
#: What ``source .run/env`` sets for this example (the NATS user: the operator, who only reads).
NEEDED = (
    "TABLE_ADDRESS SCORING_ADDRESS TOKEN_SIGNING_KEY EVENT_PREFIX NATS_URL NATS_USER NATS_PASSWORD"
)


def player_token(player_id: str, signing_key: str) -> str:
    """A person's token, with the claims the table service checks (table_service/auth.py)."""
    now = int(time.time())
    claims = {"sub": player_id, "kind": "person", "iss": "cardtable", "iat": now, "exp": now + 3600}
    return jwt.encode(claims, signing_key, algorithm="HS256")


def choose_action(view: views_pb2.SeatView, rng: random.Random) -> str:
    """A random legal action: any ``count`` of the offered cards (Hearts' pass), or one listed."""
    if view.HasField("choose_cards"):
        choice = view.choose_cards
        return " ".join([choice.verb, *rng.sample(list(choice.cards), choice.count)])
    return rng.choice(view.legal_actions).action


async def play_seat(
    tables: table_pb2_grpc.TableServiceAsyncStub,
    table_id: str,
    seat: int,
    metadata: Metadata,
    rng: random.Random,
) -> views_pb2.SeatView:
    """Play ``seat`` until the game is over; the final view."""
    moved_at = 0  # the table version our own last move made
    request = table_pb2.WatchTurnsRequest(table_id=table_id, seat=seat)
    async for turn in tables.WatchTurns(request, metadata=metadata):
        if turn.game_status.over:
            return turn.seat_view
        if turn.version < moved_at:
            continue  # sent while our move was on its way: that move answered it
        move = table_pb2.MakeMoveRequest(
            command_id=str(uuid.uuid4()),  # a retry with the same id would be applied once
            table_id=table_id,
            seat=seat,
            action=choose_action(turn.seat_view, rng),
            expected_version=turn.version,  # ABORTED if the table has moved on since
        )
        try:
            moved_at = (await send_move(tables, move, metadata)).version
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.ABORTED:
                raise
            # In Hearts every seat passes at once, and another seat's pass came first: the
            # stream sends our view at that newer version next.
    raise RuntimeError("the turn stream ended before the game did")


async def send_move(
    tables: table_pb2_grpc.TableServiceAsyncStub,
    move: table_pb2.MakeMoveRequest,
    metadata: Metadata,
) -> table_pb2.MakeMoveResponse:
    """MakeMove, waiting as told and sending the same command again when the player's rate
    limit refuses it (fast computer players can bring the turns quicker than it allows)."""
    while True:
        try:
            return await tables.MakeMove(move, metadata=metadata)
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                raise
            # grpc.aio gives (key, value) tuples, whatever its type stubs say
            trailing = cast("Iterable[tuple[str, str]]", error.trailing_metadata() or ())
            waits = [int(value) for key, value in trailing if key == "retry-after-ms"]
            await asyncio.sleep(waits[0] / 1000 if waits else 1.0)


async def read_log(table_id: str) -> list[events_pb2.Event]:
    """Every event of the table, in order, read from JetStream as the operator."""
    prefix = os.environ["EVENT_PREFIX"]
    name = prefix.replace(".", "_").replace("-", "_")  # as stream names must be written
    connection = await nats.connect(
        os.environ["NATS_URL"],
        user=os.environ["NATS_USER"],
        password=os.environ["NATS_PASSWORD"],
        inbox_prefix=f"_INBOX_{name}_operator",  # the one reply inbox this user may read
    )
    events: list[events_pb2.Event] = []
    sequence, subject = 0, f"{prefix}.table.{table_id}"
    try:
        while True:  # each message is one batch: the events one command produced
            try:
                message = await connection.jetstream().get_msg(
                    f"{name}_EVENTS", seq=sequence + 1, subject=subject, next=True
                )
            except NotFoundError:
                return events
            sequence = message.seq or sequence + 1
            events.extend(events_pb2.EventBatch.FromString(message.data or b"").events)
    finally:
        await connection.close()


def hearts_totals(facts: Iterable[events_pb2.FactRecorded]) -> list[int]:
    """Each seat's final total, from the cards of the tricks the ``TrickWon`` facts give it."""
    totals, taken = [0] * SEATS, [0] * SEATS  # `taken`: points in the deal being played
    for fact in facts:
        if fact.WhichOneof("body") != "trick_won":
            continue
        trick = fact.trick_won
        taken[trick.seat] += sum(13 if card == "QS" else card.endswith("H") for card in trick.cards)
        if trick.trick_number == TRICKS_PER_DEAL:  # the deal's last trick: score the deal
            if MOON in taken:  # shot the moon: 0 for the shooter, 26 for each of the others
                taken = [0 if points == MOON else MOON for points in taken]
            totals = [total + points for total, points in zip(totals, taken, strict=True)]
            taken = [0] * SEATS
    return totals


def verdict(from_facts: list[int], finished: list[int], scored: list[int]) -> tuple[bool, str]:
    """Whether the three totals agree, and the line that says so."""
    agree = from_facts == finished == scored
    return agree, (
        f"verdict: {'AGREE' if agree else 'DISAGREE'}: totals from the facts {from_facts}, "
        f"GameFinished {finished}, scoring service {scored}"
    )


async def scored_totals(table_id: str, wait_seconds: float = 60) -> list[int]:
    """The scoring service's totals, once its projection has read the end of the game."""
    async with grpc.aio.insecure_channel(os.environ["SCORING_ADDRESS"]) as channel:
        scoring = scoring_pb2_grpc.ScoringServiceStub(channel)
        request = scoring_pb2.GetGameResultRequest(table_id=table_id)
        deadline = time.monotonic() + wait_seconds
        while time.monotonic() < deadline:
            try:
                result = await scoring.GetGameResult(request)
                if result.finished:
                    return list(result.totals)
            except grpc.aio.AioRpcError as error:
                if error.code() != grpc.StatusCode.NOT_FOUND:  # NOT_FOUND: not projected yet
                    raise
            await asyncio.sleep(0.5)
    raise TimeoutError(f"the scoring service has not seen table {table_id} finish")


async def main(quick: bool, rng: random.Random) -> int:
    player = f"example-{uuid.uuid4().hex[:8]}"
    token = player_token(player, os.environ["TOKEN_SIGNING_KEY"])
    metadata = (("authorization", f"Bearer {token}"),)
    async with grpc.aio.insecure_channel(os.environ["TABLE_ADDRESS"]) as channel:
        tables = table_pb2_grpc.TableServiceStub(channel)
        create = table_pb2.CreateTableRequest(
            command_id=str(uuid.uuid4()),
            game="hearts",
            seats=SEATS,
            options=common_pb2.GameOptions(values={"quick": "true"} if quick else {}),
            # Computer players take the seats still empty 1.5 s after the table's creation.
            settings=events_pb2.TableSettings(fill_with_bots=True, fill_wait_ms=1500),
        )
        table_id = (await tables.CreateTable(create, metadata=metadata)).table_id
        join = table_pb2.JoinTableRequest(command_id=str(uuid.uuid4()), table_id=table_id)
        seat = (await tables.JoinTable(join, metadata=metadata)).seat
        print(f"{player} sits in seat {seat} of Hearts table {table_id}")
        final = await play_seat(tables, table_id, seat, metadata, rng)
        print(f"game over after {final.deal_number} deal(s), totals {list(final.totals)}")

    events = await read_log(table_id)  # `sealed` ones (hands, passes) are hidden: not needed
    facts = [event.fact_recorded for event in events if event.HasField("fact_recorded")]
    finished = next(event.game_finished for event in events if event.HasField("game_finished"))
    scored = await scored_totals(table_id)
    agree, line = verdict(hearts_totals(facts), list(finished.totals), scored)
    print(line)
    return 0 if agree else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Play a Hearts seat, then check its scores.")
    parser.add_argument("--quick", action="store_true", help="play one deal, not to 100")
    parser.add_argument("--seed", type=int, help="seed of the seat's random choices")
    arguments = parser.parse_args()
    if missing := [name for name in NEEDED.split() if name not in os.environ]:
        sys.exit(f"{', '.join(missing)} not set: `source .run/env` once `make run` serves")
    sys.exit(asyncio.run(main(arguments.quick, random.Random(arguments.seed))))
