-- A round's events are written in the transaction that releases the next round, on the path between two
-- rounds: at 500 players the standings update is about 20 KB and the round announcement about 14 KB,
-- over the 2 KB beyond which Postgres compresses a value. Inserting 600 such payloads (copied out of a
-- 500-player league) took 109-113 ms with pglz, the default, and 25-38 ms with lz4: about 0.26 ms of
-- the path a round (docs/benchmarks.md). They take 27 % more room (4.7 against 6.0 KB a payload), and
-- event delivery reads them faster. Without lz4 (a Postgres built without it) they stay with pglz.
do $$
begin
    alter table league_events alter column payload set compression lz4;
exception when feature_not_supported then
    raise notice 'this Postgres has no lz4: league events stay compressed with pglz';
end
$$;
