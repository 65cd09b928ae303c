-- The notifications delivered to a league's players, counted in a table of their own that only event
-- delivery writes (docs/subsystems/lock-order.md, docs/adr/0077-one-lock-order.md). Counted on the
-- league's row, event delivery's count and a round's release (which sets the league's current round)
-- locked the same `leagues` rows, a batch's leagues in one order and a batch of reports' in another:
-- Postgres found them deadlocked (issue 56). No foreign key: a key check would lock the league's row
-- again (`for key share`), which is what this table is for not doing.
create table league_notification_counts (
    league_id text primary key,
    delivered bigint not null
);

insert into league_notification_counts (league_id, delivered)
select league_id, notifications_delivered from leagues where notifications_delivered > 0;

alter table leagues drop column notifications_delivered;
