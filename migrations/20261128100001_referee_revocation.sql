-- A referee the operator revoked (`league revoke-referee`): its token no longer authenticates, so its
-- reports, claims, renewals and registrations are refused. The row stays: its matches and results
-- name it.
alter table agents add column revoked_at timestamptz;
