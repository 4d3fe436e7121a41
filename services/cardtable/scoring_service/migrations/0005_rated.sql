-- Whether a table's game moves ratings, as its TableCreated recorded it. An unrated game's
-- results (totals, places, deals) are kept like any other's, but it has no rating_changes rows,
-- changes no ratings row and has NULL game_players.rating_change. Every game projected before
-- this column was rated, as its log, which predates the field, reads.
ALTER TABLE games ADD COLUMN rated boolean NOT NULL DEFAULT true;
