"""A full replica's supervisor with the table service and the claims bucket played by fakes: a
burst of offers never takes more than the room, a seat that waited is claimed only if its
table still needs a computer player for it, and a request is read by its reason whichever form
the table service wrote it in."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import grpc
import pytest
from prometheus_client import CollectorRegistry

from cardtable.bot_service.claims import ClaimsUnavailableError, SeatClaims
from cardtable.bot_service.metrics import BotMetrics
from cardtable.bot_service.supervisor import BotSupervisor
from cardtable.bot_service.table_client import TableClient
from cardtable.bots.strategy import Strategy
from cardtable.platform.event_upcasting import with_text
from cardtable_api.events.v1 import events_pb2
from cardtable_api.table.v1 import table_pb2

BOT, PERSON = events_pb2.PLAYER_KIND_BOT, events_pb2.PLAYER_KIND_PERSON
REQUEST = events_pb2.BotSeatRequested


class _Claims:
    """Claims that take a round trip; seats in ``elsewhere`` are another replica's."""

    def __init__(self) -> None:
        self.seats: set[tuple[str, int]] = set()
        self.elsewhere: set[tuple[str, int]] = set()
        self.unavailable = False

    def held(self) -> list[tuple[str, int]]:
        return list(self.seats)

    def holds(self, table_id: str, seat: int) -> bool:
        return (table_id, seat) in self.seats

    async def claim(self, table_id: str, seat: int) -> bool:
        await asyncio.sleep(0)
        if self.unavailable:
            raise ClaimsUnavailableError("no answer")
        if (table_id, seat) in self.elsewhere:
            return False
        self.seats.add((table_id, seat))
        return True


class _Tables:
    """A table service whose tables run with seats 1 to 3 held by computer players."""

    def __init__(self) -> None:
        self.finished: set[str] = set()
        self.people: set[tuple[str, int]] = set()
        self.unavailable = False

    async def get_table(self, table_id: str, seat: int | None = None) -> Any:
        if self.unavailable:
            raise grpc.aio.AioRpcError(
                grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata()
            )
        seats = [
            table_pb2.SeatInfo(
                seat=number, kind=PERSON if not number or (table_id, number) in self.people else BOT
            )
            for number in range(4)
        ]
        status = "finished" if table_id in self.finished else "running"
        return table_pb2.GetTableResponse(table_id=table_id, status=status, seats=seats)


class _Player:
    def __init__(self) -> None:
        self.seats: set[int] = set()

    def add(self, seat: int) -> None:
        self.seats.add(seat)


@pytest.fixture
def parts(
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[BotSupervisor, _Claims, _Tables, CollectorRegistry]:
    """A supervisor with room for two seats, whose table players only note their seats."""
    players: dict[str, _Player] = {}
    monkeypatch.setattr(
        BotSupervisor, "_player_for", lambda self, table_id: players.setdefault(table_id, _Player())
    )
    claims, tables, registry = _Claims(), _Tables(), CollectorRegistry()
    supervisor = BotSupervisor(
        client=cast(TableClient, tables),
        claims=cast(SeatClaims, claims),
        strategies=lambda name: cast(Strategy, None),
        default_strategy="random",
        metrics=BotMetrics(registry),
        max_seats=2,
        max_waiting_seats=100,
        rescan_seconds=5.0,
        reclaim_grace_seconds=0.0,
    )
    return supervisor, claims, tables, registry


async def test_a_burst_of_offers_takes_no_more_than_the_room(
    parts: tuple[BotSupervisor, _Claims, _Tables, CollectorRegistry],
) -> None:
    supervisor, claims, _, registry = parts
    taken = await asyncio.gather(
        *(supervisor.offer(f"table-{number}", 1, "mallory") for number in range(40))
    )
    assert sum(taken) == 2 and len(claims.seats) == 2
    assert len(supervisor.waiting()) == 38
    assert registry.get_sample_value("bot_seat_claims_total", {"outcome": "full"}) == 38


async def test_a_seat_that_waited_is_claimed_only_if_its_table_still_needs_it(
    parts: tuple[BotSupervisor, _Claims, _Tables, CollectorRegistry],
) -> None:
    supervisor, claims, tables, registry = parts
    await supervisor.offer("playing", 1, "ann")
    await supervisor.offer("playing", 2, "ann")
    for table_id in ("ended", "reclaimed", "elsewhere", "next", "last"):
        await supervisor.offer(table_id, 1, "ann")
    assert supervisor.held() == [("playing", 1), ("playing", 2)]
    tables.finished.add("ended")
    tables.people.add(("reclaimed", 1))
    claims.elsewhere.add(("elsewhere", 1))
    # the table service does not answer: the seats keep their places
    claims.seats.discard(("playing", 1))
    tables.unavailable = True
    assert await supervisor.take_waiting() == 0
    assert [seat.table_id for seat in supervisor.waiting()] == [
        "ended",
        "reclaimed",
        "elsewhere",
        "next",
        "last",
    ]
    tables.unavailable = False
    assert await supervisor.take_waiting() == 1
    assert supervisor.held() == [("next", 1), ("playing", 2)]
    assert [seat.table_id for seat in supervisor.waiting()] == ["last"]

    def left(outcome: str) -> float | None:
        return registry.get_sample_value("bot_seat_wait_seconds_count", {"outcome": outcome})

    assert (left("gone"), left("held_elsewhere"), left("taken")) == (2, 1, 1)
    assert registry.get_sample_value("bot_seats_waiting") == 1
    # NATS does not answer a claim: the seat keeps its place too
    claims.seats.discard(("playing", 2))
    claims.unavailable = True
    assert await supervisor.take_waiting() == 0
    assert [seat.table_id for seat in supervisor.waiting()] == ["last"]


@pytest.mark.parametrize("form", ["enum and text", "text only"])
async def test_a_seat_request_is_read_by_its_reason_in_either_form(
    parts: tuple[BotSupervisor, _Claims, _Tables, CollectorRegistry], form: str
) -> None:
    """A table service built before the enum wrote the reason as text only: a request to make
    one move is still ignored, a hand-over still taken, each counted under the same label."""
    supervisor, _, _, registry = parts
    single_move, handover = REQUEST.REASON_SINGLE_MOVE, REQUEST.REASON_HANDOVER

    def request(seat: int, reason: REQUEST.Reason.ValueType) -> REQUEST:
        written = with_text(REQUEST(seat=seat, request_reason=reason, created_by="ann"))
        if form == "text only":
            written.ClearField("request_reason")
        return written

    await supervisor.on_request("table", request(1, single_move))
    await supervisor.on_request("table", request(2, handover))

    assert supervisor.held() == [("table", 2)]
    for label in ("single_move", "handover"):
        assert registry.get_sample_value("bot_seat_requests_total", {"reason": label}) == 1
