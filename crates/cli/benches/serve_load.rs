//! `agentshape serve` under load (issue 9, "Tests and numbers"): a benchmark
//! that prints figures, not a test that asserts on speed.
//!
//! 1. **Live feed.** `serve` on a temporary store, `--clients` (200) SSE
//!    connections on `/api/feed`, then a real `agentshape run --profile
//!    claude-ops` whose agent is this program (`--fake-agent`): it prints
//!    `--lines` (500) stream-json assistant lines every `--pace-ms` (5) ms,
//!    each text carrying its sequence number and its send time (ns since the
//!    epoch). Every client must get every line once, in order (by feed id and
//!    by sequence number); the latency agent line → client arrival is
//!    reported as p50/p90/p99/max over all clients × lines, with the CPU
//!    `serve` used (from `/proc`), idle and during the run.
//! 2. **Sessions list at scale.** A store filled with `--sessions` (100,000)
//!    sessions of mixed status, tier, profile, method and error category in
//!    one transaction; `GET` each URL of [`LIST_URLS`] (JSON and HTML)
//!    `--requests` (50) times, p50/p99/max.
//!
//! 3. **Clients that never read** (issue 27). A feed of `--stalled-rows`
//!    (1,000) rows of `--row-kib` (64) KiB written before `serve` starts,
//!    then `--stalled` (300) connections that send `GET /api/feed?after=0`,
//!    read the status line and nothing more, held for `--hold-secs` (5) s.
//!    Reports how many got 200 and how many 503 (the feed cap), `serve`'s
//!    peak resident memory (`VmHWM`; the goal is under 300 MB) and the
//!    latency of `GET /api/sessions` and `GET /` meanwhile (the goal is
//!    under 100 ms). A safety stop: past [`RSS_CEILING_KIB`] the scenario
//!    stops connecting and says so, so a regression cannot take the machine.
//!    `--serve-arg A` passes `A` to `serve` (repeatable), e.g.
//!    `--serve-arg=--max-feed-clients=1000`.
//!
//! Run with `scripts/bench-serve.sh` (release build) or
//! `cargo bench -p agentshape --bench serve_load -- --clients 50`.
//! `--skip-feed` / `--skip-list` / `--skip-stalled` skip one part;
//! `--only-stalled` runs the third alone.

// A benchmark program: it prints its table, and a failed set-up is a panic
// with its message, like a test.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_possible_wrap,
    clippy::too_many_lines
)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The session-list URLs timed at scale: `{deep}` is replaced by the id of a
/// session about 90% of the way down the list (a deep keyset page). Filters
/// the server does not know yet are ignored by it; add rows freely.
const LIST_URLS: &[(&str, &str)] = &[
    ("first page", "/api/sessions"),
    ("first page, 200 rows", "/api/sessions?limit=200"),
    ("deep page (before=)", "/api/sessions?before={deep}"),
    ("status=error", "/api/sessions?status=error"),
    ("status=running (lost)", "/api/sessions?status=lost"),
    ("tier=3", "/api/sessions?tier=3"),
    ("profile=code-review", "/api/sessions?profile=code-review"),
    (
        "error_category=rate_limit",
        "/api/sessions?error_category=rate_limit",
    ),
    ("method=repaired", "/api/sessions?method=repaired"),
    ("q=gateway", "/api/sessions?q=gateway"),
    (
        "status+tier+profile, deep",
        "/api/sessions?status=error&tier=2&profile=claude-ops&before={deep}",
    ),
    ("HTML first page", "/sessions"),
    ("HTML deep page", "/sessions?before={deep}"),
    ("HTML status=error", "/sessions?status=error"),
    (
        "HTML tier+error_category",
        "/sessions?tier=2&error_category=auth",
    ),
    ("HTML q=gateway", "/sessions?q=gateway"),
];

#[derive(Debug, Clone)]
struct Opts {
    clients: usize,
    lines: usize,
    pace_ms: u64,
    sessions: usize,
    requests: usize,
    skip_feed: bool,
    skip_list: bool,
    skip_stalled: bool,
    stalled: usize,
    stalled_rows: usize,
    row_kib: usize,
    hold_secs: u64,
    serve_args: Vec<String>,
}

/// The options; `lenient` ignores unknown arguments (the fake agent gets
/// the flags `run` adds for a Claude agent, such as `--output-format`).
fn parse_args(args: &[String], lenient: bool) -> Opts {
    let mut o = Opts {
        clients: 200,
        lines: 500,
        pace_ms: 5,
        sessions: 100_000,
        requests: 50,
        skip_feed: false,
        skip_list: false,
        skip_stalled: false,
        stalled: 300,
        stalled_rows: 1000,
        row_kib: 64,
        hold_secs: 5,
        serve_args: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut num = |name: &str| -> usize {
            it.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{name} needs a number"))
        };
        match a.as_str() {
            "--clients" => o.clients = num("--clients").max(1),
            "--lines" => o.lines = num("--lines").max(1),
            "--pace-ms" => o.pace_ms = num("--pace-ms") as u64,
            "--sessions" => o.sessions = num("--sessions").max(1),
            "--requests" => o.requests = num("--requests").max(1),
            "--skip-feed" => o.skip_feed = true,
            "--skip-list" => o.skip_list = true,
            "--skip-stalled" => o.skip_stalled = true,
            "--only-stalled" => (o.skip_feed, o.skip_list) = (true, true),
            "--stalled" => o.stalled = num("--stalled").max(1),
            "--stalled-rows" => o.stalled_rows = num("--stalled-rows").max(1),
            "--row-kib" => o.row_kib = num("--row-kib").max(1),
            "--hold-secs" => o.hold_secs = num("--hold-secs") as u64,
            "--serve-arg" => o
                .serve_args
                .push(it.next().expect("--serve-arg needs a value").clone()),
            a if a.starts_with("--serve-arg=") => {
                o.serve_args.push(a["--serve-arg=".len()..].to_owned());
            }
            // Passed by `cargo bench`.
            "--bench" => {}
            _ if lenient => {}
            other => panic!("unknown argument `{other}`"),
        }
    }
    o
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--fake-agent") {
        fake_agent(&parse_args(&args[1..], true));
        return;
    }
    let opts = parse_args(&args, false);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    if !opts.skip_feed {
        rt.block_on(feed_bench(&opts));
    }
    if !opts.skip_list {
        rt.block_on(list_bench(&opts));
    }
    if !opts.skip_stalled {
        rt.block_on(stalled_bench(&opts));
    }
}

fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// The agent: stream-json assistant lines on a steady schedule, then a result.
fn fake_agent(o: &Opts) {
    let out = std::io::stdout();
    let mut out = out.lock();
    let start = Instant::now();
    let pace = Duration::from_millis(o.pace_ms);
    for seq in 0..o.lines {
        // An absolute schedule: a late line does not delay the next ones.
        let at = start + pace * u32::try_from(seq).unwrap_or(u32::MAX);
        if let Some(d) = at.checked_duration_since(Instant::now()) {
            std::thread::sleep(d);
        }
        let line = format!(
            r#"{{"type":"assistant","message":{{"role":"assistant","content":[{{"type":"text","text":"load seq={seq} t={}"}}]}}}}"#,
            now_ns()
        );
        out.write_all(line.as_bytes()).unwrap();
        out.write_all(b"\n").unwrap();
        out.flush().unwrap();
    }
    let result = r#"{"type":"result","subtype":"success","is_error":false,"duration_ms":1,"num_turns":1,"result":"{\"status\":\"healthy\",\"summary\":\"load test\"}"}"#;
    out.write_all(result.as_bytes()).unwrap();
    out.write_all(b"\n").unwrap();
    out.flush().unwrap();
}

/// A running `serve`, killed when dropped.
struct Server {
    child: Child,
    addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(db: &Path) -> Server {
    serve_with(db, &[])
}

fn serve_with(db: &Path, extra: &[String]) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentshape"))
        .args(["serve", "--addr", "127.0.0.1:0", "--store"])
        .arg(db)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("agentshape serve starts");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let addr = loop {
        let line = lines.next().expect("serve ended before listening").unwrap();
        if let Some(url) = line.split("listening on ").nth(1) {
            break url.trim().trim_start_matches("http://").to_owned();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    Server { child, addr }
}

/// CPU seconds (user + system) a process has used so far, from `/proc`.
fn cpu_secs(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the `(comm)`, which may hold spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    // USER_HZ is 100 on Linux.
    Some(ticks / 100.0)
}

/// Resident memory of a process in KiB, from `/proc`.
fn rss_kib(pid: u32) -> Option<u64> {
    status_kib(pid, "VmRSS:")
}

/// A `/proc/PID/status` figure in KiB (`VmRSS:`, `VmHWM:` the peak).
fn status_kib(pid: u32, key: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// What one SSE client saw of the run's lines.
#[derive(Debug, Default)]
struct Seen {
    /// (feed id, sequence number, latency ns) per `event` row.
    lines: Vec<(i64, u64, u64)>,
    /// Feed ids of every row, in arrival order.
    ids: Vec<i64>,
    ended: bool,
    error: Option<String>,
}

/// The number after `key` in `s`.
fn number_after(s: &str, key: &str) -> Option<u128> {
    let at = s.find(key)? + key.len();
    let digits: &str = &s[at..];
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits[..end].parse().ok()
}

/// One SSE client: HTTP/1.0 so the body is the bytes until close (no
/// chunked framing to undo). `ready` is told once the headers are in.
async fn sse_client(addr: String, ready: tokio::sync::mpsc::Sender<()>) -> Seen {
    let mut seen = Seen::default();
    let Ok(mut s) = TcpStream::connect(&addr).await else {
        seen.error = Some("connect failed".into());
        return seen;
    };
    let _ = s.set_nodelay(true);
    let req = format!(
        "GET /api/feed?after=0 HTTP/1.0\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\r\n"
    );
    if s.write_all(req.as_bytes()).await.is_err() {
        seen.error = Some("write failed".into());
        return seen;
    }
    let mut buf: Vec<u8> = Vec::with_capacity(64 * 1024);
    let mut chunk = vec![0u8; 64 * 1024];
    let mut headers_done = false;
    loop {
        let n = match tokio::time::timeout(Duration::from_secs(120), s.read(&mut chunk)).await {
            Ok(Ok(0)) => {
                seen.error = Some("closed".into());
                return seen;
            }
            Ok(Ok(n)) => n,
            Ok(Err(e)) => {
                seen.error = Some(e.to_string());
                return seen;
            }
            Err(_) => {
                seen.error = Some("timed out".into());
                return seen;
            }
        };
        let arrived = now_ns();
        buf.extend_from_slice(&chunk[..n]);
        if !headers_done {
            let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
                continue;
            };
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            if !head.starts_with("HTTP/1.0 200") && !head.starts_with("HTTP/1.1 200") {
                seen.error = Some(head);
                return seen;
            }
            buf.drain(..end + 4);
            headers_done = true;
            let _ = ready.send(()).await;
        }
        while let Some(end) = buf.windows(2).position(|w| w == b"\n\n") {
            let frame: Vec<u8> = buf.drain(..end + 2).collect();
            let frame = String::from_utf8_lossy(&frame);
            let (mut id, mut kind, mut data) = (None, "", "");
            for line in frame.lines() {
                if let Some(v) = line.strip_prefix("id:") {
                    id = v.trim().parse::<i64>().ok();
                } else if let Some(v) = line.strip_prefix("event:") {
                    kind = v.trim();
                } else if let Some(v) = line.strip_prefix("data:") {
                    data = v;
                }
            }
            let Some(id) = id else { continue };
            seen.ids.push(id);
            match kind {
                "event" => {
                    if let (Some(seq), Some(sent)) =
                        (number_after(data, "seq="), number_after(data, " t="))
                    {
                        let lat = arrived.saturating_sub(sent) as u64;
                        seen.lines.push((id, seq as u64, lat));
                    }
                }
                "ended" => {
                    seen.ended = true;
                    return seen;
                }
                _ => {}
            }
        }
    }
}

/// The `p`-th percentile (0..=1) of sorted values.
fn pct(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

async fn feed_bench(o: &Opts) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("load.db");
    let server = serve(&db);
    let pid = server.child.id();
    println!(
        "## live feed: {} SSE clients, {} lines every {} ms",
        o.clients, o.lines, o.pace_ms
    );
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::channel(o.clients);
    let mut clients = Vec::new();
    for _ in 0..o.clients {
        clients.push(tokio::spawn(sse_client(
            server.addr.clone(),
            ready_tx.clone(),
        )));
    }
    drop(ready_tx);
    let mut connected = 0;
    while connected < o.clients {
        match tokio::time::timeout(Duration::from_secs(60), ready_rx.recv()).await {
            Ok(Some(())) => connected += 1,
            _ => break,
        }
    }
    println!("connected: {connected}/{}", o.clients);
    // Idle cost: every client connected, nothing written.
    let idle_cpu0 = cpu_secs(pid);
    // Long enough for /proc's 10 ms ticks to mean something.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let idle_cpu = idle_cpu0.zip(cpu_secs(pid)).map(|(a, b)| (b - a) / 5.0);
    let cpu0 = cpu_secs(pid);
    let started = Instant::now();
    let me = std::env::current_exe().unwrap();
    let status = tokio::process::Command::new(env!("CARGO_BIN_EXE_agentshape"))
        .args([
            "run",
            "--profile",
            "claude-ops",
            "--session-id",
            "load-1",
            "--store",
        ])
        .arg(&db)
        .arg("--log-dir")
        .arg(dir.path().join("logs"))
        .arg("--")
        .arg(&me)
        .args([
            "--fake-agent",
            "--lines",
            &o.lines.to_string(),
            "--pace-ms",
            &o.pace_ms.to_string(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .await
        .unwrap();
    let mut seen = Vec::new();
    for c in clients {
        seen.push(c.await.unwrap());
    }
    let wall = started.elapsed().as_secs_f64();
    let run_cpu = cpu0.zip(cpu_secs(pid)).map(|(a, b)| b - a);
    let rss = rss_kib(pid);

    // Every client: every line once, in order, by sequence number, and
    // exactly the session's feed ids as the store holds them.
    let want: Vec<u64> = (0..o.lines as u64).collect();
    let stored: Vec<i64> = {
        let c = rusqlite::Connection::open(&db).unwrap();
        let mut stmt = c
            .prepare("SELECT id FROM feed WHERE session_id = 'load-1' ORDER BY id")
            .unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    };
    let mut complete = 0;
    let mut problems = Vec::new();
    let mut lat: Vec<u64> = Vec::with_capacity(o.clients * o.lines);
    for (i, s) in seen.iter().enumerate() {
        let seqs: Vec<u64> = s.lines.iter().map(|l| l.1).collect();
        let ordered = s.ids == stored;
        if seqs == want && ordered && s.ended && s.error.is_none() {
            complete += 1;
        } else if problems.len() < 5 {
            problems.push(format!(
                "client {i}: {} of {} lines, feed ids as stored: {ordered}, ended: {}, error: {:?}",
                seqs.len(),
                o.lines,
                s.ended,
                s.error
            ));
        }
        lat.extend(s.lines.iter().map(|l| l.2));
    }
    lat.sort_unstable();
    println!("run exit: {status}; wall {wall:.2} s");
    println!(
        "clients with every line once, in order: {complete}/{}",
        o.clients
    );
    for p in &problems {
        println!("  {p}");
    }
    println!("| latency agent line → client | ms |");
    println!("|---|---|");
    for (name, p) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99)] {
        println!("| {name} | {:.2} |", ms(pct(&lat, p)));
    }
    println!("| max | {:.2} |", ms(lat.last().copied().unwrap_or(0)));
    println!("| samples | {} |", lat.len());
    if let Some(c) = idle_cpu {
        println!(
            "serve CPU idle with {} clients: {:.1}%",
            o.clients,
            c * 100.0
        );
    }
    if let Some(c) = run_cpu {
        println!(
            "serve CPU during the run: {c:.2} s over {wall:.2} s ({:.0}% of one core)",
            c / wall * 100.0
        );
    }
    if let Some(r) = rss {
        println!("serve RSS after the run: {:.1} MiB", r as f64 / 1024.0);
    }
    drop(server);
}

/// A small deterministic generator for the mix of sessions.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<'a>(&mut self, weighted: &[(&'a str, u64)]) -> &'a str {
        let total: u64 = weighted.iter().map(|w| w.1).sum();
        let mut r = self.next() % total;
        for (v, w) in weighted {
            if r < *w {
                return v;
            }
            r -= w;
        }
        weighted[0].0
    }
}

/// `n` sessions, one transaction, through the store's own migrations.
fn fill(db: &Path, n: usize) {
    drop(agentshape_store::SqliteStore::open(db).unwrap());
    let mut c = rusqlite::Connection::open(db).unwrap();
    let tx = c.transaction().unwrap();
    {
        let mut ins = tx
            .prepare(
                "INSERT INTO sessions (id, parent_id, tier, profile, agent, model, status,
                 exit_code, started_at, ended_at, cost_usd, duration_ms, num_turns,
                 input_tokens, output_tokens, extraction_method, error, error_category,
                 summary, raw_log_path, heartbeat_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,
                 ?16, ?17, ?18, ?19, ?20, ?21)",
            )
            .unwrap();
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let t0 = agentshape_store::time::now_ms() - (n as i64) * 30_000;
        let services = [
            "api-gateway",
            "postgres-primary",
            "redis-cache",
            "billing",
            "auth",
        ];
        for i in 0..n {
            let id = format!("s-{i:06}");
            let status = rng.pick(&[
                ("completed", 70),
                ("error", 12),
                ("failed", 8),
                ("timeout", 3),
                ("interrupted", 3),
                ("not_found", 1),
                ("running", 3),
            ]);
            let tier: i64 = match rng.next() % 20 {
                0 => 3,
                1..=3 => 2,
                _ => 1,
            };
            let parent = (tier > 1 && i > 0).then(|| format!("s-{:06}", i - 1));
            let profile = rng.pick(&[
                ("claude-ops", 60),
                ("claude-loop", 20),
                ("code-review", 15),
                ("custom", 5),
            ]);
            let agent = rng.pick(&[("claude", 80), ("codex", 20)]);
            let method = rng.pick(&[
                ("structured", 60),
                ("fenced", 15),
                ("bare", 8),
                ("repaired", 7),
                ("markers", 5),
                ("none", 5),
            ]);
            let (error, category) = if status == "error" {
                let cat = rng.pick(&[
                    ("rate_limit", 30),
                    ("auth", 10),
                    ("api", 30),
                    ("max_turns", 15),
                    ("budget", 5),
                    ("bad_response", 10),
                ]);
                (Some(format!("{cat}: the provider said no")), Some(cat))
            } else {
                (None, None)
            };
            let service = services[(rng.next() % services.len() as u64) as usize];
            let summary = format!(
                "Checked {} services; {service} {}",
                3 + rng.next() % 5,
                if rng.next() % 4 == 0 {
                    "degraded (p99 1.2 s)"
                } else {
                    "healthy"
                }
            );
            let started = t0 + (i as i64) * 30_000;
            let started_at = agentshape_store::time::format_ms(started);
            let running = status == "running";
            let ended_at = (!running).then(|| agentshape_store::time::format_ms(started + 20_000));
            ins.execute(rusqlite::params![
                id,
                parent,
                tier,
                profile,
                agent,
                "claude-sonnet-4-5",
                status,
                (!running).then_some(i64::from(status != "completed")),
                started_at,
                ended_at,
                (rng.next() % 1000) as f64 / 10_000.0,
                20_000,
                1 + (rng.next() % 12) as i64,
                (rng.next() % 20_000) as i64,
                (rng.next() % 2_000) as i64,
                (!running).then_some(method),
                error,
                category,
                summary,
                format!("logs/{id}.ndjson"),
                running.then(|| started_at.clone()),
            ])
            .unwrap();
        }
    }
    tx.commit().unwrap();
}

async fn list_bench(o: &Opts) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("list.db");
    let t = Instant::now();
    fill(&db, o.sessions);
    println!(
        "\n## sessions list: {} sessions (filled in {:.1} s), {} requests per URL",
        o.sessions,
        t.elapsed().as_secs_f64(),
        o.requests
    );
    let server = serve(&db);
    let deep = format!("s-{:06}", o.sessions / 10);
    let client = reqwest::Client::new();
    let base = format!("http://{}", server.addr);
    println!("| URL | status | bytes | p50 ms | p99 ms | max ms |");
    println!("|---|---|---|---|---|---|");
    for (name, path) in LIST_URLS {
        let url = format!("{base}{}", path.replace("{deep}", &deep));
        let mut times = Vec::with_capacity(o.requests);
        let mut status = 0;
        let mut bytes = 0;
        // One request to warm the page cache, not counted.
        if let Ok(r) = client.get(&url).send().await {
            let _ = r.bytes().await;
        }
        for _ in 0..o.requests {
            let t = Instant::now();
            let r = client.get(&url).send().await.unwrap();
            status = r.status().as_u16();
            bytes = r.bytes().await.unwrap().len();
            times.push(t.elapsed().as_nanos() as u64);
        }
        times.sort_unstable();
        println!(
            "| {name}: `{path}` | {status} | {bytes} | {:.1} | {:.1} | {:.1} |",
            ms(pct(&times, 0.5)),
            ms(pct(&times, 0.99)),
            ms(*times.last().unwrap_or(&0))
        );
    }
    drop(server);
}

/// The stalled-clients scenario stops connecting once `serve` holds this
/// much (2 GiB): what the scenario measures is far below, and a regression
/// must not take the machine with it.
const RSS_CEILING_KIB: u64 = 2 * 1024 * 1024;

/// `n` feed rows of about `kib` KiB each, through the store's own API.
fn fill_feed(db: &Path, n: usize, kib: usize) {
    let mut store = agentshape_store::SqliteStore::open(db).unwrap();
    let pad = "x".repeat(kib * 1024 - 32);
    let entries: Vec<agentshape_store::FeedEntry> = (0..n)
        .map(|i| agentshape_store::FeedEntry {
            seq: None,
            session_id: "stalled-1".into(),
            kind: "event".into(),
            body: format!(r#"{{"n":{i},"pad":"{pad}"}}"#),
            created_at: "2025-07-14T03:12:00.000Z".into(),
        })
        .collect();
    for chunk in entries.chunks(100) {
        agentshape_store::Store::append_feed(&mut store, chunk).unwrap();
    }
}

/// Open the feed and read its status code (the first 12 bytes,
/// `HTTP/1.1 200`), then nothing more: the stream is returned to be held.
async fn stalled_client(addr: &str) -> (Option<TcpStream>, u16) {
    let Ok(mut s) = TcpStream::connect(addr).await else {
        return (None, 0);
    };
    let req = format!("GET /api/feed?after=0 HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    if s.write_all(req.as_bytes()).await.is_err() {
        return (None, 0);
    }
    let mut line = [0u8; 12];
    let read = tokio::time::timeout(Duration::from_secs(30), s.read_exact(&mut line)).await;
    let status = match read {
        Ok(Ok(_)) => std::str::from_utf8(&line[9..12])
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(0),
        _ => 0,
    };
    (Some(s), status)
}

/// Time `GET url` `n` times (a new connection each, like a browser tab).
async fn time_gets(client: &reqwest::Client, url: &str, n: usize) -> (Vec<u64>, u16) {
    let mut times = Vec::with_capacity(n);
    let mut status = 0;
    for _ in 0..n {
        let t = Instant::now();
        match client.get(url).send().await {
            Ok(r) => {
                status = r.status().as_u16();
                let _ = r.bytes().await;
            }
            Err(_) => status = 0,
        }
        times.push(t.elapsed().as_nanos() as u64);
    }
    times.sort_unstable();
    (times, status)
}

async fn stalled_bench(o: &Opts) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("stalled.db");
    let t = Instant::now();
    fill_feed(&db, o.stalled_rows, o.row_kib);
    println!(
        "\n## clients that never read: {} connections on a feed of {} rows of {} KiB (filled in {:.1} s), held {} s; serve {}",
        o.stalled,
        o.stalled_rows,
        o.row_kib,
        t.elapsed().as_secs_f64(),
        o.hold_secs,
        if o.serve_args.is_empty() {
            "with its defaults".to_owned()
        } else {
            o.serve_args.join(" ")
        }
    );
    let server = serve_with(&db, &o.serve_args);
    let pid = server.child.id();
    let base = format!("http://{}", server.addr);
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let (idle, _) = time_gets(&client, &format!("{base}/api/sessions"), 20).await;
    let rss0 = rss_kib(pid).unwrap_or(0);
    let mut held = Vec::new();
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    let mut stopped = None;
    let connect = Instant::now();
    for i in 0..o.stalled {
        let (s, status) = stalled_client(&server.addr).await;
        *statuses.entry(status).or_default() += 1;
        held.extend(s);
        if rss_kib(pid).unwrap_or(0) > RSS_CEILING_KIB {
            stopped = Some(i + 1);
            break;
        }
    }
    let connect_secs = connect.elapsed().as_secs_f64();
    // While they are held: normal requests, and the peak memory.
    let until = Instant::now() + Duration::from_secs(o.hold_secs);
    let mut api = Vec::new();
    let mut page = Vec::new();
    let (mut api_status, mut page_status);
    // At least one round, even when the ceiling stopped the connecting.
    loop {
        let (t, s) = time_gets(&client, &format!("{base}/api/sessions"), 5).await;
        api.extend(t);
        api_status = s;
        let (t, s) = time_gets(&client, &format!("{base}/"), 5).await;
        page.extend(t);
        page_status = s;
        if rss_kib(pid).unwrap_or(0) > RSS_CEILING_KIB {
            stopped = stopped.or(Some(held.len()));
        }
        if stopped.is_some() || Instant::now() >= until {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    api.sort_unstable();
    page.sort_unstable();
    let rss = rss_kib(pid).unwrap_or(0);
    let peak = status_kib(pid, "VmHWM:").unwrap_or(0);
    let got: Vec<String> = statuses
        .iter()
        .map(|(code, n)| {
            format!(
                "{n} × {}",
                if *code == 0 {
                    "no answer".to_owned()
                } else {
                    code.to_string()
                }
            )
        })
        .collect();
    println!(
        "connections: {} ({}), opened in {connect_secs:.1} s",
        held.len(),
        got.join(", ")
    );
    if let Some(n) = stopped {
        println!(
            "**stopped early**: serve passed {} MiB with {n} clients connected",
            RSS_CEILING_KIB / 1024
        );
    }
    println!("| measure | value |");
    println!("|---|---|");
    println!(
        "| serve RSS before the clients | {:.1} MiB |",
        rss0 as f64 / 1024.0
    );
    println!(
        "| serve RSS with them held | {:.1} MiB |",
        rss as f64 / 1024.0
    );
    println!(
        "| serve peak RSS (VmHWM) | **{:.1} MiB** |",
        peak as f64 / 1024.0
    );
    println!(
        "| `GET /api/sessions` before: p50 / p99 / max | {:.1} / {:.1} / {:.1} ms |",
        ms(pct(&idle, 0.5)),
        ms(pct(&idle, 0.99)),
        ms(*idle.last().unwrap_or(&0))
    );
    for (name, times, status) in [
        ("`GET /api/sessions`", &api, api_status),
        ("`GET /` (overview page)", &page, page_status),
    ] {
        println!(
            "| {name} meanwhile ({} requests, status {status}): p50 / p99 / max | {:.1} / {:.1} / **{:.1}** ms |",
            times.len(),
            ms(pct(times, 0.5)),
            ms(pct(times, 0.99)),
            ms(*times.last().unwrap_or(&0))
        );
    }
    drop(held);
    drop(server);
}
