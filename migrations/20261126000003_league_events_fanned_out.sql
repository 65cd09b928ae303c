-- A round's completion queued its events and, in the same statement, a delivery row per event and
-- player: at 500 players 1,500 rows, 3.9 ms of the transaction that releases the next round
-- (pg_stat_statements), which the next round's claims wait for. Now the completion queues only the
-- events, and event delivery writes their delivery rows ("fans them out") before each batch, off that
-- path (services/manager/src/league/events.rs, `fan_out`). `fanned_out` says which events have their
-- rows; it flips in the statement that writes them, so each event is fanned out once. The events queued
-- before this migration have their rows already.
alter table league_events add column fanned_out boolean not null default true;
alter table league_events alter column fanned_out set default false;
create index league_events_to_fan_out on league_events (event_id) where not fanned_out;
