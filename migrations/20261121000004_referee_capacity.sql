-- A referee never holds more running matches than the max_concurrent_matches it registered with: the
-- claim counts its live leases. External referees are claimed for by every gateway replica, so the cap
-- has to live here, not in the claimer.
create index matches_running_by_referee on matches (referee_id) where status = 'running';
