-- Results and transcripts for plain SQL: each finished match also keeps its result and transcript as
-- canonical proto3 JSON (field names as in proto/league/v2, enums by name, RFC 3339 times), and two
-- views lay them out as rows, so analytics need neither our protobuf nor our code. The bytea columns
-- stay the manager's own record; these are written in the same statement. Matches finished before this
-- migration have no JSON (null): `league report` and the gRPC queries read the bytes and are unaffected.
alter table matches add column result_json jsonb, add column transcript_json jsonb;

-- One row per match: who played, how it ended, when, and the game's own account (even_odd: the choices
-- and the drawn number; tic_tac_toe: the moves) in game_metadata.
create view match_results as
select m.league_id,
       m.round_id,
       m.match_number,
       m.match_id,
       m.player_a_id,
       pa.display_name as player_a_name,
       m.player_b_id,
       pb.display_name as player_b_name,
       m.status,
       m.result_status,
       m.winner_player_id,
       m.at_fault_player_ids,
       (select (s->>'points')::int from jsonb_array_elements(m.result_json->'scores') s
         where s->>'player_id' = m.player_a_id) as points_a,
       (select (s->>'points')::int from jsonb_array_elements(m.result_json->'scores') s
         where s->>'player_id' = m.player_b_id) as points_b,
       m.result_json->>'reason' as reason,
       m.result_json->'game_metadata' as game_metadata,
       m.referee_id,
       -- By the referee's clock: the transcript's first and last entries.
       (m.transcript_json->'entries'->0->>'at')::timestamptz as started_at,
       (m.transcript_json->'entries'->-1->>'at')::timestamptz as ended_at,
       (extract(epoch from (m.transcript_json->'entries'->-1->>'at')::timestamptz
                           - (m.transcript_json->'entries'->0->>'at')::timestamptz) * 1000)::bigint as duration_ms,
       -- When the manager recorded the result.
       m.finished_at
from matches m
join agents pa on pa.agent_id = m.player_a_id
join agents pb on pb.agent_id = m.player_b_id;

-- One row per transcript entry, in order: every state transition and every message of every match.
create view transcript_entries as
select m.league_id,
       m.match_id,
       e.seq,
       (e.entry->>'at')::timestamptz as at,
       case when e.entry ? 'message' then 'message' else 'state_transition' end as kind,
       e.entry->'message'->>'direction' as direction,
       e.entry->'message'->>'player_id' as player_id,
       e.entry->'message'->>'message_type' as message_type,
       (e.entry->'message'->>'attempt')::int as attempt,
       nullif(e.entry->'message'->>'error_code', '') as error_code,
       e.entry->'message'->'payload' as payload,
       e.entry->'state_transition'->>'from' as from_state,
       e.entry->'state_transition'->>'to' as to_state,
       e.entry->'state_transition'->>'reason' as transition_reason
from matches m,
     jsonb_array_elements(m.transcript_json->'entries') with ordinality as e(entry, seq);
