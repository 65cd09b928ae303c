//! The league manager: league rules (scheduling, standings) and the service that owns all league state
//! in Postgres — agents and tokens, leagues, the match queue and leases, results, league events.

pub mod agents;
pub mod app;
pub mod auth;
pub mod config;
pub mod db;
pub mod error;
pub mod event_delivery;
pub mod ids;
pub mod league;
pub mod metrics;
pub mod postgres;
pub mod report_route;
pub mod results;
pub mod schedule;
pub mod service;
pub mod standings;
pub mod tokens;
pub mod wakeups;

pub use app::ManagerApp;
pub use config::ManagerConfig;
