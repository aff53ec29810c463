//! Four seeded SQL workloads modelled on the paper's mobile-app traces (Section 6.1,
//! Table III, Figures 5 and 6). We have no traces; the model takes only what the paper
//! states: 1 KB DB pages; Facebook uses 13–16 DB files and the others 3–6; short
//! user-interactive transactions that insert or update small rows (posts, tweets, chats,
//! mails). Read flags and counters are updated in place. The statistics the paper gives
//! (5.2 writes per logical page, 72.8% of page writes changing at most 64 bytes) are
//! measured from these workloads and reported beside the paper's, never fitted.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::error::JournalError;

/// The four applications of Table III.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum App {
    /// Facebook (FB).
    Facebook,
    /// Twitter (TW).
    Twitter,
    /// KakaoTalk (KT).
    KakaoTalk,
    /// Gmail (GM).
    Gmail,
}

impl App {
    /// All four, in the paper's order.
    pub const ALL: [App; 4] = [App::Facebook, App::Twitter, App::KakaoTalk, App::Gmail];

    /// The paper's abbreviation.
    pub fn code(self) -> &'static str {
        match self {
            App::Facebook => "fb",
            App::Twitter => "tw",
            App::KakaoTalk => "kt",
            App::Gmail => "gm",
        }
    }

    /// Parses `fb`, `tw`, `kt` or `gm`.
    pub fn parse(code: &str) -> Result<App, JournalError> {
        App::ALL
            .into_iter()
            .find(|a| a.code() == code)
            .ok_or_else(|| JournalError::Workload(format!("unknown workload {code:?}: expected fb, tw, kt or gm")))
    }

    /// The model of this application.
    pub fn model(self) -> AppModel {
        match self {
            // Table III: view new messages; write a message, link and picture. Section
            // 6.2: 13–16 DB files.
            App::Facebook => AppModel {
                base_db_files: 12,
                transactions_per_length: 60,
                body_bytes: (40, 300),
                insert_percent: 50,
                flag_percent: 30,
                hot_rows: AppModel::HOT_ROWS,
            },
            // View new tweets, write a status: tweets up to 140 characters.
            App::Twitter => AppModel {
                base_db_files: 2,
                transactions_per_length: 80,
                body_bytes: (20, 140),
                insert_percent: 60,
                flag_percent: 30,
                hot_rows: AppModel::HOT_ROWS,
            },
            // 1:1 and group chats: short messages.
            App::KakaoTalk => AppModel {
                base_db_files: 2,
                transactions_per_length: 80,
                body_bytes: (5, 60),
                insert_percent: 70,
                flag_percent: 20,
                hot_rows: AppModel::HOT_ROWS,
            },
            // Write and send, receive: mails are the longest rows.
            App::Gmail => AppModel {
                base_db_files: 2,
                transactions_per_length: 50,
                body_bytes: (150, 700),
                insert_percent: 40,
                flag_percent: 40,
                hot_rows: AppModel::HOT_ROWS,
            },
        }
    }
}

/// The parameters of one application's workload. The DB file counts are the paper's;
/// the rest are our modelling choices, not fitted to any figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppModel {
    /// DB files are this plus the trace length (1–4): 13–16 for FB, 3–6 for the others
    /// (Section 6.2).
    pub base_db_files: u32,
    /// Transactions per unit of trace length (the paper's traces grow with their number).
    pub transactions_per_length: u32,
    /// Message body length range, bytes (ours: tweets ≤ 140 characters, chats short,
    /// mails long).
    pub body_bytes: (u32, u32),
    /// Percentage of transactions inserting 1–3 new rows (ours).
    pub insert_percent: u32,
    /// Percentage updating the flags of a recent row (read, starred); the rest update a
    /// counter row (ours).
    pub flag_percent: u32,
    /// The hot set of the flag updates: each picks one of the DB file's `hot_rows` newest
    /// messages (ours: [`AppModel::HOT_ROWS`]). A file starts with
    /// [`AppModel::INITIAL_ROWS`] messages, or `hot_rows` if more, so the set is full from
    /// the first transaction.
    pub hot_rows: u32,
}

impl AppModel {
    /// The default hot set of the flag updates, messages (ours).
    pub const HOT_ROWS: u32 = 10;
    /// Messages in each DB file before the transactions, at least (ours).
    pub const INITIAL_ROWS: u32 = 20;
    /// The largest hot set a model may ask for, messages: the setup inserts that many
    /// rows into every DB file.
    pub const MAX_HOT_ROWS: u32 = 1 << 16;
}

/// One generated workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workload {
    /// DB file names.
    pub db_files: Vec<String>,
    /// The schema and initial rows of each DB file, one transaction each.
    pub setup: Vec<String>,
    /// `(DB file index, one BEGIN … COMMIT transaction)`, in order.
    pub transactions: Vec<(usize, String)>,
    /// SQLite commands (statements) in the transactions.
    pub commands: u64,
}

/// The trace lengths, 1 to 4.
pub const LENGTHS: std::ops::RangeInclusive<u32> = 1..=4;

/// Generates the workload of `app` at trace `length` (1–4) from `seed`.
pub fn generate(app: App, length: u32, seed: u64) -> Result<Workload, JournalError> {
    generate_with(app, &app.model(), length, seed)
}

/// Generates the workload of `app` with another `model` (a sensitivity point); the
/// PRNG stream is `app`'s, as in [`generate`].
pub fn generate_with(app: App, model: &AppModel, length: u32, seed: u64) -> Result<Workload, JournalError> {
    if !LENGTHS.contains(&length) {
        return Err(JournalError::Workload(format!("trace length {length} is not 1 to 4")));
    }
    if model.body_bytes.0 > model.body_bytes.1
        || model.insert_percent + model.flag_percent > 100
        || !(1..=AppModel::MAX_HOT_ROWS).contains(&model.hot_rows)
    {
        return Err(JournalError::Workload(format!("inconsistent workload model {model:?}")));
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ (app as u64) << 32 ^ u64::from(length));
    let model = *model;
    let files = (model.base_db_files + length) as usize;
    let db_files: Vec<String> = (0..files).map(|i| format!("{}{i}.db", app.code())).collect();
    let mut next_id = vec![1u64; files];
    let mut setup = Vec::new();
    for (i, _) in db_files.iter().enumerate() {
        let mut sql = String::from(
            "BEGIN;CREATE TABLE msg(id INTEGER PRIMARY KEY, thread INTEGER, ts INTEGER, flags INTEGER, body TEXT);\
             CREATE TABLE state(k TEXT PRIMARY KEY, v INTEGER);INSERT INTO state VALUES('unread', 0);\
             INSERT INTO state VALUES('synced', 0);",
        );
        for _ in 0..AppModel::INITIAL_ROWS.max(model.hot_rows) {
            sql += &insert(&mut rng, &model, &mut next_id[i], 0);
        }
        sql += "COMMIT;";
        setup.push(sql);
    }
    let mut transactions = Vec::new();
    let mut commands = 0;
    let count = model.transactions_per_length * length;
    for t in 0..count {
        // A skewed choice of DB file: file k is chosen with weight 1/(k+1).
        let weights: Vec<f64> = (0..files).map(|k| 1.0 / (k as f64 + 1.0)).collect();
        let total: f64 = weights.iter().sum();
        let mut x = rng.gen::<f64>() * total;
        let db = weights.iter().position(|w| {
            x -= w;
            x < 0.0
        });
        let db = db.unwrap_or(files - 1);
        let ts = u64::from(t) + 1;
        let kind = rng.gen_range(0..100);
        let mut sql = String::from("BEGIN;");
        if kind < model.insert_percent {
            let rows = rng.gen_range(1..=3);
            for _ in 0..rows {
                sql += &insert(&mut rng, &model, &mut next_id[db], ts);
            }
            sql += &format!("UPDATE state SET v = v + {rows} WHERE k = 'unread';");
            commands += rows + 1;
        } else if kind < model.insert_percent + model.flag_percent {
            let newest = next_id[db] - 1;
            let id = newest - rng.gen_range(0..newest.min(u64::from(model.hot_rows)));
            sql += &format!("UPDATE msg SET flags = flags | {} WHERE id = {id};", 1 << rng.gen_range(0..4));
            sql += "UPDATE state SET v = max(v - 1, 0) WHERE k = 'unread';";
            commands += 2;
        } else {
            sql += &format!("UPDATE state SET v = {ts} WHERE k = 'synced';");
            commands += 1;
        }
        sql += "COMMIT;";
        transactions.push((db, sql));
    }
    Ok(Workload { db_files, setup, transactions, commands })
}

fn insert(rng: &mut Xoshiro256PlusPlus, model: &AppModel, next_id: &mut u64, ts: u64) -> String {
    let len = rng.gen_range(model.body_bytes.0..=model.body_bytes.1) as usize;
    let body: String = (0..len).map(|_| char::from(b'a' + rng.gen_range(0..26u8))).collect();
    let id = *next_id;
    *next_id += 1;
    format!("INSERT INTO msg VALUES({id}, {}, {ts}, 0, '{body}');", rng.gen_range(0..8))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workloads_are_deterministic_and_sized_as_stated() {
        for app in App::ALL {
            for length in LENGTHS {
                let a = generate(app, length, 5).unwrap();
                assert_eq!(a, generate(app, length, 5).unwrap());
                let files = a.db_files.len() as u32;
                match app {
                    App::Facebook => assert!((13..=16).contains(&files)),
                    _ => assert!((3..=6).contains(&files)),
                }
                assert!(a.transactions.iter().all(|(db, sql)| *db < a.db_files.len() && sql.ends_with("COMMIT;")));
            }
        }
        assert_ne!(generate(App::Twitter, 1, 5).unwrap(), generate(App::Twitter, 1, 6).unwrap());
        assert!(generate(App::Gmail, 5, 1).is_err());
        assert!(App::parse("fx").unwrap_err().to_string().contains("fx"));
    }

    #[test]
    fn another_model_changes_the_workload_and_a_bad_one_is_refused() {
        let mut model = App::Gmail.model();
        assert_eq!(generate_with(App::Gmail, &model, 2, 5).unwrap(), generate(App::Gmail, 2, 5).unwrap());
        model.body_bytes = (300, 1400);
        let longer = generate_with(App::Gmail, &model, 2, 5).unwrap();
        assert_ne!(longer, generate(App::Gmail, 2, 5).unwrap());
        model.body_bytes = (10, 5);
        assert!(generate_with(App::Gmail, &model, 2, 5).is_err());
        for hot_rows in [0, AppModel::MAX_HOT_ROWS + 1] {
            let model = AppModel { hot_rows, ..App::Gmail.model() };
            assert!(generate_with(App::Gmail, &model, 2, 5).is_err(), "hot set of {hot_rows}");
        }
    }

    #[test]
    fn a_larger_hot_set_spreads_the_flag_updates_over_more_rows() {
        // DB file 0's initial rows, the rows its transactions insert and the distinct rows
        // its flag updates pick.
        let flagged = |hot_rows: u32| {
            let model = AppModel { hot_rows, flag_percent: 60, insert_percent: 10, ..App::Twitter.model() };
            let w = generate_with(App::Twitter, &model, 4, 5).unwrap();
            let own: Vec<&str> =
                w.transactions.iter().filter(|(db, _)| *db == 0).map(|(_, sql)| sql.as_str()).collect();
            let inserted = own.iter().map(|sql| sql.matches("INSERT INTO msg").count()).sum::<usize>();
            let ids: std::collections::BTreeSet<&str> =
                own.iter().filter_map(|sql| sql.split("WHERE id = ").nth(1)?.split(';').next()).collect();
            (w.setup[0].matches("INSERT INTO msg").count(), inserted, ids.len())
        };
        let (small_rows, inserted, small_ids) = flagged(2);
        assert_eq!(small_rows, AppModel::INITIAL_ROWS as usize);
        assert!(small_ids <= 2 + inserted, "one of the 2 newest rows each time: {small_ids} rows, {inserted} inserted");
        let (large_rows, _, large_ids) = flagged(500);
        assert_eq!(large_rows, 500, "the setup fills the hot set");
        assert!(large_ids > 2 * small_ids, "{large_ids} against {small_ids}");
    }
}
