"""A client's random legal move comes from its view only, whichever form the view is in."""

from __future__ import annotations

import random

from google.protobuf import struct_pb2

from cardtable.client.views import random_legal_action


def struct(values: dict[str, object]) -> struct_pb2.Struct:
    view = struct_pb2.Struct()
    view.update(values)
    return view


def test_a_listed_action_is_chosen_from_a_struct_or_a_dict() -> None:
    values = {"legal_actions": ["play QS", "play 2C"], "choose_cards": None}
    for view in (struct(values), values):
        chosen = {random_legal_action(view, random.Random(seed)) for seed in range(40)}
        assert chosen == {"play QS", "play 2C"}


def test_choose_cards_gives_the_verb_and_that_many_distinct_cards() -> None:
    values = {"choose_cards": {"verb": "pass", "cards": ["2C", "3D", "4H", "5S"], "count": 3}}
    for view in (struct(values), values):
        action = random_legal_action(view, random.Random(1))
        assert action is not None
        verb, *cards = action.split()
        assert verb == "pass" and len(set(cards)) == 3 and set(cards) <= {"2C", "3D", "4H", "5S"}


def test_a_seat_with_nothing_to_do_gets_none() -> None:
    for values in ({"legal_actions": []}, {}, {"legal_actions": [], "choose_cards": None}):
        assert random_legal_action(struct(values), random.Random(1)) is None
        assert random_legal_action(values, random.Random(1)) is None
