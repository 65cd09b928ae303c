//! The hostile-agent test (issue 53) in a test binary of its own: it measures the process's open
//! descriptors and resident memory, which no other test may share with it while it runs (the
//! integration binary runs its tests side by side in one process).

#[allow(dead_code, unused_imports)]
#[path = "integration/support/mod.rs"]
mod support;

#[allow(dead_code)]
#[path = "integration/mcp_player.rs"]
mod mcp_player;

#[path = "integration/hostile_mcp_agents.rs"]
mod hostile_mcp_agents;
