//! The whole-system tests, one binary (one link instead of one per file): each module runs a league,
//! or a command of the `league` binary, through the real binary and real services on ports 0 with a
//! fresh database of its own, so the modules' tests run side by side like any others. Run one with
//! `cargo test -p league-launcher --test system <module>::<test>` (the bench's own: services/bench/tests).
//!
//! The reliability scenarios are a binary of their own (tests/reliability): they kill and restart
//! services and race real processes, so they run one at a time with nothing else on the machine —
//! which a binary of their own gives them, as cargo runs test binaries one after another.

mod browser;

mod end_to_end;
mod external_agents;
mod external_referee_archive;
mod league;
mod live_page;
mod llm_run;
mod local_run;
mod mcp_agents;
mod migrate;
mod observability;
mod operator_cli;
mod operator_details;
mod operator_week;
mod own_ports;
mod probe;
mod report;
mod results_archive;
mod revoked_referees;
mod strict_agents;
mod strict_referees;
