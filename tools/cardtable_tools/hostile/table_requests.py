"""Hostile requests to the table service, one generator per kind.

Most are a legal move with exactly one thing wrong (the token, the seat, the turn, the
version ...), so that a refusal can only come from the check under test.
"""

from __future__ import annotations

import base64
import random
import uuid
from collections.abc import Awaitable, Callable

from google.protobuf.message import Message

from cardtable.table_service.application import MAX_COMMAND_ID_CHARS
from cardtable.table_service.commands import MAX_ACTION_CHARS
from cardtable_api.common.v1 import common_pb2
from cardtable_api.events.v1 import events_pb2
from cardtable_api.table.v1 import table_pb2
from cardtable_tools.hostile import tokens
from cardtable_tools.hostile.calls import HostileRequest, Material, Metadata, rules_call, table_call
from cardtable_tools.hostile.garbage import undecodable_bytes
from cardtable_tools.hostile.scene import Client, LiveTable, Turn

TRANSPORT_LIMIT_BYTES = 4 * 1024 * 1024
#: Table-service methods (all but Pipeline take a unary request whose field 1 is a string).
TABLE_METHODS = (
    "CreateTable",
    "ListTables",
    "JoinTable",
    "QuickSeat",
    "LeaveTable",
    "StartGame",
    "Rematch",
    "MakeMove",
    "GetTable",
    "WatchTable",
    "WatchTurns",
    "GetGameRecord",
    "Pipeline",
)
RULES_METHODS = ("NewGame", "Deal", "ApplyAction", "LegalActions", "GetView", "Rebuild", "Pipeline")
MALFORMED_TABLE_IDS = (
    "",
    "not-a-table",
    "*",
    ">",
    "table.*",
    "../../etc/passwd",
    "00000000-0000-0000-0000-00000000000g",
    "\u2603\u2603",
    "DROP TABLE tables;",
    " ",
)


def _command_id() -> str:
    return str(uuid.uuid4())


def _move(
    turn: Turn, *, seat: int | None = None, action: str | None = None, **fields: object
) -> table_pb2.MakeMoveRequest:
    request = table_pb2.MakeMoveRequest(
        command_id=_command_id(),
        table_id=turn.table.table_id,
        seat=turn.seat if seat is None else seat,
        action=turn.action if action is None else action,
    )
    for name, value in fields.items():
        setattr(request, name, value)
    return request


def _seated_other_than(table: LiveTable, seat: int, rng: random.Random) -> tuple[int, Client]:
    others = [number for number in range(len(table.seats)) if number != seat]
    other = rng.choice(others)
    return other, table.seats[other]


def _malformed_table_id(rng: random.Random) -> str:
    real = str(uuid.uuid4())
    return rng.choice(
        [
            *MALFORMED_TABLE_IDS,
            real + "0",
            real[:-1],
            real.replace("-", " "),
            "".join(chr(rng.randrange(0x20, 0x3000)) for _ in range(rng.randrange(1, 60))),
        ]
    )


def _unknown_table_id(rng: random.Random) -> str:
    value = uuid.UUID(int=rng.getrandbits(128))
    return rng.choice([str(value), str(value).upper(), f"{{{value}}}", value.urn, value.hex])


def _table_id_request(method: str, table_id: str) -> Message:
    """The request of ``method`` naming ``table_id`` and otherwise well-formed."""
    if method == "GetTable":
        return table_pb2.GetTableRequest(table_id=table_id)
    if method == "WatchTable":
        return table_pb2.WatchTableRequest(table_id=table_id)
    if method == "WatchTurns":
        return table_pb2.WatchTurnsRequest(table_id=table_id, seat=0)
    if method == "GetGameRecord":
        return table_pb2.GetGameRecordRequest(table_id=table_id)
    if method == "MakeMove":
        return table_pb2.MakeMoveRequest(
            command_id=_command_id(), table_id=table_id, seat=0, action="pass"
        )
    message: type[Message] = getattr(table_pb2, f"{method}Request")
    return message(command_id=_command_id(), table_id=table_id)


TABLE_ID_METHODS = (
    "GetTable",
    "WatchTable",
    "WatchTurns",
    "GetGameRecord",
    "MakeMove",
    "JoinTable",
    "LeaveTable",
    "StartGame",
    "Rematch",
)


# -- kinds ------------------------------------------------------------------------------------
async def garbage_bytes(material: Material) -> HostileRequest:
    """Undecodable bytes to any unary method of either service, or as a message of either
    service's Pipeline (every unary table request and the rules' NewGame and Rebuild have a
    string as field 1)."""
    rng = material.rng
    if rng.random() < 0.3:
        method = rng.choice(RULES_METHODS)
        payload = undecodable_bytes(rng, string_field_first=method in ("NewGame", "Rebuild"))
        return rules_call("garbage_bytes", method, payload)
    method = rng.choice(TABLE_METHODS)
    client = rng.choice(material.scene.outsiders)
    metadata = client.metadata if rng.random() < 0.5 else ()
    payload = undecodable_bytes(rng, string_field_first=method != "Pipeline")
    return table_call("garbage_bytes", method, payload, metadata)


async def malformed_fields(material: Material) -> HostileRequest:
    rng, scene = material.rng, material.scene
    kind = "malformed_fields"
    turn = await scene.turn()
    me = turn.client.metadata
    choices: list[Callable[[], HostileRequest]] = [
        lambda: table_call(
            kind,
            method := rng.choice(TABLE_ID_METHODS),
            _table_id_request(method, _malformed_table_id(rng)),
            me,
        ),
        lambda: table_call(
            kind,
            "MakeMove",
            _move(turn, command_id=rng.choice(["", "a\nb", "\x00", "x" * 129, "\u200b\t"])),
            me,
        ),
        lambda: table_call(
            kind,
            "MakeMove",
            _move(turn, seat=rng.choice([len(turn.table.seats), 7, 2**31, 2**32 - 1])),
            me,
        ),
        lambda: table_call(
            kind, "MakeMove", _move(turn, action=rng.choice(["", " ", "\t\n", "#", "pl@y QS"])), me
        ),
        lambda: table_call(
            kind,
            "MakeMove",
            _move(turn, action=rng.choice(["play ZZ", "play 1H", "bid x", "play", "\u2660 A"])),
            me,
        ),
        lambda: table_call(kind, "CreateTable", _bad_create(rng), me),
        lambda: table_call(
            kind,
            "QuickSeat",
            table_pb2.QuickSeatRequest(
                command_id=rng.choice([_command_id(), ""]), game=f"#{rng.randrange(1000)}"
            ),
            me,
        ),
        lambda: table_call(
            kind,
            "GetTable",
            table_pb2.GetTableRequest(
                table_id=turn.table.table_id, seat=rng.choice([len(turn.table.seats), 2**32 - 1])
            ),
            me,
        ),
        lambda: table_call(
            kind,
            "ListTables",
            table_pb2.ListTablesRequest(
                status=rng.choice(["closed", "OPEN ", "*", "\u2603"]), game="hearts"
            ),
        ),
        lambda: table_call(
            kind,
            "ListTables",
            table_pb2.ListTablesRequest(
                page_token=rng.choice(
                    ["!!!", "%%", base64.urlsafe_b64encode(b"abc").decode(), "AAAA", "=" * 5]
                )
            ),
        ),
    ]
    return rng.choice(choices)()


def _bad_create(rng: random.Random) -> table_pb2.CreateTableRequest:
    """A CreateTable that no game accepts: unknown game, seat count, option or value, or a
    creator's seat the table does not have."""
    request = table_pb2.CreateTableRequest(command_id=_command_id())
    shape = rng.randrange(5)
    if shape == 0:
        request.game = rng.choice(["poker", "", "hearts!", "h\u00e9arts", "358 ", "x" * 300])
        request.game = request.game if request.game.strip() != "358" else "3588"
    elif shape == 1:
        request.game, request.seats = rng.choice(
            [("hearts", 5), ("hearts", 3), ("358", 4), ("whist", 7), ("belote", 2**32 - 1)]
        )
    elif shape == 2:
        request.game = "hearts"
        request.options.CopyFrom(common_pb2.GameOptions(values={"speed": "fast"}))
    elif shape == 3:
        request.game, request.seats = rng.choice([("hearts", 4), ("whist", 3), ("358", 3)])
        request.seat = rng.choice([request.seats, request.seats + 2, 2**32 - 1])
    else:
        request.game = rng.choice(["hearts", "whist"])
        option = "quick" if request.game == "hearts" else "must_trump"
        request.options.CopyFrom(
            common_pb2.GameOptions(values={option: rng.choice(["maybe", "", "2", "\u2603"])})
        )
    return request


async def unknown_table(material: Material) -> HostileRequest:
    rng = material.rng
    method = rng.choice(TABLE_ID_METHODS)
    client = rng.choice(material.scene.outsiders)
    request = _table_id_request(method, _unknown_table_id(rng))
    return table_call("unknown_table", method, request, client.metadata)


async def missing_token(material: Material) -> HostileRequest:
    rng, scene = material.rng, material.scene
    turn = await scene.turn()
    metadata = tokens.bad_authorization(turn.client.token, rng)
    open_table = scene.open_table
    assert open_table is not None
    requests: list[tuple[str, object]] = [
        ("MakeMove", _move(turn)),
        ("MakeMove", _move(turn)),
        ("GetTable", table_pb2.GetTableRequest(table_id=turn.table.table_id, seat=turn.seat)),
        (
            "CreateTable",
            table_pb2.CreateTableRequest(command_id=_command_id(), game="hearts"),
        ),
        ("QuickSeat", table_pb2.QuickSeatRequest(command_id=_command_id(), game="hearts")),
        (
            "JoinTable",
            table_pb2.JoinTableRequest(command_id=_command_id(), table_id=open_table.table_id),
        ),
        (
            "StartGame",
            table_pb2.StartGameRequest(command_id=_command_id(), table_id=open_table.table_id),
        ),
        (
            "LeaveTable",
            table_pb2.LeaveTableRequest(command_id=_command_id(), table_id=turn.table.table_id),
        ),
    ]
    method, request = rng.choice(requests)
    return table_call("missing_token", method, request, metadata)  # type: ignore[arg-type]


def _as(token: str) -> Metadata:
    return (("authorization", f"Bearer {token}"),)


async def forged_token(material: Material) -> HostileRequest:
    turn = await material.scene.turn()
    token = tokens.forged(turn.client.player_id, turn.client.token, material.rng)
    return table_call("forged_token", "MakeMove", _move(turn), _as(token))


async def expired_token(material: Material) -> HostileRequest:
    turn = await material.scene.turn()
    token = tokens.expired(turn.client.player_id, material.signing_key, material.rng)
    return table_call("expired_token", "MakeMove", _move(turn), _as(token))


async def bad_claims(material: Material) -> HostileRequest:
    turn = await material.scene.turn()
    token = tokens.bad_claims(turn.client.player_id, material.signing_key, material.rng)
    return table_call("bad_claims", "MakeMove", _move(turn), _as(token))


async def other_seat(material: Material) -> HostileRequest:
    rng = material.rng
    turn = await material.scene.turn()
    _, other = _seated_other_than(turn.table, turn.seat, rng)
    method = rng.choice(["MakeMove", "MakeMove", "GetTable", "WatchTable", "WatchTurns"])
    if method == "MakeMove":
        return table_call("other_seat", method, _move(turn), other.metadata)
    message = getattr(table_pb2, f"{method}Request")
    request = message(table_id=turn.table.table_id, seat=turn.seat)
    return table_call("other_seat", method, request, other.metadata)


async def replayed_token(material: Material) -> HostileRequest:
    """Real tokens of players who hold no seat at this table, or a bot's for a person's."""
    rng, scene = material.rng, material.scene
    turn = await scene.turn()
    strangers = [
        client
        for table in scene.tables()
        if table is not turn.table
        for client in table.seats
        if client not in turn.table.seats
    ]
    bot = scene.new_client("bot")
    stranger = rng.choice([*strangers, *scene.outsiders, bot])
    finished = rng.choice(scene.finished)
    open_table = scene.open_table
    assert open_table is not None
    requests: list[tuple[str, object]] = [
        ("MakeMove", _move(turn)),
        ("MakeMove", _move(turn)),
        ("GetTable", table_pb2.GetTableRequest(table_id=turn.table.table_id, seat=turn.seat)),
        (
            "StartGame",
            table_pb2.StartGameRequest(command_id=_command_id(), table_id=open_table.table_id),
        ),
        (
            "Rematch",
            table_pb2.RematchRequest(command_id=_command_id(), table_id=finished.table_id),
        ),
    ]
    if stranger is bot or stranger in finished.seats or stranger in open_table.seats:
        requests = requests[:3]
    method, request = rng.choice(requests)
    return table_call("replayed_token", method, request, stranger.metadata)  # type: ignore[arg-type]


async def out_of_turn(material: Material) -> HostileRequest:
    rng, scene = material.rng, material.scene
    waiting = [
        table for table in scene.running if len(table.to_act) < len(table.seats)
    ] or scene.running
    turn = await scene.turn(rng.choice(waiting))
    idle = [seat for seat in range(len(turn.table.seats)) if seat not in turn.table.to_act]
    if not idle:  # everyone is to act (a passing phase): the move of an open table instead
        return await _move_at_open_table(material, "out_of_turn")
    seat = rng.choice(idle)
    client = turn.table.seats[seat]
    return table_call("out_of_turn", "MakeMove", _move(turn, seat=seat), client.metadata)


async def _move_at_open_table(material: Material, kind: str) -> HostileRequest:
    table = material.scene.open_table
    assert table is not None
    request = table_pb2.MakeMoveRequest(
        command_id=_command_id(), table_id=table.table_id, seat=0, action="pass"
    )
    return table_call(kind, "MakeMove", request, table.seats[0].metadata)


async def out_of_phase(material: Material) -> HostileRequest:
    rng, scene = material.rng, material.scene
    turn = await scene.turn()
    finished = rng.choice(scene.finished)
    open_table = scene.open_table
    assert open_table is not None
    newcomer = rng.choice(scene.outsiders)
    kind = "out_of_phase"
    choices: list[Callable[[], Awaitable[HostileRequest]]] = [
        lambda: _wrong_phase_action(material, turn),
        lambda: _wrong_phase_action(material, turn),
        lambda: _move_at_open_table(material, kind),
        lambda: _finished_move(material, finished),
        lambda: _call(
            kind,
            "JoinTable",
            table_pb2.JoinTableRequest(command_id=_command_id(), table_id=turn.table.table_id),
            newcomer.metadata,
        ),
        lambda: _call(
            kind,
            "StartGame",
            table_pb2.StartGameRequest(command_id=_command_id(), table_id=turn.table.table_id),
            turn.client.metadata,
        ),
        lambda: _call(
            kind,
            "Rematch",
            table_pb2.RematchRequest(command_id=_command_id(), table_id=turn.table.table_id),
            turn.client.metadata,
        ),
        lambda: _call(
            kind,
            "GetGameRecord",
            table_pb2.GetGameRecordRequest(table_id=rng.choice([turn.table, open_table]).table_id),
            (),
        ),
        lambda: _call(
            kind,
            "LeaveTable",
            table_pb2.LeaveTableRequest(command_id=_command_id(), table_id=open_table.table_id),
            newcomer.metadata,
        ),
    ]
    return await rng.choice(choices)()


async def _call(kind: str, method: str, request: object, metadata: Metadata) -> HostileRequest:
    return table_call(kind, method, request, metadata)  # type: ignore[arg-type]


async def _finished_move(material: Material, table: LiveTable) -> HostileRequest:
    request = table_pb2.MakeMoveRequest(
        command_id=_command_id(), table_id=table.table_id, seat=0, action="pass"
    )
    return table_call("out_of_phase", "MakeMove", request, table.seats[0].metadata)


async def _wrong_phase_action(material: Material, turn: Turn) -> HostileRequest:
    """An action seen legal elsewhere that this seat may not take now."""
    legal = {offered.action for offered in turn.view.legal_actions}
    verb = turn.view.choose_cards.verb if turn.view.HasField("choose_cards") else None
    candidates = sorted(
        action
        for action in material.scene.vocabulary
        if action not in legal and action.split()[0] != verb
    ) or ["take"]
    action = material.rng.choice(candidates)
    return table_call("out_of_phase", "MakeMove", _move(turn, action=action), turn.client.metadata)


async def illegal_card(material: Material) -> HostileRequest:
    rng = material.rng
    turn = await material.scene.turn()
    hand = list(turn.view.hand)
    deck = next(state.deck for state in material.states if state.game == turn.table.game)
    if turn.view.HasField("choose_cards"):
        choice = turn.view.choose_cards
        cards, count, verb = list(choice.cards), choice.count, choice.verb
        outside = [card for card in deck if card not in cards] or ["AS"]
        shapes = [
            cards[: max(0, count - 1)],
            rng.sample(cards, min(len(cards), count + 1)) if len(cards) > count else cards + cards,
            [cards[0]] * count,
            [*cards[: count - 1], rng.choice(outside)],
        ]
        action = " ".join([verb, *rng.choice(shapes)])
    else:
        legal = {offered.action for offered in turn.view.legal_actions}
        unplayable = [f"play {card}" for card in [*deck, *hand] if f"play {card}" not in legal] or [
            "play AS"
        ]
        action = rng.choice(unplayable)
    return table_call("illegal_card", "MakeMove", _move(turn, action=action), turn.client.metadata)


async def stale_version(material: Material) -> HostileRequest:
    turn = await material.scene.turn()
    version = turn.table.version
    wrong = material.rng.choice([v for v in (1, version - 1, version + 1, 2**63) if v > 0])
    request = _move(turn, expected_version=wrong if wrong != version else version + 2)
    return table_call("stale_version", "MakeMove", request, turn.client.metadata)


async def replayed_command(material: Material) -> HostileRequest:
    rng = material.rng
    tables = [table for table in material.scene.tables() if table.applied]
    table = rng.choice(tables)
    payload, metadata = rng.choice(table.applied)
    request = table_pb2.MakeMoveRequest.FromString(payload)
    return table_call("replayed_command", "MakeMove", request, metadata)


async def reused_command_id(material: Material) -> HostileRequest:
    """An applied command's id with another action: a different command, refused."""
    rng = material.rng
    tables = [table for table in material.scene.tables() if table.applied]
    table = rng.choice(tables)
    payload, metadata = rng.choice(table.applied)
    request = table_pb2.MakeMoveRequest.FromString(payload)
    request.action = rng.choice(
        [action for action in ("pass", "play AS", "bid 0", "take") if action != request.action]
    )
    return table_call("reused_command_id", "MakeMove", request, metadata)


async def borrowed_identity(material: Material) -> HostileRequest:
    """Tokens signed with the right key for identities no person may hold: a computer seat's
    id, the bot service's, ids with control or formatting characters; or two tokens at once."""
    rng = material.rng
    turn = await material.scene.turn()
    seat_id = f"bot:{turn.table.table_id}:{turn.seat}"
    player_id = rng.choice(
        [
            seat_id,
            "bots:replica-1",
            turn.client.player_id + "\u202e",
            turn.client.player_id + "\x00",
            turn.client.player_id + " ",
            "\u200b" + turn.client.player_id,
        ]
    )
    token = tokens.signed(player_id, material.signing_key)
    metadata = _as(token)
    if rng.random() < 0.3:
        metadata = (*turn.client.metadata, *metadata)  # which one counts would be a guess
    method = rng.choice(["MakeMove", "GetTable"])
    if method == "MakeMove":
        return table_call("borrowed_identity", method, _move(turn), metadata)
    request = table_pb2.GetTableRequest(table_id=turn.table.table_id, seat=turn.seat)
    return table_call("borrowed_identity", method, request, metadata)


async def oversized_settings(material: Material) -> HostileRequest:
    """CreateTable settings outside the bounds: timers no person can meet, endless waits,
    strategies that do not exist or are megabytes long, options with long values."""
    rng = material.rng
    turn = await material.scene.turn()
    settings = rng.choice(
        [
            common_settings(turn_timer_ms=rng.randrange(1, 5_000)),
            common_settings(turn_timer_ms=rng.randrange(600_001, 2**31)),
            common_settings(fill_wait_ms=rng.randrange(600_001, 2**31)),
            common_settings(bot_strategy=rng.choice(["genius", "RULES ", "x" * 64])),
            common_settings(bot_strategy="x" * rng.randrange(5_000, 3_900_000)),
        ]
    )
    request = table_pb2.CreateTableRequest(
        command_id=_command_id(), game="hearts", settings=settings
    )
    if rng.random() < 0.2:
        request.settings.Clear()
        request.options.values["quick"] = "t" * rng.randrange(33, 10_000)
    return table_call("oversized_settings", "CreateTable", request, turn.client.metadata)


def common_settings(**fields: object) -> events_pb2.TableSettings:
    return events_pb2.TableSettings(**fields)  # type: ignore[arg-type]


async def size_limits(material: Material) -> HostileRequest:
    rng = material.rng
    turn = await material.scene.turn()
    me = turn.client.metadata
    garbage_action = "play " + "Z" * (MAX_ACTION_CHARS - 5)
    shapes = [
        _move(turn, action=garbage_action),  # at the limit: read, and refused by the rules
        _move(turn, action=garbage_action + "Z"),
        _move(turn, action=turn.action + " " * MAX_ACTION_CHARS),
        _move(turn, command_id="c" * (MAX_COMMAND_ID_CHARS + 1)),
        _move(turn, command_id="c" * MAX_COMMAND_ID_CHARS, action=garbage_action),
        _move(turn, table_id=turn.table.table_id + "0" * rng.randrange(1, 200_000)),
    ]
    if rng.random() < 0.2:  # refusals that quote the input must still fit in a header
        options = {f"option{index}": "x" * 10 for index in range(rng.randrange(1, 20_000))}
        create = table_pb2.CreateTableRequest(
            command_id=_command_id(),
            game="hearts",
            options=common_pb2.GameOptions(values=options),
        )
        if rng.random() < 0.5:
            create = table_pb2.CreateTableRequest(
                command_id=_command_id(), game="\u2603" * rng.randrange(1, 300_000)
            )
        return table_call("size_limits", "CreateTable", create, me)
    return table_call("size_limits", "MakeMove", rng.choice(shapes), me)


def _sized_move(turn: Turn, size: int) -> bytes:
    """A MakeMove of exactly ``size`` bytes whose table id is filler (so it is refused)."""
    filler = "0" * size
    overhead = len(_move(turn, table_id=filler).SerializeToString()) - size
    return _move(turn, table_id="0" * (size - overhead)).SerializeToString()


async def near_transport_limit(material: Material) -> HostileRequest:
    turn = await material.scene.turn()
    size = TRANSPORT_LIMIT_BYTES - material.rng.randrange(0, 4096)
    return table_call(
        "near_transport_limit",
        "MakeMove",
        _sized_move(turn, size),
        turn.client.metadata,
        own_channel=True,
    )


async def over_transport_limit(material: Material) -> HostileRequest:
    turn = await material.scene.turn()
    size = TRANSPORT_LIMIT_BYTES + material.rng.randrange(1, 4096)
    return table_call(
        "over_transport_limit",
        "MakeMove",
        _sized_move(turn, size),
        turn.client.metadata,
        own_channel=True,
    )


GENERATORS: dict[str, Callable[[Material], Awaitable[HostileRequest]]] = {
    "garbage_bytes": garbage_bytes,
    "malformed_fields": malformed_fields,
    "unknown_table": unknown_table,
    "missing_token": missing_token,
    "forged_token": forged_token,
    "expired_token": expired_token,
    "bad_claims": bad_claims,
    "other_seat": other_seat,
    "replayed_token": replayed_token,
    "out_of_turn": out_of_turn,
    "out_of_phase": out_of_phase,
    "illegal_card": illegal_card,
    "stale_version": stale_version,
    "replayed_command": replayed_command,
    "reused_command_id": reused_command_id,
    "borrowed_identity": borrowed_identity,
    "oversized_settings": oversized_settings,
    "size_limits": size_limits,
    "near_transport_limit": near_transport_limit,
    "over_transport_limit": over_transport_limit,
}
