-- A match's row no longer checks its players, its referee and its round against their tables. Each check
-- was a query of its own, run by a trigger for every row: three for each match a league's start
-- schedules (its two players and its round) and one for each claim (its referee), 2 million at 1,000
-- players, an eighth of the buffers Postgres read (pg_stat_statements, docs/benchmarks.md). The
-- manager writes these columns only from rows it has just read: the schedule from the league's
-- enrolled players and its rounds, a claim from the referee who authenticated; nothing deletes agents
-- or rounds. The checks also locked each player's and referee's `agents` row and the round's row
-- (`for key share`) from inside the writes of matches (docs/subsystems/lock-order.md).
-- (docs/adr/0085-a-match-writes-less.md.)
alter table matches
    drop constraint matches_player_a_id_fkey,
    drop constraint matches_player_b_id_fkey,
    drop constraint matches_referee_id_fkey,
    drop constraint matches_league_id_round_id_fkey;
