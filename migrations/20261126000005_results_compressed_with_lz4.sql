-- A finished match's row keeps its result and transcript twice, as protobuf and as JSON (ADR 0016):
-- about 2.7 KB at the bench's matches, over the 2 KB beyond which Postgres compresses a row's large
-- values, inside the statement that records a batch of results (on the path between two rounds).
-- Inserting 3,000 real rows took 269-295 ms with pglz, the default, and 158-206 ms with lz4, about
-- 35 µs of Postgres's time a match (docs/benchmarks.md). lz4 needs a Postgres built with it (the
-- official images and Debian's packages are); without it the values stay compressed with pglz.
do $$
begin
    alter table matches
        alter column result set compression lz4,
        alter column transcript set compression lz4,
        alter column result_json set compression lz4,
        alter column transcript_json set compression lz4;
exception when feature_not_supported then
    raise notice 'this Postgres has no lz4: results and transcripts stay compressed with pglz';
end
$$;
