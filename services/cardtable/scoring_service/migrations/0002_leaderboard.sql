-- Leaderboards: every rated player of a game in rating order, with a competition rank
-- (equal ratings share a rank: 1, 2, 2, 4). Ties are listed by player id so pages are stable.
CREATE VIEW leaderboard AS
SELECT
    ratings.game,
    ratings.player_id,
    coalesce(players.display_name, '') AS display_name,
    coalesce(players.kind = 'bot', false) AS bot,
    ratings.rating,
    ratings.games,
    rank() OVER (PARTITION BY ratings.game ORDER BY ratings.rating DESC) AS rank
FROM ratings
LEFT JOIN players USING (player_id);
