//! SQL statements with their arguments, kept apart until they are run so that SQLite can run
//! several in one round trip (one multi-statement text, arguments numbered across it) while
//! PostgreSQL, whose prepared statements hold one command each, runs them one by one.
//!
//! A statement's text marks each argument with `?`; rendering numbers them `$1`, `$2`, ….

use sqlx::any::AnyArguments;
use sqlx::{AnyConnection, Arguments, AssertSqlSafe, Executor};

use crate::dialect::Dialect;
use crate::error::AuditError;

/// One argument.
#[derive(Debug, Clone)]
pub(crate) enum Arg {
    Text(Option<String>),
    Int(Option<i64>),
    Bytes(Vec<u8>),
}

impl From<&str> for Arg {
    fn from(value: &str) -> Self {
        Self::Text(Some(value.to_owned()))
    }
}

impl From<String> for Arg {
    fn from(value: String) -> Self {
        Self::Text(Some(value))
    }
}

impl From<&String> for Arg {
    fn from(value: &String) -> Self {
        Self::Text(Some(value.clone()))
    }
}

impl From<Option<&str>> for Arg {
    fn from(value: Option<&str>) -> Self {
        Self::Text(value.map(str::to_owned))
    }
}

impl From<Option<String>> for Arg {
    fn from(value: Option<String>) -> Self {
        Self::Text(value)
    }
}

impl From<&[u8]> for Arg {
    fn from(value: &[u8]) -> Self {
        Self::Bytes(value.to_vec())
    }
}

impl From<i64> for Arg {
    fn from(value: i64) -> Self {
        Self::Int(Some(value))
    }
}

impl From<Option<i64>> for Arg {
    fn from(value: Option<i64>) -> Self {
        Self::Int(value)
    }
}

/// One statement: text with `?` for each argument, and the arguments in order.
#[derive(Debug, Clone)]
pub(crate) struct Statement {
    sql: String,
    args: Vec<Arg>,
}

impl Statement {
    pub fn new(sql: impl Into<String>) -> Self {
        Self { sql: sql.into(), args: Vec::new() }
    }

    /// Append an argument (for the next `?`).
    pub fn arg(mut self, value: impl Into<Arg>) -> Self {
        self.args.push(value.into());
        self
    }

    /// Append text with `?` markers and their arguments.
    pub fn push(&mut self, sql: &str, args: impl IntoIterator<Item = Arg>) {
        self.sql.push_str(sql);
        self.args.extend(args);
    }
}

/// Statements as one text (`;`-separated) with arguments numbered across it.
pub(crate) fn render(statements: &[Statement]) -> (String, AnyArguments) {
    let mut text = String::new();
    let mut args = AnyArguments::default();
    let mut n = 0;
    for statement in statements {
        for (i, piece) in statement.sql.split('?').enumerate() {
            if i > 0 {
                n += 1;
                text.push('$');
                text.push_str(&n.to_string());
            }
            text.push_str(piece);
        }
        text.push_str(";\n");
        for arg in &statement.args {
            // Adding an owned text or integer to AnyArguments cannot fail.
            let _ = match arg {
                Arg::Text(value) => args.add(value.clone()),
                Arg::Int(value) => args.add(*value),
                Arg::Bytes(value) => args.add(value.clone()),
            };
        }
    }
    (text, args)
}

/// Run statements in order, in as few round trips as each database allows: SQLite takes them
/// all as one text; PostgreSQL runs data-modifying statements together as one statement of
/// common table expressions (`WITH s1 AS (INSERT …), s2 AS (UPDATE …) INSERT …`), and the rest
/// (`COMMIT`) alone.
pub(crate) async fn run(
    conn: &mut AnyConnection,
    dialect: Dialect,
    statements: &[Statement],
) -> Result<(), AuditError> {
    if statements.is_empty() {
        return Ok(());
    }
    match dialect {
        Dialect::Sqlite => {
            let (text, args) = render(statements);
            let cache = cached(&text);
            conn.execute(sqlx::query_with(AssertSqlSafe(text), args).persistent(cache)).await?;
        }
        Dialect::Postgres => {
            for chunk in chunks(statements) {
                let (text, args) = render_postgres(chunk);
                let cache = cached(&text);
                conn.execute(sqlx::query_with(AssertSqlSafe(text), args).persistent(cache)).await?;
            }
        }
    }
    Ok(())
}

/// The longest statement text kept prepared for the next time it runs.
const CACHED_TEXT_MAX: usize = 4096;

/// Whether to keep `text` prepared on its connection (sqlx keeps up to 100 a connection).
/// Only short texts are: a commit that groups several callers' records is a text made of
/// their statements, new every time and growing with the group (tens of kilobytes under a
/// burst), and each one kept held its compiled program, hundreds of kilobytes, for good:
/// 150 MB after a burst of 10,000 calls, found with heaptrack.
fn cached(text: &str) -> bool {
    text.len() <= CACHED_TEXT_MAX
}

/// How a statement takes part in a chunk.
enum Part {
    /// `COMMIT` and the like: runs alone.
    Alone,
    /// A plain INSERT: new rows only, any number share a chunk.
    Insert,
    /// An UPDATE or an upsert, keyed by what it writes: two with one key never share a chunk.
    Write(String),
}

fn part(statement: &Statement) -> Part {
    let words: Vec<&str> = statement.sql.split_whitespace().take(3).collect();
    match words.as_slice() {
        ["INSERT", "INTO", table] if statement.sql.contains("ON CONFLICT") => {
            Part::Write(format!("upsert {table}"))
        }
        ["INSERT", "INTO", _] => Part::Insert,
        ["UPDATE", table, ..] => Part::Write(format!("update {table}")),
        _ => Part::Alone,
    }
}

/// Consecutive data-modifying statements, split so that no two in a chunk may write one row
/// (PostgreSQL does not order the parts of one statement).
fn chunks(statements: &[Statement]) -> Vec<&[Statement]> {
    let mut chunks = Vec::new();
    let mut start = 0;
    let mut writes: Vec<String> = Vec::new();
    for (i, statement) in statements.iter().enumerate() {
        match part(statement) {
            Part::Alone => {
                if i > start {
                    chunks.push(&statements[start..i]);
                }
                chunks.push(&statements[i..=i]);
                start = i + 1;
                writes.clear();
            }
            Part::Insert => {}
            Part::Write(key) => {
                if writes.contains(&key) {
                    chunks.push(&statements[start..i]);
                    start = i;
                    writes.clear();
                }
                writes.push(key);
            }
        }
    }
    if start < statements.len() {
        chunks.push(&statements[start..]);
    }
    chunks
}

/// One PostgreSQL statement: the last of the chunk, the others as its `WITH` parts.
fn render_postgres(chunk: &[Statement]) -> (String, AnyArguments) {
    let (text, args) = render(chunk);
    let parts: Vec<&str> = text.split(";\n").filter(|p| !p.is_empty()).collect();
    let Some((last, with)) = parts.split_last() else { return (text, args) };
    if with.is_empty() {
        return ((*last).to_owned(), args);
    }
    let ctes: Vec<String> =
        with.iter().enumerate().map(|(i, part)| format!("s{i} AS ({part})")).collect();
    (format!("WITH {} {last}", ctes.join(", ")), args)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A group commit's text, new every time, is not kept prepared on the connection (and all
    /// of its statements still run); a single caller's short one is kept. (sqlx's `Any`
    /// connection does not report its cache, so the decision is what is checked here; the
    /// memory it saves is measured by `bench/serve_burst.py`.)
    #[tokio::test]
    async fn a_long_group_runs_whole_without_staying_prepared() {
        use sqlx::Connection as _;
        sqlx::any::install_default_drivers();
        let mut conn = AnyConnection::connect("sqlite::memory:").await.expect("connect");
        let table = [Statement::new("CREATE TABLE t (a INTEGER, b TEXT)")];
        run(&mut conn, Dialect::Sqlite, &table).await.expect("create");
        let group: Vec<Statement> = (0..200_i64)
            .map(|i| Statement::new("INSERT INTO t (a, b) VALUES (?, ?)").arg(i).arg("x"))
            .collect();
        assert!(!cached(&render(&group).0), "a group of 200 is kept prepared");
        run(&mut conn, Dialect::Sqlite, &group).await.expect("group");
        let single = [Statement::new("INSERT INTO t (a, b) VALUES (?, ?)").arg(1).arg("y")];
        assert!(cached(&render(&single).0), "one caller's statement is prepared anew each time");
        run(&mut conn, Dialect::Sqlite, &single).await.expect("single");
        let rows: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM t").fetch_one(&mut conn).await.expect("count");
        assert_eq!(rows, 201);
    }

    #[test]
    fn arguments_are_numbered_across_statements() {
        let statements = [
            Statement::new("INSERT INTO a VALUES (?, ?)").arg(1).arg("x"),
            Statement::new("UPDATE b SET c = ? WHERE d = ?").arg(Some(2)).arg(None::<String>),
        ];
        let (text, args) = render(&statements);
        assert_eq!(text, "INSERT INTO a VALUES ($1, $2);\nUPDATE b SET c = $3 WHERE d = $4;\n");
        assert_eq!(args.len(), 4);
    }

    #[test]
    fn postgres_runs_writes_together_but_never_two_to_one_table() {
        let statements = [
            Statement::new("INSERT INTO packets VALUES (?)").arg(1),
            Statement::new("INSERT INTO runs VALUES (?)").arg(2),
            Statement::new("UPDATE runs SET a = ?").arg(3),
            Statement::new("UPDATE runs SET b = ?").arg(4),
            Statement::new("COMMIT"),
            Statement::new("INSERT INTO s VALUES (1) ON CONFLICT (id) DO NOTHING"),
            Statement::new("INSERT INTO s VALUES (1) ON CONFLICT (id) DO NOTHING"),
            Statement::new("INSERT INTO runs VALUES (3)"),
        ];
        let sizes: Vec<usize> = chunks(&statements).iter().map(|c| c.len()).collect();
        assert_eq!(sizes, [3, 1, 1, 1, 2]);
        let (text, args) = render_postgres(chunks(&statements)[0]);
        assert_eq!(
            text,
            "WITH s0 AS (INSERT INTO packets VALUES ($1)), s1 AS (INSERT INTO runs VALUES ($2)) UPDATE runs SET a = $3"
        );
        assert_eq!(args.len(), 3);
        assert_eq!(render_postgres(chunks(&statements)[2]).0, "COMMIT");
    }
}
