"""What a 3-5-8 declarer's contracts still to play are worth together: its contract budget.

Each declarer plays each of the six contracts once, so a contract chosen now is one fewer to
choose from later. :data:`cardtable.bots.outlook.CONTRACT_VALUE` values the contracts left one
by one, at what each scores forced on a random hand; but a declarer with several left picks the
one its hand suits, so a set is worth more than its parts, and a contract that suits few hands
(no-trump) costs more to keep than its forced value says. This values every set of contracts
left as a whole: the declarer's mean score over that many deals, each contract chosen by the
rule-based player among those still left
(:func:`cardtable.bots.rules.three_five_eight.choose_contract`), every card played by the
rule-based player. The four trump suits are alike before the deal, so a set is known by how
many trump contracts it holds and whether it holds NT and MT.

The values are data (``contract_sets_358.json``), refitted by
``python -m cardtable_tools.bench.fit_contract_sets``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import resources

from cardtable.engine.games.three_five_eight.rules import MINIMUM_TRICKS, NO_TRUMP

#: The values' file, beside this module.
SETS_FILE = "contract_sets_358.json"


def set_key(contracts: Iterable[str]) -> str:
    """The file's key for a set of contracts: its trump contracts counted, then NT and MT.

    >>> set_key(["S", "MT", "C"]), set_key(["S", "H", "D", "C", "NT", "MT"]), set_key([])
    ('T2 MT', 'T4 NT MT', 'T0')
    """
    held = set(contracts)
    trumps = sum(1 for contract in held if contract not in (NO_TRUMP, MINIMUM_TRICKS))
    return " ".join([f"T{trumps}"] + [kind for kind in (NO_TRUMP, MINIMUM_TRICKS) if kind in held])


@cache
def contract_set_values() -> Mapping[str, float]:
    """The value of every set of contracts left, by :func:`set_key`, read once."""
    text = resources.files(__package__).joinpath(SETS_FILE).read_text()
    values: dict[str, float] = json.loads(text)["values"]
    return values


def contracts_left_worth(contracts_left: Iterable[str]) -> float:
    """The declarer's mean score over the deals its ``contracts_left`` will be played in."""
    return contract_set_values()[set_key(contracts_left)]
