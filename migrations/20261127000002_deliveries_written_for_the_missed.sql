-- A league event reaches every player of its league, and event delivery sends a new event to every
-- player at once (20261126000003_league_events_fanned_out.sql). It then wrote a delivery row per event
-- and player, delivered or waiting: at 200 players 600 rows a round, 119,400 a league, nearly all of
-- them saying "delivered at the first attempt". Now a fan-out writes rows only for the players the event
-- did not reach (waiting), and marks the event fanned out with the time it did so: a player of a
-- fanned-out event without a row got it then, at the first attempt. An event fanned out before this
-- migration has a row for every player, which says the same thing. (docs/adr/0037.)
alter table league_events add column fanned_out_at timestamptz;

-- Every delivery of every event, one row per event and player of its league, whether or not it has a
-- row of its own: what "each player got each event once, in order" is checked against. An event not
-- fanned out yet is pending for every player (no attempt yet).
create view every_event_delivery as
select e.event_id, e.league_id, p.player_id,
       case when d.player_id is not null then d.delivered_at
            when e.fanned_out then e.fanned_out_at end as delivered_at,
       case when d.player_id is not null then d.attempts
            when e.fanned_out then 1 else 0 end as attempts,
       d.next_attempt_at, d.gave_up_at, d.last_error
from league_events e
join league_players p using (league_id)
left join event_deliveries d on d.event_id = e.event_id and d.player_id = p.player_id;
