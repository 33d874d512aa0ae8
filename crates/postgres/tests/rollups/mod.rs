//! What the rollup tests share: two teams (the first with locations A and B), and row counts.

use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use opsd_test_db::TestDatabase;

pub const A: &str = "00000000-0000-7000-8000-00000000000a";
pub const B: &str = "00000000-0000-7000-8000-00000000000b";
pub const OTHER_TEAM: &str = "00000000-0000-7000-8000-00000000000c";

/// A row of a kept total or of a recomputed one that is not in both, as text.
#[derive(QueryableByName, Debug)]
struct Difference {
    #[diesel(sql_type = Text)]
    row: String,
}

/// The rows of each pair of relations defined by `with` (kept, recomputed) that are not in both,
/// labelled by the pair's name and which side holds them: empty when every pair agrees.
pub async fn differences(conn: &mut AsyncPgConnection, with: &str, pairs: &[(&str, &str, &str)]) -> Vec<String> {
    let sides = pairs.iter().flat_map(|(name, kept, recomputed)| {
        [
            format!("SELECT '{name} kept ' || x::text AS row FROM (SELECT * FROM {kept} EXCEPT SELECT * FROM {recomputed}) x"),
            format!("SELECT '{name} true ' || x::text AS row FROM (SELECT * FROM {recomputed} EXCEPT SELECT * FROM {kept}) x"),
        ]
    });
    let query = format!("{with} {}", sides.collect::<Vec<_>>().join(" UNION ALL "));
    let rows: Vec<Difference> = diesel::sql_query(query).load(conn).await.unwrap();
    rows.into_iter().map(|d| d.row).collect()
}

/// Eight transactions at once, alternately at A and B, each running `writes(n, location)`.
pub async fn write_concurrently(url: &str, writes: impl Fn(u32, &str) -> String) {
    let writers = (0..8).map(|n| {
        let location = if n % 2 == 0 { A } else { B };
        let step = format!("BEGIN; {} COMMIT;", writes(n, location));
        async move {
            let mut conn = AsyncPgConnection::establish(url).await.unwrap();
            conn.batch_execute(&step).await.unwrap();
        }
    });
    futures::future::join_all(writers).await;
}

pub async fn count(conn: &mut AsyncPgConnection, table: &str) -> usize {
    #[derive(QueryableByName)]
    struct Rows {
        #[diesel(sql_type = BigInt)]
        n: i64,
    }
    let rows: Rows = diesel::sql_query(format!("SELECT count(*) AS n FROM {table}")).get_result(conn).await.unwrap();
    rows.n as usize
}

/// Teams org_1 (locations A and B) and org_2 (OTHER_TEAM).
pub async fn seeded() -> (TestDatabase, AsyncPgConnection) {
    let database = TestDatabase::new().await;
    let mut conn = AsyncPgConnection::establish(database.url()).await.unwrap();
    conn.batch_execute(&format!(
        "INSERT INTO teams (id) VALUES ('org_1'), ('org_2');
         INSERT INTO locations (id, team_id, name, slug, timezone) VALUES
           ('{A}', 'org_1', 'A', 'a', 'UTC'), ('{B}', 'org_1', 'B', 'b', 'UTC'), ('{OTHER_TEAM}', 'org_2', 'C', 'c', 'UTC');"
    ))
    .await
    .unwrap();
    (database, conn)
}
