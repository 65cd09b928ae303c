-- What the operator can do to a league once it runs (docs/adr/0044-operator-actions.md):
--
-- * pause it (`paused`: no match is handed out, the running ones finish) and resume it (`running`
--   again); `paused_at` says since when;
-- * cancel it (`cancelled`, at `cancelled_at`): its unfinished matches are `cancelled`, with no result
--   and no lease, and nobody is charged;
-- * withdraw a player (`league_players.withdrawn_at`): its unfinished matches are finished as forfeits
--   it loses (a technical loss, or a double forfeit against a player who withdrew too), with no
--   referee; the player stays in the table with its results.
alter table leagues drop constraint leagues_status_check;
alter table leagues add constraint leagues_status_check
    check (status in ('registering', 'running', 'paused', 'completed', 'cancelled'));
alter table leagues add column paused_at timestamptz, add column cancelled_at timestamptz;

alter table matches drop constraint matches_status_check;
alter table matches add constraint matches_status_check
    check (status in ('scheduled', 'running', 'finished', 'cancelled'));

alter table league_players add column withdrawn_at timestamptz;
