-- The league's state. The manager is the only service that reads or writes it; every other service
-- goes through the manager's gRPC API. Nothing here is kept in any process's memory only.

-- Every registered player and referee. Tokens are never stored: only their SHA-256 hashes.
create table agents (
    agent_id text primary key,                 -- P01…, REF01…
    kind text not null check (kind in ('player', 'referee')),
    agent_number integer not null,             -- the 1 in P01: ids sort by it
    display_name text not null,
    version text not null,
    game_types text[] not null,
    contact_endpoint text not null,
    service_endpoint text not null,
    protocol_version text not null,
    label_keys text[] not null default '{}',
    label_values text[] not null default '{}',
    max_concurrent_matches integer,
    token_hash bytea not null,
    registered_at timestamptz not null default now(),
    constraint agents_contact_endpoint_key unique (contact_endpoint),
    constraint agents_kind_number_key unique (kind, agent_number)
);

-- The last number handed out per kind: ids are assigned in order, without gaps, under this row's lock.
create table agent_counters (
    kind text primary key,
    last_number integer not null
);
insert into agent_counters (kind, last_number) values ('player', 0), ('referee', 0);

create table leagues (
    league_id text primary key,
    game_type text not null,
    status text not null check (status in ('registering', 'running', 'completed')),
    -- Match timings (MatchTiming), in milliseconds.
    join_timeout_ms bigint not null,
    move_timeout_ms bigint not null,
    game_over_timeout_ms bigint not null,
    max_attempts integer not null,
    retry_delay_ms bigint not null,
    lease_duration_ms bigint not null,
    auto_start_players integer not null default 0,
    total_rounds integer not null default 0,
    current_round integer not null default 0,
    -- Kept by the outbox dispatcher, so status queries need not count every delivery.
    notifications_delivered bigint not null default 0,
    created_at timestamptz not null default now(),
    started_at timestamptz,
    completed_at timestamptz
);

create table league_players (
    league_id text not null references leagues,
    player_id text not null references agents,
    joined_at timestamptz not null default now(),
    primary key (league_id, player_id)
);

create table rounds (
    league_id text not null references leagues,
    round_id integer not null,
    status text not null check (status in ('scheduled', 'released', 'completed')),
    -- Matches of the round not yet final. The report that takes it to 0 completes the round; the row
    -- lock this update takes is what makes exactly one report do that.
    remaining integer not null,
    bye_player_id text references agents,
    primary key (league_id, round_id)
);

create table matches (
    league_id text not null,
    match_id text not null,                    -- R<round>M<n>
    round_id integer not null,
    match_number integer not null,
    player_a_id text not null references agents,
    player_b_id text not null references agents,
    status text not null check (status in ('scheduled', 'ready', 'running', 'finished')),
    referee_id text references agents,
    lease_id uuid,
    lease_expires_at timestamptz,
    claims integer not null default 0,         -- how many times a referee took it (more than 1: a lease expired)
    -- The one result, once finished. The columns are what standings need; `result` is the whole
    -- MatchResult and `transcript` the MatchTranscript, protobuf-encoded (JSON stays in the gateway).
    result_status text check (result_status in ('win', 'draw', 'technical_loss', 'double_forfeit')),
    winner_player_id text,
    at_fault_player_ids text[],
    result bytea,
    transcript bytea,
    finished_at timestamptz,
    primary key (league_id, match_id),
    foreign key (league_id, round_id) references rounds
);

-- The queue: ready matches in play order, and running ones by lease expiry.
create index matches_ready on matches (round_id, match_number) where status = 'ready';
create index matches_leased on matches (lease_expires_at) where status = 'running';
-- A player's finished matches (records in claims, player stats).
create index matches_player_a on matches (player_a_id) where status = 'finished';
create index matches_player_b on matches (player_b_id) where status = 'finished';

-- The transactional outbox of lifecycle notifications: written in the same transaction as the change
-- they announce, delivered afterwards by the dispatcher, in order per recipient.
create table league_events (
    event_id bigserial primary key,
    league_id text not null references leagues,
    kind text not null check (kind in ('round_announcement', 'standings_update', 'round_completed', 'league_completed')),
    round_id integer not null,
    payload bytea not null,                    -- NotifyLeagueEventRequest without recipient
    created_at timestamptz not null default now()
);

create table event_deliveries (
    event_id bigint not null references league_events,
    player_id text not null references agents,
    delivered_at timestamptz,
    attempts integer not null default 0,
    next_attempt_at timestamptz not null default now(),
    gave_up_at timestamptz,
    last_error text,
    primary key (event_id, player_id)
);
create index event_deliveries_pending on event_deliveries (event_id)
    where delivered_at is null and gave_up_at is null;
create index event_deliveries_pending_by_player on event_deliveries (player_id, event_id)
    where delivered_at is null and gave_up_at is null;
