"""Translation between the engine's Python values and the rules contract's messages.

Kept apart from the servicer so the servicer reads as "decode, call the engine, encode", and so
the limits on untrusted input (sizes, formats) sit in one place.
"""

from __future__ import annotations

import hashlib
import secrets
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from google.protobuf import struct_pb2

from cardtable.engine.cards import card_texts, parse_card

__all__ = ["card_texts", "encode_audience"]
from cardtable.engine.errors import InvalidInput
from cardtable.engine.facts import Fact, fact_to_dict
from cardtable.engine.game import SNAPSHOT_VERSION, GameSpec, GameState
from cardtable.engine.registry import game_spec
from cardtable.platform.fact_messages import audience_message as encode_audience
from cardtable.platform.protobuf_wire import struct_bytes
from cardtable.rules_service.snapshots import JSON, check_encoding, dump_snapshot, load_snapshot
from cardtable.views.encode import encode_view
from cardtable.views.names import STATUS_PHASES
from cardtable_api.common.v1 import common_pb2
from cardtable_api.rules.v1 import rules_pb2

#: Largest snapshot accepted: a real one is a few kilobytes even late in a long Whist game.
MAX_SNAPSHOT_BYTES = 256 * 1024
#: Longest action text accepted ("discard 10C 10D 10H 10S" is 23 characters).
MAX_ACTION_CHARS = 64
#: Most inputs accepted by Rebuild: a 6-player Whist game has about 30 deals and 700 actions.
MAX_REBUILD_INPUTS = 20_000


class StateNotFoundError(Exception):
    """A state reference this replica does not hold (any more, or for that scope)."""


class StateMemo:
    """The states this service produced or checked recently: by the SHA-256 of their snapshot,
    or by a reference it made for its caller (rules.proto, GameState).

    A table sends the state it got back from one call with its next calls (a view, then the
    next move), and checking a snapshot is most of a call's cost. A snapshot whose exact bytes
    were produced or checked here before is known to be valid, so its state is reused; any
    snapshot it has not seen is checked in full. A reference goes further: the caller holds no
    snapshot at all, so the state is only here, and a reference not found is the caller's to
    mend (NOT_FOUND: it rebuilds or sends the snapshot).

    Nothing is copied. A call that only reads a state (a view, the legal actions) shares the
    remembered one; a call that changes it (a deal, an action) takes it out, since the table
    will not send that snapshot or reference again once it holds the next one. So an entry
    lives about as long as its table's turn, and the memo holds about one state per table in
    play. That keeps the garbage collector's work small: a memo of copies that lived for
    thousands of moves made old objects die as fast as new ones were born, so young
    collections came seldom and each one walked tens of thousands of objects, a pause every
    call waited out (docs/proving-it.md#settings-the-figures-chose).
    """

    def __init__(self, size: int = 20_000) -> None:
        self._size = size
        #: States dropped to stay within ``size``, and references asked for and not held.
        self.evicted = 0
        self.references_not_found = 0
        #: Keys: a snapshot's 32-byte digest, or ``REFERENCE_TAG`` and a reference; values:
        #: the scope a reference was made for ("" for a snapshot) and the state.
        self._states: OrderedDict[bytes, tuple[str, GameState]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._states)

    def resize(self, size: int) -> None:
        """Hold at most ``size`` states from now on (the setting, read at start-up)."""
        self._size = size
        self._trim()

    def peek(self, snapshot: bytes) -> GameState | None:
        """The remembered state, shared: the caller must not change it."""
        return self._peek(hashlib.sha256(snapshot).digest(), "")

    def take(self, snapshot: bytes) -> GameState | None:
        """The remembered state, no longer remembered: the caller may change it."""
        return self._take(hashlib.sha256(snapshot).digest(), "")

    def put(self, snapshot: bytes, state: GameState) -> None:
        """Remember ``state`` as the one ``snapshot`` encodes; nobody may change it after."""
        self._put(hashlib.sha256(snapshot).digest(), "", state)

    def peek_reference(self, reference: bytes, scope: str) -> GameState | None:
        """The state ``reference`` names for ``scope``, shared; None when not held."""
        return self._peek(REFERENCE_TAG + reference, scope)

    def take_reference(self, reference: bytes, scope: str) -> GameState | None:
        """The state ``reference`` names for ``scope``; the reference is retired."""
        return self._take(REFERENCE_TAG + reference, scope)

    def put_reference(self, reference: bytes, scope: str, state: GameState) -> None:
        """Remember ``state`` under ``reference`` for ``scope``; nobody may change it after."""
        self._put(REFERENCE_TAG + reference, scope, state)

    def _peek(self, key: bytes, scope: str) -> GameState | None:
        entry = self._states.get(key)
        if entry is None or entry[0] != scope:
            return None
        self._states.move_to_end(key)
        return entry[1]

    def _take(self, key: bytes, scope: str) -> GameState | None:
        entry = self._states.get(key)
        if entry is None or entry[0] != scope:
            return None  # another scope's state stays where it is, unused
        del self._states[key]
        return entry[1]

    def _put(self, key: bytes, scope: str, state: GameState) -> None:
        """A finished game is not remembered: no move follows it, and its last state would stay
        until the memo was full of finished games, all walked by every full collection."""
        if state.is_over():
            return
        self._states[key] = (scope, state)
        self._states.move_to_end(key)
        self._trim()

    def _trim(self) -> None:
        while len(self._states) > self._size:
            self._states.popitem(last=False)
            self.evicted += 1


#: Set apart from snapshot digests (32 bytes), so a reference never names a snapshot's entry.
REFERENCE_TAG = b"ref:"
#: A reference's length: random bytes no caller can guess.
REFERENCE_BYTES = 16
#: Longest scope accepted (a table id is 36 characters).
MAX_SCOPE_CHARS = 128
MEMO = StateMemo()


def decode_state(message: rules_pb2.GameState, *, to_change: bool = False) -> GameState:
    """The engine state inside ``message``; malformed or inconsistent data raises InvalidInput,
    a reference this replica does not hold StateNotFoundError.

    A state decoded ``to_change`` is the caller's own (a reference it came by is retired); any
    other is shared with the memo and must only be read.
    """
    if len(message.snapshot) > MAX_SNAPSHOT_BYTES:
        raise InvalidInput(f"state snapshot is larger than {MAX_SNAPSHOT_BYTES} bytes")
    if len(message.scope) > MAX_SCOPE_CHARS:
        raise InvalidInput(f"a state's scope is at most {MAX_SCOPE_CHARS} characters")
    if message.snapshot_version != SNAPSHOT_VERSION:
        raise InvalidInput(
            f"state snapshot version {message.snapshot_version} is not supported "
            f"(this service reads version {SNAPSHOT_VERSION})"
        )
    check_encoding(message.encoding)
    spec = game_spec(message.game)
    if message.reference:
        return _referenced_state(message, spec, to_change=to_change)
    remembered = MEMO.take(message.snapshot) if to_change else MEMO.peek(message.snapshot)
    if remembered is not None and remembered.spec is spec:
        return remembered
    data = load_snapshot(message.snapshot, message.encoding)
    state = spec.state_type.from_snapshot(data)
    if not to_change:
        MEMO.put(message.snapshot, state)
    return state


def _referenced_state(
    message: rules_pb2.GameState, spec: GameSpec, *, to_change: bool
) -> GameState:
    if message.snapshot:
        raise InvalidInput("a state is given by its snapshot or by a reference, not both")
    if len(message.reference) != REFERENCE_BYTES:
        raise InvalidInput(f"a state reference is {REFERENCE_BYTES} bytes")
    reference, scope = message.reference, message.scope
    if to_change:
        state = MEMO.take_reference(reference, scope)
    else:
        state = MEMO.peek_reference(reference, scope)
    if state is not None and state.spec is spec:
        return state
    if state is not None:  # the right reference for another game: keep it for its own caller
        MEMO.put_reference(reference, scope, state)
    MEMO.references_not_found += 1
    raise StateNotFoundError(
        "this rules replica holds no such state (made by another replica, retired by a later "
        "move or a restart, or made for another scope): send the snapshot or rebuild it"
    )


def encode_state(
    state: GameState, *, by_reference: bool = False, scope: str = "", encoding: int = JSON
) -> rules_pb2.GameState:
    """``state`` as a message, remembered: the caller must not change ``state`` afterwards.

    ``by_reference`` gives a new reference in place of the snapshot (written in ``encoding``
    otherwise), except for a finished game: no move follows it, so it is not kept here, and its
    snapshot answers the views still asked of it.
    """
    check_encoding(encoding)
    if by_reference and not state.is_over():
        reference = secrets.token_bytes(REFERENCE_BYTES)
        MEMO.put_reference(reference, scope, state)
        return rules_pb2.GameState(
            game=state.spec.name,
            snapshot_version=SNAPSHOT_VERSION,
            reference=reference,
            scope=scope,
            encoding=encoding,  # type: ignore[arg-type]
        )
    snapshot = dump_snapshot(state.to_snapshot(), encoding)
    MEMO.put(snapshot, state)
    return rules_pb2.GameState(
        game=state.spec.name,
        snapshot_version=SNAPSHOT_VERSION,
        snapshot=snapshot,
        scope=scope,
        encoding=encoding,  # type: ignore[arg-type]
    )


def keep_unchanged(message: rules_pb2.GameState, state: GameState) -> None:
    """Remember again a state taken ``to_change`` that was left as it was (a refused action):
    its caller will send the same snapshot or reference with its next try."""
    if message.reference:
        MEMO.put_reference(message.reference, message.scope, state)
    else:
        MEMO.put(message.snapshot, state)


def encode_status(state: GameState) -> common_pb2.GameStatus:
    """The game-agnostic part of a state that the table service relies on."""
    return common_pb2.GameStatus(
        current_phase=STATUS_PHASES[state.phase],
        phase=state.phase,
        to_act=list(state.to_act()),
        needs_deal=state.needs_deal() and not state.is_over(),
        over=state.is_over(),
        deal_number=state.deal_number,
        dealer=state.dealer,
        totals=list(state.totals),
        places=list(state.places() or ()),
        progress=state.progress(),
    )


def encode_facts(facts: Sequence[Fact]) -> list[rules_pb2.Fact]:
    """Facts as messages, each with its audience and its fields as a Struct."""
    encoded = []
    for fact in facts:
        message = rules_pb2.Fact()
        _fill_fact(message, fact)
        encoded.append(message)
    return encoded


def add_facts(target: Any, facts: Sequence[Fact]) -> None:
    """Facts added to a reply's repeated ``facts`` field, each built where it stays."""
    for fact in facts:
        _fill_fact(target.add(), fact)


def _fill_fact(message: rules_pb2.Fact, fact: Fact) -> None:
    fields = fact_to_dict(fact)
    message.kind = fields.pop("kind")
    fields.pop("audience")
    message.audience.CopyFrom(encode_audience(fact.audience))
    fill_struct(message.fields, fields)


def to_struct(data: dict[str, Any]) -> struct_pb2.Struct:
    """A JSON-ready dict as a Struct (numbers become doubles, as Struct defines them)."""
    struct = struct_pb2.Struct()
    fill_struct(struct, data)
    return struct


def fill_struct(target: struct_pb2.Struct, data: dict[str, Any]) -> None:
    """``data`` written into an empty Struct, usually a field of a reply: encoded by hand and
    parsed in place, much cheaper than ``Struct.update`` and with no copy afterwards
    (``cardtable.platform.protobuf_wire``)."""
    target.MergeFromString(struct_bytes(data))


def fill_view(target: Any, observation: dict[str, Any], *, typed: bool) -> None:
    """``observation`` written into ``target`` (a GetViewResponse or a SeatView of the rules
    contract): typed as ``seat_view``, or as the ``view`` Struct for a caller older than the
    typed view (GetViewRequest.typed_view says why that caller is still served)."""
    if typed:
        target.seat_view.CopyFrom(encode_view(observation))
    else:
        fill_struct(target.view, observation)


def decode_action_text(text: str) -> str:
    """The action text, once its size is known to be sane."""
    if len(text) > MAX_ACTION_CHARS:
        raise InvalidInput(f"an action is at most {MAX_ACTION_CHARS} characters")
    return text


def decode_deck_order(cards: Sequence[str]) -> list[int]:
    """A deck order from card strings; the engine then checks it is the game's deck."""
    if len(cards) > 52:
        raise InvalidInput("a deck order holds at most 52 cards")
    return [parse_card(text) for text in cards]


def deck_texts(state: GameState) -> list[str]:
    """The game's deck as card strings, sorted."""
    return card_texts(state.deck())
