"""A client's random legal move comes from its typed view only."""

from __future__ import annotations

import random

from cardtable.client.views import random_legal_action
from cardtable_api.common.v1 import views_pb2


def test_a_listed_action_is_chosen() -> None:
    view = views_pb2.SeatView(
        legal_actions=[views_pb2.LegalAction(action=text) for text in ("play QS", "play 2C")]
    )
    chosen = {random_legal_action(view, random.Random(seed)) for seed in range(40)}
    assert chosen == {"play QS", "play 2C"}


def test_choose_cards_gives_the_verb_and_that_many_distinct_cards() -> None:
    view = views_pb2.SeatView(
        choose_cards=views_pb2.CardSetChoice(verb="pass", cards=["2C", "3D", "4H", "5S"], count=3)
    )
    action = random_legal_action(view, random.Random(1))
    assert action is not None
    verb, *cards = action.split()
    assert verb == "pass" and len(set(cards)) == 3 and set(cards) <= {"2C", "3D", "4H", "5S"}


def test_the_choice_is_the_one_the_struct_view_gave() -> None:
    """The same draws from the same generator as when views were Structs: benchmark and
    fault runs replay the same games from the same seeds."""
    listed = ["play QS", "play 2C", "play 10H"]
    view = views_pb2.SeatView(legal_actions=[views_pb2.LegalAction(action=a) for a in listed])
    for seed in range(20):
        assert random_legal_action(view, random.Random(seed)) == random.Random(seed).choice(listed)
    cards = ["2C", "3D", "4H", "5S", "6S"]
    choice = views_pb2.SeatView(
        choose_cards=views_pb2.CardSetChoice(verb="pass", cards=cards, count=3)
    )
    for seed in range(20):
        expected = " ".join(["pass", *random.Random(seed).sample(cards, 3)])
        assert random_legal_action(choice, random.Random(seed)) == expected


def test_a_seat_with_nothing_to_do_gets_none() -> None:
    assert random_legal_action(views_pb2.SeatView(), random.Random(1)) is None
    assert random_legal_action(views_pb2.SeatView(hand=["2C"]), random.Random(1)) is None
