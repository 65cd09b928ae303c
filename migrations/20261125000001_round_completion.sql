-- When each step of a round boundary happened, by the database's clock (clock_timestamp(), not the
-- transaction's start): a round's completion and the next round's release, and each match's latest
-- claim. With the transcripts' first and last entries and `finished_at` they show where the time between
-- two rounds goes (`league-bench` reports them; docs/benchmarks.md).
alter table rounds add column released_at timestamptz, add column completed_at timestamptz;
alter table matches add column claimed_at timestamptz;

-- A round is complete when none of its matches is unfinished: the check that follows every recorded
-- result (services/manager/src/league/round_completion.rs) reads a round's matches through this index,
-- as do the round's release, its summary and its announcement (without it each scanned the league's
-- matches: O(matches) per round). It replaces the counter `rounds.remaining`, whose row lock every
-- report of a round held through its commit, so that a round's reports queued one fsync after another
-- instead of committing together.
create index matches_by_round on matches (league_id, round_id);
alter table rounds drop column remaining;

-- How many matches each round has (fixed by the schedule), so that a league's totals and progress are
-- read from its rounds instead of counting its matches.
alter table rounds add column matches integer not null default 0;
update rounds r set matches = (select count(*) from matches m
                               where m.league_id = r.league_id and m.round_id = r.round_id);

-- Each player's totals in each league, updated by the transaction that records a result (the rows of
-- its two players: the matches of a round touch disjoint rows, so reports never wait on each other).
-- The league table is ranked from these totals and the results between players level on points
-- (services/manager/src/league/table.rs) instead of from every result of the league, which grow with
-- the square of its size; the tests check that it equals a recomputation from all the results.
create table standings (
    league_id text not null references leagues,
    player_id text not null references agents,
    played integer not null default 0,
    wins integer not null default 0,
    draws integer not null default 0,
    losses integer not null default 0,           -- every loss, technical ones included
    technical_losses integer not null default 0, -- technical losses and double forfeits
    points integer not null default 0,
    primary key (league_id, player_id)
);

-- The totals of the results recorded before this migration (3 points a win, 1 a draw; a technical loss
-- is a win for the opponent; a double forfeit a technical loss for both): a one-time conversion, the
-- rule's home is services/manager/src/results.rs.
insert into standings (league_id, player_id, played, wins, draws, losses, technical_losses, points)
select lp.league_id, lp.player_id,
       count(m.mark),
       count(*) filter (where m.mark = 'win'),
       count(*) filter (where m.mark = 'draw'),
       count(*) filter (where m.mark in ('loss', 'technical_loss')),
       count(*) filter (where m.mark = 'technical_loss'),
       3 * count(*) filter (where m.mark = 'win') + count(*) filter (where m.mark = 'draw')
from league_players lp
left join lateral (
    select case
               when x.result_status = 'win' and x.winner_player_id = lp.player_id then 'win'
               when x.result_status = 'win' then 'loss'
               when x.result_status = 'draw' then 'draw'
               when x.result_status = 'technical_loss' and lp.player_id = any(x.at_fault_player_ids) then 'technical_loss'
               when x.result_status = 'technical_loss' then 'win'
               else 'technical_loss'
           end as mark
    from matches x
    where x.league_id = lp.league_id and x.status = 'finished'
      and lp.player_id in (x.player_a_id, x.player_b_id)
) m on true
group by lp.league_id, lp.player_id;

-- A league's matches change state several times each while the league grows by thousands of results:
-- vacuum and refresh the planner's statistics after 2 % of the table changed (the default, 20 %, lets
-- dead index entries and stale row counts turn index lookups into scans mid-league).
alter table matches set (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
alter table standings set (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);

-- A player's finished matches, by seat, now also by opponent: the league table looks up the results
-- between each pair of players level on points, and either index answers that with one probe (the
-- planner may pick either: its statistics lag behind a league that grows by thousands of results).
drop index matches_player_a;
drop index matches_player_b;
create index matches_player_a on matches (player_a_id, player_b_id) where status = 'finished';
create index matches_player_b on matches (player_b_id, player_a_id) where status = 'finished';
