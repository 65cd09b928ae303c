-- Event delivery reads its next batch in delivery order (event, then player). The index it had held
-- the pending deliveries by event only, so each read joined and sorted every pending delivery before
-- keeping the first 1,000: at 500 players, once deliveries fell behind, a read took a second (measured:
-- EXPLAIN ANALYZE on a 500-player bench's database, 265,000 pending) and the backlog only grew. With the
-- pending deliveries indexed in delivery order, a read walks the index and stops at its limit.
drop index event_deliveries_pending;
create index event_deliveries_pending on event_deliveries (event_id, player_id)
    where delivered_at is null and gave_up_at is null;
