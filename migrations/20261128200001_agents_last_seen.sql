-- When the manager last heard from each agent: its registration (or resume), and for a referee every
-- call it makes (stamped at most every 15 s). LEAGUE_MAX_REFEREES counts live referees only — holding a
-- running match, or heard from within the last 2 minutes — so referees that are gone (recreated
-- containers, scaled-down replicas) do not keep new ones out (ADR 0040). Agents registered before this
-- migration are taken as heard from now.
alter table agents add column last_seen_at timestamptz not null default now();
