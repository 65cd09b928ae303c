-- What the gateway needs about the agents it fronts.

-- Authenticate by token alone (an agent that signs a reply with its own name instead of its id): the
-- hash of a 256-bit random token identifies one agent.
create unique index agents_token_hash_key on agents (token_hash);

-- Protocol deviations the gateway accepted in lenient mode (or refused in strict mode), counted per
-- agent and kind, with the latest example: what the operator shows an agent's authors.
create table compliance_warnings (
    agent_id text not null references agents,
    kind text not null,
    detail text not null,
    count bigint not null,
    first_seen timestamptz not null default now(),
    last_seen timestamptz not null default now(),
    primary key (agent_id, kind)
);
