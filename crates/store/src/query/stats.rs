//! Validation analytics (issue 31 item 2): how often outputs are rejected,
//! why, and whether retries help, per profile, schema, agent, model or day.
//!
//! SQL written once for both backends (Note \[Queries on both
//! backends\]) over what triggers keep (Note \[Kept outcomes\]); on a store
//! older than those, over `sessions` and `hook_calls`, reading the JSON in
//! the `verdict` and `errors` columns with SQLite's JSON1 functions or
//! Postgres's `jsonb` ones.
//!
//! Note \[Outcomes of a run\]: every session in the window is in exactly
//! one of
//! - `valid_first_try`: its final verdict is valid and no `Stop` hook call
//!   of its main agent was `blocked`;
//! - `valid_after_retries`: valid after one or more blocked calls (the
//!   hook sent the model back; `retries` sums those calls). Only hook
//!   chains record retries in the store: `ask` keeps its attempts in its
//!   own output, not in a session row, and `run` does not retry;
//! - `invalid`: a value was found but the final verdict is invalid (a hook
//!   that gave up counts here);
//! - `no_output`: nothing structured was found (method `none`, `handoff`
//!   alone, or none recorded);
//! - `unchecked`: no verdict stored (running, or imported without a profile
//!   before verdicts were kept).
//!
//! The failing paths count every rejection: the errors of each final
//! invalid verdict and of each blocked hook call, so a path that was fixed
//! on the second try still shows why the first was refused. A session's
//! last main-agent call is left out: its errors are the session's verdict
//! (the hook wrote them there), counted once.
//! Contradictions (`agentshape check --contradictions`) are not stored by
//! any command, so they are reported as 0.
//!
//! Note \[Kept outcomes\]: parsing every verdict on every read cost about
//! a second at 100,000 sessions, so since SQLite 10 / Postgres 7 (migration
//! `*_outcomes.sql`, which backfills old rows) triggers keep what the stats
//! need when a session or hook call is written, whichever comes first:
//! - on `sessions`: `outcome` (`valid`, `invalid`, `none`; NULL unchecked),
//!   `repaired`, `retries` (its main agent's blocked hook calls) and
//!   `last_hook_id` (its main agent's last hook call);
//! - `session_errors`: each error of an invalid verdict (`hook_id` NULL)
//!   and of each blocked main-agent hook call, its kind and rule worked out
//!   (as `keyword` does), with its session's start and keys and whether
//!   it `counted` (the session exists and it is not the last call's: the
//!   verdict holds those);
//! - `session_error_days`: the counted errors per day, key, path, kind and
//!   rule, with the greatest session id (looked up again when the example
//!   itself stops counting);
//! - `session_outcome_days`: sessions, retries and repairs per day,
//!   profile, agent, model, method and outcome (`first`/`retried` split),
//!   changed by signed deltas so trigger order does not matter. A window
//!   reads the days after `since` from these counters and the sessions
//!   (errors) of `since`'s own day at or after it one by one, so outcomes
//!   and failing paths cost as many rows as there are days and keys, not
//!   sessions. Only the percentiles, exact, read a row per valid output
//!   (ranked in Rust on SQLite, in SQL on Postgres).
//!
//! A verdict or hook `errors` text that is not JSON counts as not valid and
//! with no errors (the triggers never fail a write). On Postgres a session
//! and a hook call of it written in two concurrent transactions may each
//! miss the other (read committed): that session's `retries` and
//! `last_hook_id` then leave out that call (SQLite has one writer at a
//! time, so no such race).

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Backend, Cell, Source, at, has_hooks, int, is_pg, opt_real, opt_text, text};
use crate::error::Result;

/// What [`stats`] groups sessions by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum StatsBy {
    /// One group for every session (key `""`).
    #[default]
    All,
    /// The profile (name or path) or schema path, as stored.
    Profile,
    /// The file name of that profile or schema path: the same schema used
    /// from different folders is one group.
    Schema,
    /// The agent.
    Agent,
    /// The model.
    Model,
    /// The UTC day the session started (`YYYY-MM-DD`).
    Day,
}

/// How many failing paths (and invariant rules) a group lists.
pub const STATS_PATHS: usize = 10;

/// One group of [`stats`] (Note \[Outcomes of a run\]).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StatsGroup {
    /// The profile, schema, agent, model or day (`""`: none recorded, or
    /// [`StatsBy::All`]).
    pub key: String,
    /// Sessions started in the window.
    pub runs: i64,
    /// Valid with no retry.
    pub valid_first_try: i64,
    /// Valid after one or more blocked hook calls.
    pub valid_after_retries: i64,
    /// The blocked calls before those valid outputs.
    pub retries: i64,
    /// A value found but invalid at the end.
    pub invalid: i64,
    /// Nothing structured found.
    pub no_output: i64,
    /// No verdict stored.
    pub unchecked: i64,
    /// Sessions whose output needed a repair (`verdict.repairs` not empty).
    pub repaired: i64,
    /// Sessions per extraction method (checked sessions only), most first.
    pub methods: Vec<MethodCount>,
    /// The JSON paths that fail most, most first, at most [`STATS_PATHS`].
    pub failing_paths: Vec<FailingPath>,
    /// Invariant findings by rule, most first, at most [`STATS_PATHS`].
    pub invariants: Vec<RuleCount>,
    /// Contradictions found: not stored by any command, so always 0.
    pub contradictions: i64,
    /// Tokens (in + out), cost and duration of the sessions with a valid output.
    pub per_valid: PerValid,
}

impl StatsGroup {
    /// Sessions with a verdict.
    #[must_use]
    pub fn checked(&self) -> i64 {
        self.runs - self.unchecked
    }

    /// Sessions whose final output was rejected (invalid or none found).
    #[must_use]
    pub fn rejected(&self) -> i64 {
        self.invalid + self.no_output
    }

    /// [`Self::rejected`] over [`Self::checked`] (`None` when nothing was checked).
    #[must_use]
    pub fn rejection_rate(&self) -> Option<f64> {
        #[allow(clippy::cast_precision_loss)] // counts far below 2^52
        (self.checked() > 0).then(|| self.rejected() as f64 / self.checked() as f64)
    }
}

/// Sessions that used one extraction method.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MethodCount {
    /// The method as stored (`""`: none recorded).
    pub method: String,
    /// Sessions.
    pub count: i64,
}

/// One failing JSON path and the kind of error at it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailingPath {
    /// JSON Pointer into the output (`""`: the root).
    pub path: String,
    /// The error's kind: `invariant`, `number`, `text`, or for a schema
    /// error the failing keyword (`required`, `type`, `enum`, ...).
    pub kind: String,
    /// Rejections with this error.
    pub count: i64,
    /// A session that had it (the greatest id, byte-wise).
    pub example_session: String,
}

/// Findings of one invariant rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleCount {
    /// The rule (its CEL source; the message when none was stored).
    pub rule: String,
    /// Rejections it caused.
    pub count: i64,
}

/// The 50th and 95th percentiles (nearest rank) of one measure.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Quantiles {
    /// Median.
    pub p50: Option<f64>,
    /// 95th percentile.
    pub p95: Option<f64>,
}

/// [`Quantiles`] of what a valid output cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct PerValid {
    /// Input plus output tokens.
    pub tokens: Quantiles,
    /// Cost in USD (sessions with a cost).
    pub cost_usd: Quantiles,
    /// Duration in ms (sessions with one).
    pub duration_ms: Quantiles,
}

/// The group key of `by` over `sessions s`.
fn key_sql(store: &dyn Source, by: StatsBy) -> &'static str {
    match (by, is_pg(store)) {
        (StatsBy::All, _) => "''",
        (StatsBy::Profile, _) => "COALESCE(s.profile, '')",
        // The part after the last `/`: `rtrim` with every character but
        // `/` strips the file name, leaving the folder to cut off.
        (StatsBy::Schema, false) => {
            "COALESCE(replace(s.profile, rtrim(s.profile, replace(s.profile, '/', '')), ''), '')"
        }
        (StatsBy::Schema, true) => "COALESCE(regexp_replace(s.profile, '^.*/', ''), '')",
        (StatsBy::Agent, _) => "COALESCE(s.agent, '')",
        (StatsBy::Model, _) => "COALESCE(s.model, '')",
        (StatsBy::Day, _) => "substr(s.started_at, 1, 10)",
    }
}

/// The backend's JSON fragments: `valid` and `repaired` over the verdict
/// column `v` (on Postgres already `jsonb`).
struct Json {
    valid: &'static str,
    invalid: &'static str,
    repaired: &'static str,
    /// `FROM` items that give each error of `v` as `e`.
    verdict_errors: &'static str,
    /// The same over a hook call's `h.errors`.
    hook_errors: &'static str,
    /// Fields of an error `e`: instance path, schema path, kind, rule, message.
    fields: &'static str,
    /// The verdict as the fragments read it.
    verdict: &'static str,
}

const SQLITE: Json = Json {
    valid: "json_extract(v, '$.valid') = 1",
    invalid: "json_extract(v, '$.valid') = 0",
    repaired: "COALESCE(json_array_length(v, '$.repairs'), 0) > 0",
    verdict_errors: "json_each(v, '$.errors') e",
    hook_errors: "json_each(h.errors) e",
    fields: "json_extract(e.value, '$.instance_path') AS ip,
             json_extract(e.value, '$.schema_path') AS sp, json_extract(e.value, '$.kind') AS kd,
             json_extract(e.value, '$.rule') AS rl, json_extract(e.value, '$.message') AS msg",
    verdict: "s.verdict",
};

const POSTGRES: Json = Json {
    valid: "(v ->> 'valid') = 'true'",
    invalid: "(v ->> 'valid') = 'false'",
    repaired: "COALESCE(v -> 'repairs', '[]'::jsonb) NOT IN ('[]'::jsonb, 'null'::jsonb)",
    verdict_errors: "jsonb_array_elements(CASE WHEN jsonb_typeof(v -> 'errors') = 'array'
                     THEN v -> 'errors' ELSE '[]'::jsonb END) AS e(value)",
    hook_errors: "jsonb_array_elements(CASE WHEN jsonb_typeof(h.errors::jsonb) = 'array'
                  THEN h.errors::jsonb ELSE '[]'::jsonb END) AS e(value)",
    fields: "e.value ->> 'instance_path' AS ip, e.value ->> 'schema_path' AS sp,
             e.value ->> 'kind' AS kd, e.value ->> 'rule' AS rl, e.value ->> 'message' AS msg",
    verdict: "s.verdict::jsonb",
};

fn json(store: &dyn Source) -> &'static Json {
    if is_pg(store) { &POSTGRES } else { &SQLITE }
}

/// Whether the schema has the `verdict` column (SQLite 3+).
fn has_verdict(store: &dyn Source) -> bool {
    match store.backend() {
        Backend::Sqlite { version } => version >= 3,
        Backend::Postgres { .. } => true,
    }
}

/// Whether each session's outcome is kept in its row and its errors in
/// `session_errors` (SQLite 10+, Postgres 7+; Note \[Kept outcomes\]).
fn has_outcomes(store: &dyn Source) -> bool {
    match store.backend() {
        Backend::Sqlite { version } => version >= 10,
        Backend::Postgres { version } => version >= 7,
    }
}

/// The sessions of the window with key `k`, verdict `v` and their blocked
/// hook calls `retries`, as a derived table's body.
fn window_sql(store: &dyn Source, by: StatsBy, with_retries: bool) -> String {
    let key = key_sql(store, by);
    let j = json(store);
    let verdict = if has_verdict(store) {
        j.verdict
    } else {
        "NULL"
    };
    let raw = if has_verdict(store) {
        "s.verdict"
    } else {
        "NULL"
    };
    let (retries, join) = if with_retries && has_hooks(store) {
        (
            "COALESCE(r.n, 0)",
            "LEFT JOIN (SELECT session_id, COUNT(*) AS n FROM hook_calls
                        WHERE verdict = 'blocked' AND agent_id IS NULL GROUP BY session_id) r
                 ON r.session_id = s.id",
        )
    } else {
        ("0", "")
    };
    format!(
        "SELECT {key} AS k, s.id AS id, {verdict} AS v, {raw} AS vt, {retries} AS retries,
                s.extraction_method AS m, CAST(s.input_tokens AS DOUBLE PRECISION) + s.output_tokens AS t,
                s.cost_usd AS c, s.duration_ms AS d
         FROM sessions s {join} WHERE s.started_at >= ?1"
    )
}

/// Validation analytics of the sessions started at or after `since` (RFC
/// 3339; `None`: all), grouped by `by`, keys byte-wise (days oldest first).
///
/// Three passes (Note \[Kept outcomes\]): outcomes with methods and the
/// errors of the window's rejections (per-day counters, plus the rows of
/// `since`'s own day), and the measures of its valid outputs (index
/// `sessions_outcome`), ranked here on SQLite and by `percentile_disc` on
/// Postgres (Note \[Nearest rank in SQL\]). The last reads a row per
/// valid output: it grows with the window
/// (measured at 100,000 sessions in `benches/stats.rs`, README "Validation
/// analytics"). A store older than the kept outcomes (read-only, not
/// migrated) is read as before them, parsing every verdict.
///
/// # Errors
/// When the database cannot be read.
pub fn stats(store: &dyn Source, by: StatsBy, since: Option<&str>) -> Result<Vec<StatsGroup>> {
    stats_of(store, by, since, Parts::ALL)
}

/// Which parts of a [`StatsGroup`] [`stats_of`] computes; the outcomes and
/// methods always.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parts {
    /// The failing paths and invariant rules (one more pass, unnesting errors).
    pub paths: bool,
    /// The percentiles per valid output (one more pass, three sorts).
    pub quantiles: bool,
}

impl Parts {
    /// Everything.
    pub const ALL: Parts = Parts {
        paths: true,
        quantiles: true,
    };
}

/// [`stats`] with only the `parts` asked for (the others stay empty): the
/// overview's chart needs only the outcomes per day.
///
/// # Errors
/// When the database cannot be read.
pub fn stats_of(
    store: &dyn Source,
    by: StatsBy,
    since: Option<&str>,
    parts: Parts,
) -> Result<Vec<StatsGroup>> {
    let ctx = || "computing the validation stats".to_owned();
    let args = [Cell::Text(since.unwrap_or("").to_owned())];
    let j = json(store);
    let kept = has_outcomes(store);
    // Kept: `--by schema` groups by profile in SQL and cuts the file names
    // here (a string function on every row was the slowest part left).
    let (sql_by, rekey): (StatsBy, fn(String) -> String) = if kept && by == StatsBy::Schema {
        (StatsBy::Profile, schema_name)
    } else {
        (by, std::convert::identity)
    };
    let window = window_sql(store, by, true);
    let mut groups: BTreeMap<String, StatsGroup> = BTreeMap::new();

    // Outcomes (Note [Outcomes of a run]).
    // Kept: the whole days after `since` from their counters, the
    // sessions of the day `since` falls in (at or after it) one by one
    // (Note [Kept outcomes]).
    let outcomes = if kept {
        let key = key_sql(store, sql_by);
        format!(
            "SELECT k, cat, m, CAST(SUM(n) AS BIGINT), CAST(SUM(retries) AS BIGINT),
                    CAST(SUM(fixed) AS BIGINT) FROM
               (SELECT {day_key} AS k, s.cat AS cat, s.method AS m, s.runs AS n,
                       s.retries AS retries, s.repaired AS fixed
                FROM session_outcome_days s WHERE s.day > ?1
                UNION ALL
                SELECT {key}, CASE WHEN s.outcome IS NULL THEN 'unchecked'
                                   WHEN s.outcome = 'valid' THEN
                                        CASE WHEN s.retries > 0 THEN 'retried' ELSE 'first' END
                                   ELSE s.outcome END,
                       COALESCE(s.extraction_method, ''), 1, s.retries,
                       CASE WHEN s.repaired THEN 1 ELSE 0 END
                FROM sessions s WHERE s.started_at >= ?1 AND s.started_at < ?2
                  AND substr(s.started_at, 1, 10) <= ?1) x
             GROUP BY k, cat, m",
            day_key = key.replace("substr(s.started_at, 1, 10)", "s.day"),
        )
    } else {
        format!(
            "SELECT k, cat, COALESCE(m, ''), COUNT(*), CAST(SUM(retries) AS BIGINT),
                CAST(SUM(fixed) AS BIGINT) FROM
           (SELECT k, retries, m,
                   CASE WHEN v IS NULL THEN 'unchecked'
                        WHEN {valid} THEN CASE WHEN retries > 0 THEN 'retried' ELSE 'first' END
                        WHEN m IS NULL OR m IN ('none', 'handoff') THEN 'none'
                        ELSE 'invalid' END AS cat,
                   CASE WHEN v IS NOT NULL AND {repaired} THEN 1 ELSE 0 END AS fixed
            FROM ({window}) w) x
         GROUP BY k, cat, m",
            valid = j.valid,
            repaired = j.repaired,
        )
    };
    let outcome_args = if kept {
        vec![args[0].clone(), Cell::Text(day_end(since.unwrap_or("")))]
    } else {
        args.to_vec()
    };
    for r in store.cells(&outcomes, &outcome_args, &ctx)? {
        let n = int(at(&r, 3))?;
        if n == 0 {
            // Counters of sessions since moved or removed.
            continue;
        }
        let g = group(&mut groups, rekey(text(at(&r, 0))?));
        g.runs += n;
        g.repaired += int(at(&r, 5))?;
        let cat = text(at(&r, 1))?;
        match cat.as_str() {
            "unchecked" => g.unchecked += n,
            "first" => g.valid_first_try += n,
            "retried" => {
                g.valid_after_retries += n;
                g.retries += int(at(&r, 4))?;
            }
            "none" => g.no_output += n,
            _ => g.invalid += n,
        }
        if cat != "unchecked" {
            let method = text(at(&r, 2))?;
            match g.methods.iter_mut().find(|m| m.method == method) {
                Some(m) => m.count += n,
                None => g.methods.push(MethodCount { method, count: n }),
            }
        }
    }

    if parts.paths {
        errors(store, (by, sql_by, rekey), &args, &mut groups)?;
    }
    if !parts.quantiles {
        let mut out: Vec<StatsGroup> = groups.into_values().collect();
        trim(&mut out);
        return Ok(out);
    }
    if kept && is_pg(store) {
        pg_quantiles(store, by, &args, &mut groups)?;
    } else {
        rust_quantiles(store, (by, sql_by, rekey), kept, &args, &mut groups)?;
    }

    let mut out: Vec<StatsGroup> = groups.into_values().collect();
    trim(&mut out);
    Ok(out)
}

/// The percentiles per valid output, ranked here: one pass that only
/// reads, where window functions sorted three times in the database
/// (about four times slower at 100,000 sessions on SQLite, which has no
/// ordered-set aggregates).
fn rust_quantiles(
    store: &dyn Source,
    (by, sql_by, rekey): (StatsBy, StatsBy, fn(String) -> String),
    kept: bool,
    args: &[Cell],
    groups: &mut BTreeMap<String, StatsGroup>,
) -> Result<()> {
    let ctx = || "computing the validation stats".to_owned();
    let valid = if kept {
        format!(
            "SELECT {key}, CAST(s.input_tokens AS DOUBLE PRECISION) + s.output_tokens,
                    CAST(s.cost_usd AS DOUBLE PRECISION), CAST(s.duration_ms AS DOUBLE PRECISION)
             FROM sessions s WHERE s.started_at >= ?1 AND s.outcome = 'valid'",
            key = key_sql(store, sql_by),
        )
    } else {
        format!(
            "SELECT k, CAST(t AS DOUBLE PRECISION), CAST(c AS DOUBLE PRECISION),
                    CAST(d AS DOUBLE PRECISION)
             FROM ({window}) w0 WHERE v IS NOT NULL AND {valid}",
            window = window_sql(store, by, false),
            valid = json(store).valid,
        )
    };
    let mut measures: BTreeMap<String, [Vec<f64>; 3]> = BTreeMap::new();
    for r in store.cells(&valid, args, &ctx)? {
        let m = measures.entry(rekey(text(at(&r, 0))?)).or_default();
        for (i, v) in m.iter_mut().enumerate() {
            if let Some(x) = opt_real(at(&r, i + 1))? {
                v.push(x);
            }
        }
    }
    for (k, [t, c, d]) in measures {
        let g = group(groups, k);
        g.per_valid = PerValid {
            tokens: quantiles(t),
            cost_usd: quantiles(c),
            duration_ms: quantiles(d),
        };
    }
    Ok(())
}

/// The percentiles per valid output on Postgres, ranked in the database
/// by `percentile_disc` rather than sending every valid output's measures
/// to be ranked here.
///
/// Note \[Nearest rank in SQL\]: `percentile_disc(p)` takes the value at
/// rank `ceil(p * n)` (1-based; Postgres computes it in `double`), as
/// `quantiles` does with integers. For p = 0.5 and 0.95 the two ranks are
/// the same for every n up to 3,000,000 (checked exhaustively), and the
/// tests compare the whole stats of both backends. NULL measures are left
/// out by both. Measured on a loaded 2-core machine at 100,000 sessions,
/// ranking in SQL took 87–146 ms where sending the rows took 132–196
/// (`--by schema` cutting each valid output's file name in SQL took 205
/// ms: the names are cut once per distinct profile instead).
fn pg_quantiles(
    store: &dyn Source,
    by: StatsBy,
    args: &[Cell],
    groups: &mut BTreeMap<String, StatsGroup>,
) -> Result<()> {
    let ctx = || "computing the validation stats".to_owned();
    // By schema file: each profile's file name is cut once, over the few
    // distinct profiles of the counters (every session's is there), not
    // once per valid output.
    let (key, join) = if by == StatsBy::Schema {
        (
            "m.k",
            "JOIN (SELECT DISTINCT profile AS p, regexp_replace(profile, '^.*/', '') AS k
                   FROM session_outcome_days) m ON m.p = COALESCE(s.profile, '')",
        )
    } else {
        (key_sql(store, by), "")
    };
    let pct = |col: &str| {
        format!(
            "percentile_disc(0.5) WITHIN GROUP (ORDER BY {col}),
             percentile_disc(0.95) WITHIN GROUP (ORDER BY {col})"
        )
    };
    let sql = format!(
        "SELECT k, {t}, {c}, {d} FROM
           (SELECT {key} AS k, CAST(s.input_tokens AS DOUBLE PRECISION) + s.output_tokens AS t,
                   CAST(s.cost_usd AS DOUBLE PRECISION) AS c,
                   CAST(s.duration_ms AS DOUBLE PRECISION) AS d
            FROM sessions s {join} WHERE s.started_at >= ?1 AND s.outcome = 'valid') v
         GROUP BY k",
        t = pct("t"),
        c = pct("c"),
        d = pct("d"),
    );
    for r in store.cells(&sql, args, &ctx)? {
        let q = |i: usize| -> Result<Quantiles> {
            Ok(Quantiles {
                p50: opt_real(at(&r, i))?,
                p95: opt_real(at(&r, i + 1))?,
            })
        };
        let per_valid = PerValid {
            tokens: q(1)?,
            cost_usd: q(3)?,
            duration_ms: q(5)?,
        };
        group(groups, text(at(&r, 0))?).per_valid = per_valid;
    }
    Ok(())
}

/// The end of the rows read one by one for `since`'s own day: past every
/// start in that day (`~` sorts after the characters of a timestamp).
/// Without a `since` every day is in the counters but the empty one: the
/// range then ends before the first digit, where a range up to `~` read
/// every session only to keep none (about 50 of a whole-store `stats`'s
/// 200 ms on Postgres at 100,000 sessions).
fn day_end(since: &str) -> String {
    if since.is_empty() {
        "0".to_owned()
    } else {
        let day: String = since.chars().take(10).collect();
        format!("{day}~")
    }
}

/// The 50th and 95th percentiles of `v`, nearest rank (the value at rank
/// ceil(p * n), 1-based).
fn quantiles(mut v: Vec<f64>) -> Quantiles {
    v.sort_by(f64::total_cmp);
    let at = |p: usize| {
        let rank = (v.len() * p).div_ceil(100);
        rank.checked_sub(1).and_then(|i| v.get(i).copied())
    };
    Quantiles {
        p50: at(50),
        p95: at(95),
    }
}

/// The group of key `k`, made empty when new.
fn group(groups: &mut BTreeMap<String, StatsGroup>, k: String) -> &mut StatsGroup {
    groups.entry(k.clone()).or_insert_with(|| StatsGroup {
        key: k,
        ..StatsGroup::default()
    })
}

/// The errors of every rejection in the window (Note \[Outcomes of a
/// run\]), as failing paths and invariant rules of their groups.
///
/// Note \[Cheap test before parsing\]: a verdict whose `valid` is false
/// holds the text `false`, and most verdicts (valid ones without repairs)
/// do not: `LIKE '%false%'` on the stored text lets the database skip
/// parsing them (SQLite checks it first; Postgres orders conditions by its
/// own cost estimate); the JSON test after it is the exact one. Measured at
/// 100,000 sessions it saved little (`overview_paths_30d`: 564 ms before, 560 after).
/// `keys`: the grouping asked for, the one the SQL groups by, and what
/// turns a key of the latter into one of the former.
fn errors(
    store: &dyn Source,
    keys: (StatsBy, StatsBy, fn(String) -> String),
    args: &[Cell],
    groups: &mut BTreeMap<String, StatsGroup>,
) -> Result<()> {
    let ctx = || "counting the failing paths".to_owned();
    let (by, sql_by, rekey) = keys;
    let j = json(store);
    let window = window_sql(store, by, false);
    let hooks = if has_hooks(store) {
        let key = key_sql(store, by);
        let valid_json = if is_pg(store) {
            ""
        } else {
            "AND json_valid(h.errors)"
        };
        format!(
            "UNION ALL
             SELECT {key}, s.id, {fields}
             FROM hook_calls h JOIN sessions s ON s.id = h.session_id, {each}
             WHERE h.verdict = 'blocked' AND h.agent_id IS NULL AND h.errors IS NOT NULL
               {valid_json} AND s.started_at >= ?1
               AND h.id < (SELECT MAX(l.id) FROM hook_calls l
                           WHERE l.session_id = h.session_id AND l.agent_id IS NULL)",
            fields = j.fields,
            each = j.hook_errors,
        )
    } else {
        String::new()
    };
    let max_id = if is_pg(store) {
        "MAX(id COLLATE \"C\")"
    } else {
        "MAX(id)"
    };
    // Kept: the whole days after `since` from their counters, the errors of
    // `since`'s own day one by one, as the outcomes (Note [Kept outcomes]);
    // the kind and rule come worked out (no schema path or message).
    let kept = has_outcomes(store);
    let sql = if kept {
        let key = key_sql(store, sql_by);
        let max_example = if is_pg(store) {
            "MAX(id COLLATE \"C\")"
        } else {
            "MAX(id)"
        };
        format!(
            "SELECT k, ip, '', kd, rl, '', CAST(SUM(n) AS BIGINT), {max_example} FROM
               (SELECT {day_key} AS k, s.example AS id, s.path AS ip, s.kind AS kd,
                       s.rule AS rl, s.n AS n
                FROM session_error_days s WHERE s.day > ?1 AND s.n <> 0
                UNION ALL
                SELECT {key}, s.session_id, s.path, s.kind, s.rule, 1
                FROM session_errors s WHERE s.counted AND s.started_at >= ?1
                  AND s.started_at < ?2 AND substr(s.started_at, 1, 10) <= ?1) x
             GROUP BY k, ip, kd, rl",
            day_key = key.replace("substr(s.started_at, 1, 10)", "s.day"),
        )
    } else {
        format!(
            "SELECT k, ip, sp, kd, rl, msg, COUNT(*), {max_id} FROM
               (SELECT w.k AS k, w.id AS id, {fields}
                FROM ({window}) w, {each}
                WHERE w.vt LIKE '%false%' AND {invalid}
                {hooks}) x
             GROUP BY k, ip, sp, kd, rl, msg",
            fields = j.fields,
            each = j.verdict_errors,
            invalid = j.invalid,
        )
    };
    // Merge by (path, kind) and by rule: the schema path and message vary
    // more than a reader wants to see.
    let mut paths: BTreeMap<(String, String, String), (i64, String)> = BTreeMap::new();
    let mut rules: BTreeMap<(String, String), i64> = BTreeMap::new();
    let rows = if kept {
        let since = match args.first() {
            Some(Cell::Text(t)) => t.as_str(),
            _ => "",
        };
        let mut a = args.to_vec();
        a.push(Cell::Text(day_end(since)));
        store.cells(&sql, &a, &ctx)?
    } else {
        store.cells(&sql, args, &ctx)?
    };
    for r in rows {
        let k = rekey(text(at(&r, 0))?);
        let path = opt_text(at(&r, 1))?.unwrap_or_default();
        let schema_path = opt_text(at(&r, 2))?.unwrap_or_default();
        let kind = opt_text(at(&r, 3))?;
        let rule = opt_text(at(&r, 4))?;
        let message = opt_text(at(&r, 5))?.unwrap_or_default();
        let n = int(at(&r, 6))?;
        if n == 0 {
            // Counters of errors since moved or removed.
            continue;
        }
        let example = opt_text(at(&r, 7))?.unwrap_or_default();
        let kind = kind.unwrap_or_else(|| keyword(&schema_path));
        if kind == "invariant" {
            *rules
                .entry((k.clone(), rule.unwrap_or(message)))
                .or_default() += n;
        }
        let e = paths.entry((k, path, kind)).or_insert((0, String::new()));
        e.0 += n;
        if example > e.1 {
            e.1 = example;
        }
    }
    for ((k, path, kind), (count, example_session)) in paths {
        group(groups, k).failing_paths.push(FailingPath {
            path,
            kind,
            count,
            example_session,
        });
    }
    for ((k, rule), count) in rules {
        group(groups, k).invariants.push(RuleCount { rule, count });
    }
    Ok(())
}

/// The file name of a profile or schema path, as [`StatsBy::Schema`]'s SQL
/// cuts it: the part after the last `/`.
fn schema_name(profile: String) -> String {
    match profile.rsplit_once('/') {
        Some((_, name)) => name.to_owned(),
        None => profile,
    }
}

/// The failing keyword of a schema error: the last step of its schema
/// path (`/properties/action/enum` is `enum`); `schema` when there is none.
fn keyword(schema_path: &str) -> String {
    match schema_path.rsplit('/').next() {
        Some(k) if !k.is_empty() => k.replace("~1", "/").replace("~0", "~"),
        _ => "schema".to_owned(),
    }
}

/// Most first, then byte-wise; at most [`STATS_PATHS`].
fn trim(groups: &mut [StatsGroup]) {
    for g in groups {
        g.failing_paths.sort_by(|a, b| {
            b.count
                .cmp(&a.count)
                .then_with(|| a.path.cmp(&b.path))
                .then_with(|| a.kind.cmp(&b.kind))
        });
        g.failing_paths.truncate(STATS_PATHS);
        g.invariants
            .sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.rule.cmp(&b.rule)));
        g.invariants.truncate(STATS_PATHS);
        g.methods
            .sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.method.cmp(&b.method)));
    }
}

/// The session list's verdict filter over `sessions s` (Note \[Outcomes of
/// a run\]); an unknown outcome matches nothing.
pub(super) fn verdict_sql(store: &dyn Source, verdict: &str) -> String {
    if !has_verdict(store) {
        return if verdict == "unchecked" {
            "1 = 1"
        } else {
            "1 = 0"
        }
        .to_owned();
    }
    let (valid, invalid) = if is_pg(store) {
        (
            "(s.verdict::jsonb ->> 'valid') = 'true'",
            "(s.verdict::jsonb ->> 'valid') = 'false'",
        )
    } else {
        (
            "json_extract(s.verdict, '$.valid') = 1",
            "json_extract(s.verdict, '$.valid') = 0",
        )
    };
    let none = "(s.extraction_method IS NULL OR s.extraction_method IN ('none', 'handoff'))";
    match verdict {
        "valid" => format!("(s.verdict IS NOT NULL AND {valid})"),
        "invalid" => format!("(s.verdict IS NOT NULL AND {invalid} AND NOT {none})"),
        "none" => format!("(s.verdict IS NOT NULL AND {invalid} AND {none})"),
        "unchecked" => "s.verdict IS NULL".to_owned(),
        _ => "1 = 0".to_owned(),
    }
}

/// Two columns over `sessions s` for a list row: the final verdict's
/// `valid` as 1 or 0 (NULL without a verdict) and its first error's
/// `instance_path`.
pub(super) fn verdict_columns(store: &dyn Source) -> &'static str {
    if !has_verdict(store) {
        "NULL, NULL"
    } else if is_pg(store) {
        "CASE WHEN s.verdict IS NULL THEN NULL
              WHEN (s.verdict::jsonb ->> 'valid') = 'true' THEN 1 ELSE 0 END,
         CASE WHEN jsonb_typeof(s.verdict::jsonb -> 'errors') = 'array'
              THEN s.verdict::jsonb -> 'errors' -> 0 ->> 'instance_path' END"
    } else {
        "CASE WHEN s.verdict IS NULL THEN NULL
              WHEN json_extract(s.verdict, '$.valid') = 1 THEN 1 ELSE 0 END,
         CASE WHEN json_type(s.verdict, '$.errors') = 'array'
              THEN json_extract(s.verdict, '$.errors[0].instance_path') END"
    }
}

/// The session list's failing-path filter over `sessions s`, the path
/// bound as `param`: an error at it in the verdict or in a blocked hook
/// call of the main agent. No index: the list's walk checks each session
/// it meets (a rare path reads the whole list).
pub(super) fn failing_path_sql(store: &dyn Source, param: &str) -> String {
    if !has_verdict(store) {
        return "1 = 0".to_owned();
    }
    let (verdict, hooks) = if is_pg(store) {
        (
            format!(
                "EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN
                   jsonb_typeof(s.verdict::jsonb -> 'errors') = 'array'
                   THEN s.verdict::jsonb -> 'errors' ELSE '[]'::jsonb END) AS e(value)
                 WHERE e.value ->> 'instance_path' = {param})"
            ),
            format!(
                "EXISTS (SELECT 1 FROM hook_calls h, jsonb_array_elements(CASE WHEN
                   jsonb_typeof(h.errors::jsonb) = 'array' THEN h.errors::jsonb
                   ELSE '[]'::jsonb END) AS e(value)
                 WHERE h.session_id = s.id AND h.verdict = 'blocked' AND h.agent_id IS NULL
                   AND e.value ->> 'instance_path' = {param})"
            ),
        )
    } else {
        (
            format!(
                "EXISTS (SELECT 1 FROM json_each(s.verdict, '$.errors') e
                 WHERE json_extract(e.value, '$.instance_path') = {param})"
            ),
            format!(
                "EXISTS (SELECT 1 FROM hook_calls h, json_each(h.errors) e
                 WHERE h.session_id = s.id AND h.verdict = 'blocked' AND h.agent_id IS NULL
                   AND json_valid(h.errors) AND json_extract(e.value, '$.instance_path') = {param})"
            ),
        )
    };
    if has_hooks(store) {
        format!("({verdict} OR {hooks})")
    } else {
        verdict
    }
}
