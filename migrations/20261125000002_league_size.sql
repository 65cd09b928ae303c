-- A league's own limit on players (CreateLeague's `max_players`); null: the deployment's limit
-- (LEAGUE_MAX_PLAYERS). Players are enrolled in leagues through `league_players`, at their first
-- registration, by a resume while a league is open, or by the operator (EnrollPlayer).
alter table leagues add column max_players integer check (max_players >= 2);
