//! Every update of a match is a HOT update (migrations/20261207100001_matches_updated_in_place.sql): a
//! claim, a renewal, a give-back and a result write no index entry. Seen in the indexes themselves
//! (pageinspect), not in pg_stat's counters, which the manager's connections flush when they please:
//! an update that is not HOT adds an entry for the row's new version to every index of `matches`, and
//! nothing removes it but a vacuum, which a league of six matches is far too small to trigger.

#![allow(clippy::unwrap_used)]

use crate::support::*;

#[tokio::test]
async fn a_league_s_matches_are_updated_without_index_entries() {
    let manager = spawn_manager(4).await;
    let mut client = manager.client();
    let referee = players_and_referee(&mut client, &["a", "b", "c", "d"]).await; // 3 rounds, 6 matches
    // The first round: claimed, renewed, one match given back and claimed again, then both reported.
    let first = claim(&mut client, &referee, 2).await;
    assert_eq!(first.len(), 2);
    let leases = first.iter().map(lease_of).collect();
    assert_eq!(renew(&mut client, &referee, leases, false).await, [true, true]);
    assert_eq!(
        release(&mut client, &referee, vec![lease_of(&first[0])], false)
            .await
            .len(),
        1
    );
    let again = claim(&mut client, &referee, 1).await;
    assert_eq!(again.len(), 1);
    report_a_wins(&mut client, &referee, &[first[1].clone(), again[0].clone()]).await;
    for _ in 2..=3 {
        let round = claim_round(&mut client, &referee).await;
        assert_eq!(round.len(), 2);
        report_a_wins(&mut client, &referee, &round).await;
    }
    let finished: i64 = sqlx::query_scalar("select count(*) from matches where status = 'finished'")
        .fetch_one(&manager.pool)
        .await
        .unwrap();
    assert_eq!(finished, 6, "the league is played");

    sqlx::query("create extension if not exists pageinspect")
        .execute(&manager.pool)
        .await
        .unwrap();
    // Each index is one page (its root, a leaf); its entries count the row versions it points to.
    let entries: Vec<(String, i32, i64)> = sqlx::query_as(
        "select c.relname::text, (bt_metap(c.relname::text)).level::int,
                (select coalesce(sum(coalesce(cardinality(p.tids), 1)), 0)::bigint
                 from bt_page_items(c.relname::text, (bt_metap(c.relname::text)).root::bigint) p)
         from pg_index i join pg_class c on c.oid = i.indexrelid
         where i.indrelid = 'matches'::regclass order by 1",
    )
    .fetch_all(&manager.pool)
    .await
    .unwrap();
    assert!(!entries.is_empty());
    for (index, level, count) in entries {
        assert_eq!(level, 0, "{index} is one page");
        assert_eq!(
            count, 6,
            "{index}: one entry a match, none for its updated versions"
        );
    }
}
