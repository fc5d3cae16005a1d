//! Line-to-hub latency: a real child process prints Claude `assistant` lines
//! carrying the wall-clock nanoseconds at which each was produced; a hub
//! subscriber measures how long after that the decoded `Text` event arrived.
//! This includes the pipe and the forensic write + flush + decode + publish.
//! The producer stamps each line just before printing it (a `date` call in a
//! shell loop), so the figure is an upper bound on what agentshape adds.
#![allow(clippy::unwrap_used, missing_docs, clippy::print_stdout)] // a bench binary
// Percentile indexes and nanosecond counts are small, non-negative numbers.
#![allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use agentshape_core::Event;
use agentshape_runtime::hub::{Hub, HubBody};
use agentshape_runtime::process::{AgentCommand, ProcessOptions, Source};
use agentshape_runtime::runner::{AgentKind, SessionSpec, run_session};

fn main() {
    let lines = 2000;
    let script = format!(
        "i=0; while [ $i -lt {lines} ]; do t=$(date +%s%N); printf '{{\"type\":\"assistant\",\"message\":{{\"content\":[{{\"type\":\"text\",\"text\":\"%s\"}}]}}}}\\n' $t; i=$((i+1)); sleep 0.001; done"
    );
    let dir = tempfile::tempdir().unwrap();
    let spec = SessionSpec {
        id: "latency".into(),
        parent_id: None,
        tier: 1,
        profile: None,
        validator: None,
        markers: None,
        methods: agentshape_core::extract::Methods::default(),
        coerce: false,
        agent: AgentKind::Claude,
        model: None,
        source: Source::Spawn(AgentCommand {
            program: "sh".into(),
            args: vec!["-c".into(), script],
            env: Vec::new(),
            pass_env: Vec::new(),
            stdin: None,
        }),
        log_dir: dir.path().to_owned(),
        timeout: Some(Duration::from_secs(120)),
        partial: false,
        handoff: Vec::new(),
        escalated_for: Vec::new(),
        process: ProcessOptions::default(),
        feed: agentshape_runtime::feed::FeedOptions::default(),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut lat: Vec<f64> = rt.block_on(async {
        let hub = Hub::default();
        let mut rx = hub.subscribe();
        let collector = tokio::spawn(async move {
            let mut out = Vec::new();
            while let Ok(msg) = rx.recv().await {
                if let HubBody::Event {
                    event: Event::Text { text },
                } = &msg.body
                {
                    let now = SystemTime::now()
                        .duration_since(UNIX_EPOCH)
                        .unwrap()
                        .as_nanos();
                    if let Ok(t) = text.parse::<u128>() {
                        out.push((now.saturating_sub(t)) as f64 / 1000.0);
                    }
                }
            }
            out
        });
        run_session(&spec, None, &hub).await.unwrap();
        drop(hub);
        collector.await.unwrap()
    });
    lat.sort_by(f64::total_cmp);
    let pct = |p: f64| lat[((lat.len() as f64 - 1.0) * p) as usize];
    println!(
        "line-to-hub latency over {} lines: median {:.1} us, p99 {:.1} us, max {:.1} us",
        lat.len(),
        pct(0.5),
        pct(0.99),
        pct(1.0)
    );
}
