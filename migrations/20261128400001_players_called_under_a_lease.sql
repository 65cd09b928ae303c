-- The lease under which a match's referee has called one of its players. The gateway sets it (through
-- RenewLeases `players_called`) at an external referee's first call to a player of the match, from
-- whichever replica took the call; the replica that holds the lease gives the match back with
-- ReleaseLeases `unless_players_called` when the referee has called nobody within the join timeout, and
-- the release leaves a match whose `called_lease_id` is its current `lease_id` alone. Compared with the
-- lease rather than reset, so no claim or release has to write it. (docs/adr/0042.)
alter table matches add column called_lease_id uuid;
