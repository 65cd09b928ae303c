//! The manager's integration tests, one binary (one link instead of one per file): each starts a real
//! manager on port 0 over a fresh database and talks to it over gRPC.

mod support;

mod claim_order;
mod enrollment;
mod event_delivery;
mod history;
mod idle_claims;
mod lock_order;
mod malformed_ids;
mod manager_api;
mod operator_actions;
mod pool;
mod postgres_tls;
mod readiness;
mod referee_admission;
mod report_batch;
mod round_completion;
mod status;
mod storage;
mod updated_in_place;
mod waiting_claims;
mod whole_league;
