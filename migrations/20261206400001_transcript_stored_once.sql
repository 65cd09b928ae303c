-- A finished match's transcript is stored once, as proto3 JSON text (`transcript_json`), the form the
-- transcript_entries view and people's SQL read; GetMatch decodes it into the contracts' message. It
-- was stored a second time as protobuf (`transcript`), which every recorded result sent, compressed and
-- wrote beside the JSON, on the path between two rounds (docs/adr/0085-a-match-writes-less.md).
-- `transcript` now holds only the transcripts of matches recorded before results were kept as JSON
-- (20261124000001_results_as_json.sql), whose JSON is null; it is cleared where the JSON says the same.
update matches set transcript = null where transcript is not null and transcript_json is not null;
