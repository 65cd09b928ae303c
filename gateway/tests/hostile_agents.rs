//! The hostile-agent test (issue 53) in a test binary of its own: it measures the process's open
//! descriptors and heap, which no other test may share with it while it runs (the integration binary
//! runs its tests side by side in one process).

#[allow(dead_code, unused_imports)]
#[path = "integration/support/mod.rs"]
mod support;

#[allow(dead_code)]
#[path = "integration/mcp_player.rs"]
mod mcp_player;

#[path = "integration/hostile_mcp_agents.rs"]
mod hostile_mcp_agents;

/// Every allocation counted, so that the test reads the heap the process holds
/// (`hostile_mcp_agents::Held`).
#[global_allocator]
static ALLOCATOR: &stats_alloc::StatsAlloc<std::alloc::System> = &stats_alloc::INSTRUMENTED_SYSTEM;
