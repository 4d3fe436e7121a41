"""Whether a new table's game is rated: its settings lie within the deployment's rated bounds.

A rated game moves its players' ratings and leaderboard places; an unrated one is played,
recorded and scored all the same, and moves nothing. The bounds keep a table's creator from
choosing settings that decide a rated game by something other than play:

* the turn timer is on: without one, a player who is losing can stall the game for ever, and
  it never ends to be rated;
* the timer is at least ``rated_min_turn_timer_ms`` (``RATED_MIN_TURN_TIMER_MS``). A turn the
  timer takes is a random legal move, and three in a row hand the seat to a computer player,
  so a timer shorter than a person needs turns people's seats into computer players' within
  seconds, and a creator could have a whole table of people played out that way;
* the table's computer players do not move at random (``UNRATED_BOT_STRATEGIES``): a creator
  could otherwise fill a rated table with them and collect a winner's rating change every game
  (the Whist and 3-5-8 place formula pays first place the same whoever came last). The setting
  counts even on a table that is not filled: it also plays the seats of people who leave;
* every game option is the game's standard one: absent, or set to the default the rules service
  lists for it (``ListGames``). A variant (a one-deal quick game) is a different game from the
  one the ratings measure. Values are compared as text, since this service does not read
  them: another spelling of the default (``1`` for ``true``) counts as a change.

The decision is taken once, when the table is created (a rematch takes its own), and recorded
in ``TableCreated.rated``: bounds a deployment changes later never change a game's past.
"""

from __future__ import annotations

from collections.abc import Mapping

from cardtable_api.events.v1 import events_pb2
from cardtable_api.rules.v1 import rules_pb2

#: The shortest turn timer of a rated game: half the tables' default of 30 s, and still time
#: for a person to read the trick and play on a phone over a slow connection. Shorter timers
#: (down to ``MIN_TURN_TIMER_MS``) are allowed, for unrated games.
RATED_MIN_TURN_TIMER_MS = 15_000


def has_rated_timer(settings: events_pb2.TableSettings, min_turn_timer_ms: int) -> bool:
    """The turn timer is on and long enough for a person."""
    return settings.turn_timer_ms > 0 and settings.turn_timer_ms >= min_turn_timer_ms


#: Computer players whose moves are random: a game won against them measures nothing.
UNRATED_BOT_STRATEGIES = frozenset({"random"})


def has_rated_computers(settings: events_pb2.TableSettings) -> bool:
    """The computer players of the table play to win.

    >>> has_rated_computers(events_pb2.TableSettings(bot_strategy="easy"))
    True
    >>> has_rated_computers(events_pb2.TableSettings(bot_strategy="random"))
    False
    """
    return settings.bot_strategy not in UNRATED_BOT_STRATEGIES


def has_standard_options(options: Mapping[str, str], game: rules_pb2.GameInfo) -> bool:
    """Every option is absent or the default the rules service lists for the game.

    >>> info = rules_pb2.GameInfo(
    ...     name="hearts", options=[rules_pb2.OptionInfo(name="quick", default_value="false")]
    ... )
    >>> has_standard_options({}, info), has_standard_options({"quick": "false"}, info)
    (True, True)
    >>> has_standard_options({"quick": "true"}, info)
    False
    """
    defaults = {option.name: option.default_value for option in game.options}
    return all(name in defaults and value == defaults[name] for name, value in options.items())


def is_rated(
    settings: events_pb2.TableSettings,
    options: Mapping[str, str],
    game: rules_pb2.GameInfo,
    min_turn_timer_ms: int = RATED_MIN_TURN_TIMER_MS,
) -> bool:
    """Whether a table with these settings and options is rated (module docstring)."""
    return (
        has_rated_timer(settings, min_turn_timer_ms)
        and has_rated_computers(settings)
        and has_standard_options(options, game)
    )
