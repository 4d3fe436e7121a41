-- The scoring projection: games, seats, deals, results and ratings, folded from the event log.
-- Every timestamp comes from an event (its batch's occurred_at), never from now(), so that a
-- rebuild from the log reproduces the live projection row for row.

-- How far the log has been projected: the stream sequence of the last batch committed. It is
-- written in the same transaction as the rows, so Postgres, not the consumer, owns it.
CREATE TABLE projection_position (
    stream text PRIMARY KEY,
    stream_sequence bigint NOT NULL CHECK (stream_sequence >= 0)
);

-- Messages that could not be projected (malformed, unknown schema version), kept for an
-- operator; the log goes on without them.
CREATE TABLE dead_letters (
    stream_sequence bigint PRIMARY KEY,
    subject text NOT NULL,
    reason text NOT NULL,
    data bytea NOT NULL,
    stored_at timestamptz NOT NULL
);

-- Everyone who ever sat at a table, people and bots.
CREATE TABLE players (
    player_id text PRIMARY KEY,
    kind text NOT NULL CHECK (kind IN ('person', 'bot')),
    display_name text NOT NULL,
    first_seen_at timestamptz NOT NULL
);

-- One game per table (a rematch is a new table).
CREATE TABLE games (
    table_id text PRIMARY KEY,
    game text NOT NULL,
    seats integer NOT NULL CHECK (seats > 0),
    options jsonb NOT NULL,
    settings jsonb NOT NULL,
    created_by text NOT NULL,
    rematch_of text NOT NULL,
    rematch_table_id text NOT NULL,
    status text NOT NULL CHECK (status IN ('open', 'running', 'finished')),
    game_number integer NOT NULL,
    first_dealer integer,
    -- The deal being played or last played; 0 before the first.
    deal_number integer NOT NULL,
    ended_early boolean NOT NULL,
    end_reason text NOT NULL,
    -- The table version (batches on the subject) projected so far: a batch at or below it is
    -- a duplicate stored twice in the log and changes nothing.
    table_version bigint NOT NULL,
    created_at timestamptz NOT NULL,
    started_at timestamptz,
    finished_at timestamptz,
    -- Stream sequences of the start and the end: a total order for "recent games".
    started_sequence bigint,
    finished_sequence bigint
);

-- Who sits in each seat now (empty seats have no player).
CREATE TABLE seats (
    table_id text NOT NULL REFERENCES games,
    seat integer NOT NULL,
    player_id text,
    kind text,
    PRIMARY KEY (table_id, seat)
);

-- Who is rated for each seat: the player seated when the game started, whoever plays the seat
-- later. A bot that takes over a leaver's seat is not rated for it.
CREATE TABLE game_players (
    table_id text NOT NULL REFERENCES games,
    seat integer NOT NULL,
    player_id text NOT NULL,
    kind text NOT NULL,
    -- Share of the game completed when the player left (or lost the seat to timeouts); NULL
    -- while they are not counted as disconnected (never left, or reclaimed the seat).
    left_progress double precision,
    total bigint,
    place integer,
    rating_change double precision,
    PRIMARY KEY (table_id, seat)
);
CREATE INDEX game_players_by_player ON game_players (player_id, table_id);

CREATE TABLE deals (
    table_id text NOT NULL REFERENCES games,
    deal_number integer NOT NULL,
    dealer integer NOT NULL,
    cards_each integer NOT NULL,
    -- Trump suit letter, '' for a deal without trump, NULL before it is known.
    trump text,
    -- Who chose the contract or took the trump, when somebody did.
    declarer integer,
    -- 3-5-8's contract (S H D C NT MT).
    chosen_contract text,
    -- Hearts' passing direction (left, right, across).
    passing text,
    thrown_in boolean NOT NULL,
    -- The deal in words: "bids 1 0 2 1, trump H", "contract NT by 1", "trump S by 3".
    contract text NOT NULL,
    started_at timestamptz NOT NULL,
    scored_at timestamptz,
    PRIMARY KEY (table_id, deal_number)
);

CREATE TABLE deal_seats (
    table_id text NOT NULL,
    deal_number integer NOT NULL,
    seat integer NOT NULL,
    bid integer,
    score bigint,
    total bigint,
    PRIMARY KEY (table_id, deal_number, seat),
    FOREIGN KEY (table_id, deal_number) REFERENCES deals
);

-- Ratings per player and game (RULES.md: they start at 1500, bots included).
CREATE TABLE ratings (
    player_id text NOT NULL,
    game text NOT NULL,
    rating double precision NOT NULL,
    games integer NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (player_id, game)
);
CREATE INDEX ratings_by_rank ON ratings (game, rating DESC, player_id);

-- Every rating change, with the table that caused it.
CREATE TABLE rating_changes (
    table_id text NOT NULL REFERENCES games,
    seat integer NOT NULL,
    player_id text NOT NULL,
    game text NOT NULL,
    rating_before double precision NOT NULL,
    rating_after double precision NOT NULL,
    change double precision NOT NULL,
    -- The part of the change taken for leaving before the end.
    leaver_deduction double precision NOT NULL,
    at timestamptz NOT NULL,
    stream_sequence bigint NOT NULL,
    PRIMARY KEY (table_id, seat)
);
CREATE INDEX rating_changes_by_player ON rating_changes (player_id, game, stream_sequence DESC);
