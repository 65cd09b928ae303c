//! The gateway's integration tests, one binary (one link instead of one per file): each module starts a
//! real manager over a fresh database and real gateways on port 0, and talks to them as agents do.

mod support;
mod support_mcp;

mod bad_inputs;
mod contact_endpoints;
mod denial_of_service;
mod endpoint_clones;
mod fair_shares;
mod fixtures;
mod leagues;
mod live;
mod malformed_ids;
mod mcp;
mod mcp_agents;
mod mcp_player;
mod one_enforcement_point;
mod outbound;
mod protocol_edges;
mod referee_admission;
mod referee_calls;
mod referee_reports;
mod registration_bounds;
mod registration_replay;
mod resume;
mod silent_referee;
mod tls;
