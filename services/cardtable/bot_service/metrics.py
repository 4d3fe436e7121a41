"""What the bot service reports to Prometheus, registered in the registry it is given."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

# From seeing a turn to the table service's answer: milliseconds when the service keeps up;
# anything near the turn timer (seconds) means seats are about to time out.
MOVE_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
# A seat's wait for room at a full replica: up to the table service's fallback deadline (10 s
# by default) it only delays the computer player; beyond it the table service has moved.
WAIT_BUCKETS = (0.1, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0)


class BotMetrics:
    """Seats held and waiting, moves made, errors by kind, and the turn timeouts of our seats."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.seats_held = Gauge(
            "bot_seats_held", "Seats this replica plays now.", registry=registry
        )
        self.max_seats = Gauge(
            "bot_max_seats", "Seats this replica plays at most (BOT_MAX_SEATS).", registry=registry
        )
        self.seats_waiting = Gauge(
            "bot_seats_waiting",
            "Seats offered to this replica while it was full, waiting for one of its own to free "
            "up (the same seat may wait at several replicas).",
            registry=registry,
        )
        self.seat_wait_seconds = Histogram(
            "bot_seat_wait_seconds",
            "How long a seat waited for room, by how it left the queue (taken, held_elsewhere, "
            "gone, dropped).",
            ["outcome"],
            buckets=WAIT_BUCKETS,
            registry=registry,
        )
        self.tables = Gauge(
            "bot_tables_playing", "Tables where this replica plays a seat.", registry=registry
        )
        self.requests = Counter(
            "bot_seat_requests_total",
            "Seat requests received from the table service, by reason.",
            ["reason"],
            registry=registry,
        )
        self.claims = Counter(
            "bot_seat_claims_total",
            "Attempts to claim a seat, by outcome (taken, held_elsewhere, error; full: no room, "
            "the seat waits for one).",
            ["outcome"],
            registry=registry,
        )
        self.releases = Counter(
            "bot_seat_releases_total",
            "Seats let go, by reason (finished, reclaimed, claim_lost, shutdown, ...).",
            ["reason"],
            registry=registry,
        )
        self.moves = Counter(
            "bot_moves_total",
            "Moves the table service accepted, by the strategy or level the table asked for.",
            ["strategy"],
            registry=registry,
        )
        self.move_seconds = Histogram(
            "bot_move_seconds",
            "From reading the seat's turn to the table service accepting the move.",
            buckets=MOVE_BUCKETS,
            registry=registry,
        )
        self.errors = Counter(
            "bot_errors_total",
            "Failures, by kind (a gRPC status code name, strategy, claims, watch).",
            ["kind"],
            registry=registry,
        )
        self.turn_timeouts = Counter(
            "bot_turn_timeouts_total",
            "Turn timers that ran out on a seat this replica plays (the table moved for it).",
            registry=registry,
        )
