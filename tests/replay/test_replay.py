"""Replaying recorded games: every viewpoint renders, and a seat sees only what it saw."""

from __future__ import annotations

import functools
import io
import re
from collections.abc import Iterable
from typing import Any

import pytest
from rich.console import Console

from cardtable.engine.cards import parse_card
from cardtable.engine.errors import InvalidInput
from cardtable.engine.facts import fact_to_dict
from cardtable.engine.record import load_record
from cardtable.replay.audit import audit_record
from cardtable.replay.render import GameRenderer, cards_text, clean_name
from cardtable.replay.session import ReplayError, ReplayStep, Viewpoint, replay_steps
from cardtable.replay.show import show_replay
from tests.replay.conftest import game_record, to_version_0

CARD_SHOWN = re.compile(r"(10|[2-9JQKA])([♠♥♦♣])")
SUIT_LETTER = {"♠": "S", "♥": "H", "♦": "D", "♣": "C"}


def console() -> Console:
    return Console(file=io.StringIO(), record=True, width=120, color_system=None)


def shown_cards(text: str) -> set[str]:
    """Every card written in ``text`` (``10♥`` -> ``10H``)."""
    return {rank + SUIT_LETTER[suit] for rank, suit in CARD_SHOWN.findall(text)}


def cards_in(value: Any) -> set[str]:
    """Every card named anywhere in an observation or a fact (values only, not keys)."""
    found: set[str] = set()
    if isinstance(value, str):
        for word in value.split():
            try:
                parse_card(word)
            except InvalidInput:
                continue
            found.add(word.upper())
    elif isinstance(value, dict):
        for item in value.values():
            found |= cards_in(item)
    elif isinstance(value, list | tuple):
        for item in value:
            found |= cards_in(item)
    return found


def known_after(step: ReplayStep) -> set[str]:
    """The cards the viewpoint may know after the step: its observations and visible facts."""
    known = cards_in(dict(step.observations))  # keys are seats, values observations
    for fact in step.facts:
        known |= cards_in(fact_to_dict(fact))
    return known


def render_by_deal(record: dict[str, Any], viewpoint: Viewpoint) -> dict[int, str]:
    """The replay's text, deal by deal, checking each step against what was known by then."""
    loaded = load_record(record)
    renderer = GameRenderer(loaded, viewpoint)
    out = console()
    for renderable in renderer.intro():
        out.print(renderable)
    texts: dict[int, str] = {0: out.export_text(clear=True)}  # the intro names no card
    known: set[str] = set()
    current = -1
    for step in replay_steps(loaded, viewpoint):
        if step.deal_index != current:
            current, known = step.deal_index, set()
        known |= known_after(step)
        for renderable in renderer.render(step):
            out.print(renderable)
        text = out.export_text(clear=True)
        leaked = shown_cards(text) - known
        assert not leaked, (
            f"{viewpoint.describe()}, deal {step.deal_number}, action {step.action_index + 1}: "
            f"shows {sorted(leaked)} before they were shown to it:\n{text}"
        )
        texts[current] = texts.get(current, "") + text
    for renderable in renderer.close():
        out.print(renderable)
    texts[current] += out.export_text(clear=True)
    return texts


@functools.cache
def rendered(name: str, viewpoint: Viewpoint) -> dict[int, str]:
    """:func:`render_by_deal` of a test record, once per run (it checks every step as it goes)."""
    return render_by_deal(game_record(name), viewpoint)


def viewpoints(players: int) -> Iterable[Viewpoint]:
    yield from (Viewpoint(seat=seat) for seat in range(players))
    yield Viewpoint(open=True)
    yield Viewpoint()


# -- every game, every viewpoint ----------------------------------------------------------
def test_every_viewpoint_renders_the_whole_game(game_name: str) -> None:
    record = game_record(game_name)
    players = record["players"]
    for viewpoint in viewpoints(players):
        texts = rendered(game_name, viewpoint)
        assert len(texts) == len(record["deals"])
        whole = "".join(texts.values())
        assert "Game over" in whole
        for deal in record["deals"]:
            assert f"Deal {deal['number']}" in whole
            for trick in deal["tricks"]:
                cards = [card_text_plain(card) for card in trick["cards"]]
                row = next(
                    (line for line in whole.splitlines() if all(c in line for c in cards)), None
                )
                assert row is not None, f"trick {trick} is not shown"
        totals = record["result"]["totals"]
        assert all(str(total) in texts[len(texts) - 1] for total in totals)


def card_text_plain(card: str) -> str:
    return card[:-1] + {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}[card[-1]]


def test_a_seat_never_sees_another_seats_hand(game_name: str) -> None:
    record = game_record(game_name)
    for seat in range(record["players"]):
        whole = "".join(rendered(game_name, Viewpoint(seat=seat)).values())
        others = [other for other in range(record["players"]) if other != seat]
        for other in others:
            assert f"seat {other} is dealt" not in whole
            assert f"seat {other} then gets" not in whole
            assert f"hand of seat {other}" not in whole
        assert "you are dealt" in whole


def test_the_open_table_shows_every_hand(game_name: str) -> None:
    record = game_record(game_name)
    whole = "".join(rendered(game_name, Viewpoint(open=True)).values())
    for seat in range(record["players"]):
        assert f"seat {seat} is dealt" in whole
    assert "you" not in whole.split()


def test_a_spectator_sees_no_hand(game_name: str) -> None:
    whole = "".join(rendered(game_name, Viewpoint()).values())
    assert "is dealt" not in whole
    assert "hand" not in whole


# -- cards that are never shown -----------------------------------------------------------
def test_whist_stock_cards_are_never_shown_even_with_open_hands() -> None:
    record = game_record("whist")
    players = record["players"]
    texts = rendered("whist", Viewpoint(open=True))
    sizes = [1] * players + list(range(2, 8)) + [8] * players + list(range(7, 1, -1))
    sizes += [1] * players
    for index, deal in enumerate(record["deals"]):
        stock = deal["deck"][sizes[index] * players + 1 :]  # after the turned-up card
        assert not shown_cards(texts[index]) & set(stock)


def test_358_discards_are_seen_only_by_the_declarer() -> None:
    record = game_record("358")
    by_seat = {seat: rendered("358", Viewpoint(seat=seat)) for seat in range(3)}
    for index, deal in enumerate(record["deals"]):
        discard = next(a for a in deal["actions"] if a["action"].startswith("discard"))
        declarer, cards = discard["seat"], set(discard["action"].split()[1:])
        assert cards <= shown_cards(by_seat[declarer][index])
        for seat in set(range(3)) - {declarer}:
            text = by_seat[seat][index]
            # The seat knows a card it held itself, or was given in an exchange and returned.
            own = shown_cards(
                "".join(
                    line
                    for line in text.splitlines()
                    if "you are dealt" in line or "you then get" in line or " to you" in line
                )
            )
            assert not (cards - own) & shown_cards(text)
            assert "takes the talon and puts four cards away face down" in by_seat[seat][index]


def test_hearts_received_cards_appear_only_once_the_passes_are_made() -> None:
    texts = rendered("hearts", Viewpoint(seat=0))
    first = texts[0]
    received_line = next(line for line in first.splitlines() if "you receive" in line)
    received = shown_cards(received_line)
    before = first.split(received_line)[0]
    dealt_line = next(line for line in before.splitlines() if "you are dealt" in line)
    assert not received & shown_cards(dealt_line)
    assert "you pass left" in before


# -- game specifics -----------------------------------------------------------------------
def test_belote_thrown_in_deal_bids_and_contract() -> None:
    whole = "".join(rendered("belote", Viewpoint(seat=1)).values())
    assert "bidding, round 1:" in whole and "bidding, round 2:" in whole
    assert "everybody passed twice: the cards are thrown in" in whole
    assert "the takers (" in whole
    assert "picks up" in whole or "you pick up" in whole
    assert "teams: seat 0 & seat 2 against you & seat 3" in whole


def test_whist_shows_bids_trump_and_scores() -> None:
    whole = "".join(rendered("whist", Viewpoint(seat=0)).values())
    assert "bids: " in whole
    assert "turned up " in whole and "trump " in whole
    assert "no trump" in whole  # the deals of 8 cards
    assert re.search(r"^\s+bid\s", whole, re.MULTILINE)
    assert re.search(r"^\s+total\s", whole, re.MULTILINE)


def test_358_shows_contract_exchanges_and_talon() -> None:
    whole = "".join(rendered("358", Viewpoint(open=True)).values())
    assert "chooses" in whole and "contracts left" in whole
    assert "exchange: seat" in whole
    assert "the talon: " in whole and "away face down: " in whole
    assert re.search(r"^\s+(target|limit)\s", whole, re.MULTILINE)


def test_hearts_shows_every_passing_direction() -> None:
    whole = "".join(rendered("hearts", Viewpoint(seat=2)).values())
    for words in ("pass left", "pass right", "pass across", "no passing"):
        assert words in whole


# -- stepping -----------------------------------------------------------------------------
def stepped(record: dict[str, Any], answers: list[str], **options: Any) -> tuple[str, list[str]]:
    prompts: list[str] = []
    replies = iter(answers)

    def pause(prompt: str) -> str:
        prompts.append(prompt)
        return next(replies, "")

    out = console()
    show_replay(load_record(record), Viewpoint(seat=0), out, pause=pause, **options)
    return out.export_text(), prompts


def test_step_pauses_after_each_trick_and_quits() -> None:
    record = game_record("hearts")
    text, prompts = stepped(record, ["", "n", "q"])
    assert len(prompts) == 3
    assert "next trick" in prompts[0]
    assert re.search(r"^\s+3 ", text, re.MULTILINE)  # the third trick is shown
    assert not re.search(r"^\s+4 ", text, re.MULTILINE)  # and nothing after it
    assert "Game over" not in text


def test_step_d_runs_to_the_end_of_the_deal() -> None:
    record = game_record("hearts")
    text, prompts = stepped(record, ["d", "q"])
    assert len(prompts) == 2
    assert "next deal" in prompts[1]
    assert re.search(r"^\s+13 ", text, re.MULTILINE)
    assert "Deal 2" not in text


def test_step_end_of_input_quits() -> None:
    def pause(prompt: str) -> str:
        raise EOFError

    out = console()
    show_replay(load_record(game_record("whist")), Viewpoint(), out, pause=pause)
    assert "Deal 2" not in out.export_text()


def test_one_deal_only() -> None:
    record = game_record("358")
    text, prompts = stepped(record, [], deal=3)
    assert "Deal 3" in text and "Deal 2 " not in text and "Deal 4" not in text
    assert len(prompts) == 15  # after each trick but the last, which ends what was asked


# -- old records, broken records, hostile records -----------------------------------------
def test_version_0_record_replays_like_the_current_one() -> None:
    record = game_record("358")
    current = rendered("358", Viewpoint(seat=1))
    old = render_by_deal(to_version_0(record), Viewpoint(seat=1))
    assert old == current


def test_replay_stops_at_an_illegal_action_and_says_where() -> None:
    record = game_record("hearts")
    actions = record["deals"][0]["actions"]
    del actions[10]
    out = console()
    with pytest.raises(ReplayError) as stopped:
        show_replay(load_record(record), Viewpoint(open=True), out)
    assert stopped.value.deal_number == 1
    assert stopped.value.where.startswith("action 11 (")
    assert "not your turn" in stopped.value.reason
    assert "Deal 1" in out.export_text()


def test_player_names_are_cleaned_of_control_characters() -> None:
    assert clean_name("\x1b[2Jmallory\x07") == "[2Jmallory"
    assert clean_name(42) is None
    assert clean_name("a" * 50) == "a" * 16


def test_cards_are_grouped_by_suit_high_to_low() -> None:
    out = console()
    out.print(cards_text(["2C", "AS", "10H", "KS", "3D"]))
    assert out.export_text().strip() == "A♠ K♠  10♥  2♣  3♦"


def test_a_record_that_ends_in_the_middle_of_a_trick() -> None:
    record = game_record("whist")
    record["deals"] = record["deals"][:5]
    last = record["deals"][-1]
    last["actions"], last["tricks"], last["scores"] = last["actions"][:6], [], None  # 2 cards
    record["result"] = {"over": False}
    assert audit_record(record).ok  # consistent as far as it goes
    out = console()
    show_replay(load_record(record), Viewpoint(seat=0), out)
    text = out.export_text()
    assert "the record ends here, in the middle of a trick" in text
    assert "Game over" not in text
    with pytest.raises(ValueError, match="only for a finished game"):
        show_replay(load_record(record), Viewpoint(open=True), console())
