-- A finished match's transcript as JSON is kept as text, not jsonb. Parsing it into jsonb was about half
-- of the statement that records a batch of results, on the path between two rounds: 2.05-2.85 ms a batch
-- of 21 results with it, 1.69-1.89 ms as text (pgbench on 14,300 real rows, docs/benchmarks.md). The
-- manager writes it from the transcript it has just decoded, so it is valid JSON without Postgres
-- checking it again; it is read far less often than written (a person's SQL, one match's causes of a
-- technical loss), and a reader casts it: `transcript_json::jsonb`, as transcript_entries does.
--
-- What was read from it on every schedule and player history, when a match started and ended by its
-- referee's clock (its first and last entries), is kept in columns of its own, written with the result.
alter table matches add column started_at timestamptz, add column ended_at timestamptz;

update matches
set started_at = (transcript_json->'entries'->0->>'at')::timestamptz,
    ended_at = (transcript_json->'entries'->-1->>'at')::timestamptz
where transcript_json is not null;

drop view match_results;
drop view transcript_entries;

alter table matches alter column transcript_json type text using transcript_json::text;

-- As in 20261126000005_results_compressed_with_lz4.sql: lz4 where this Postgres has it.
do $$
begin
    alter table matches alter column transcript_json set compression lz4;
exception when feature_not_supported then
    raise notice 'this Postgres has no lz4: transcripts stay compressed with pglz';
end
$$;

-- One row per match: who played, how it ended, when, and the game's own account (even_odd: the choices
-- and the drawn number; tic_tac_toe: the moves) in game_metadata. As before, but for the times, read
-- from their columns.
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
       m.started_at,
       m.ended_at,
       (extract(epoch from m.ended_at - m.started_at) * 1000)::bigint as duration_ms,
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
     jsonb_array_elements(m.transcript_json::jsonb->'entries') with ordinality as e(entry, seq);
