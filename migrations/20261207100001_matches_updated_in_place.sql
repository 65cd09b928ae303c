-- Every update of a match is a HOT (heap-only tuple) update: its new version goes on the same page and
-- no index gets an entry for it. A match is updated four to six times (a claim, renewals, a give-back,
-- its result), and each update that was not HOT wrote an entry into every index of the table: about 30
-- buffers a claim and 1.7 GB of WAL from the results at 1,000 players (docs/benchmarks.md). An update is
-- HOT only when no index names a column it changes and the page has room for the new version
-- (docs/adr/0091-matches-updated-in-place.md).

-- The indexes on what a claim, a renewal, a give-back or a result changes (`status`, `referee_id`,
-- `lease_expires_at`) go. Running matches are found instead through the current round of each running
-- or paused league (`current_round_matches` below, read through matches_by_round): a match runs only
-- in its league's current round, as a round is released once the one before it is final.
drop index matches_leased;
drop index matches_running_by_referee;

-- A player's matches, by seat and opponent, whatever their status: partial on `status = 'finished'`,
-- a result moved its row into them (two index entries and no HOT). The queries keep their own status
-- filter; the indexes' entries are written once, by the schedule's insert.
drop index matches_player_a;
drop index matches_player_b;
create index matches_player_a on matches (player_a_id, player_b_id);
create index matches_player_b on matches (player_b_id, player_a_id);

-- Room on each page for a match's later versions: a match is written by the schedule at about 150
-- bytes and grows to about a kilobyte with its result, and a page's dead versions are pruned when it
-- fills. A tenth of each page is filled by the schedule; matches are few rows and many updates.
-- (Applies to pages written from now on; a table's existing rows stay where they are.) A row over
-- 1 kB is compressed or its long values moved out (TOAST) down to 1 kB, not 2 kB, so that a result
-- fits on the page beside its row's earlier versions.
alter table matches set (fillfactor = 10, toast_tuple_target = 1024);

-- The matches of each running or paused league's current round: every running match is among them.
-- Read through matches_by_round, a lookup per league, where the dropped partial indexes were read.
create view current_round_matches as
    select m.*
    from leagues l
    join matches m on m.league_id = l.league_id and m.round_id = l.current_round
    where l.status in ('running', 'paused');
