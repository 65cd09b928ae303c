-- A match's row says `scheduled` until a referee leases it, and again when its lease is given back.
-- Whether it is ready is not stored: a scheduled match of the league's current round is ready (rounds
-- are released in order, and the release makes its round the current one). A round's release used to
-- rewrite every one of its matches to `ready`, 250 rows at 500 players on the path between two rounds;
-- now it writes only the matches it leases at once (docs/adr/0028-ready-is-derived.md).

-- The status the contracts show (`ScheduledMatch.status`, metrics): a match `m` of league `l`.
create function match_status(m matches, l leagues) returns text
language sql immutable parallel safe as $$
    select case when m.status = 'scheduled' and m.round_id = l.current_round and l.status = 'running'
                then 'ready' else m.status end
$$;

update matches set status = 'scheduled' where status = 'ready';
alter table matches drop constraint matches_status_check;
alter table matches add constraint matches_status_check check (status in ('scheduled', 'running', 'finished'));
-- Claims read the current round's matches through matches_by_round.
drop index matches_ready;
