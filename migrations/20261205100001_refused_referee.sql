-- The referee whose report of the match was refused (no result: an unknown status, choices the players
-- did not make, an outcome against the rule…). The match went back to the queue uncharged; a claim by
-- that referee skips it while another live referee of the league's game is registered, so it is played
-- again by someone else (issue 52, ADR 0064).
alter table matches add column refused_referee_id text;
