//! `agentshape ops`: the tiered supervisor (seed 000).

use std::time::Duration;

use agentshape_runtime::hub::Hub;
use agentshape_runtime::ops::{
    CycleLease, OpsConfig, OpsReport, Supervisor, holder_id, lease_name,
};
use agentshape_runtime::process::ProcessOptions;
use agentshape_store::StoreUrl;

use crate::args::OpsArgs;
use crate::commands::run::{listen, runner_error, runtime, session_exit};
use crate::exit::{CliError, Exit};
use crate::output::{Out, clean, eprint};

/// Run `ops`.
///
/// # Errors
/// A bad config (exit 64), or log, spawn or store failures.
pub fn run(args: &OpsArgs) -> anyhow::Result<Exit> {
    // A bad rules file stops `ops` before anything starts.
    let rules = args
        .alerts
        .as_deref()
        .map(super::alerts::load)
        .transpose()?;
    // Missing is 66; a FIFO, folder, device or a file over 16 MiB is a bad
    // config, 64 (input's Note [Inputs are files]).
    let config = OpsConfig::load(&args.config).map_err(|e| match e {
        agentshape_runtime::Error::Input { what, source } => crate::input::refused(what, source),
        e => CliError::Usage(e.to_string()),
    })?;
    // See Note [Store locations]: the flag, else the config's `store`, else
    // AGENTSHAPE_STORE, else agentshape.db.
    let url = match (&args.store, &config.store) {
        (Some(flag), _) => StoreUrl::parse(flag)?,
        (None, Some(configured)) => StoreUrl::parse(configured)?,
        (None, None) => StoreUrl::resolve(None)?,
    };
    let mut store = url.open()?;
    crate::mask::use_store_key(store.mask_key());
    let alerts = match rules {
        Some(r) => Some(super::alerts::start(r, &url)?),
        None => None,
    };
    // Note [Supervisor leases] in the runtime: the lease is renewed through
    // a second handle while the cycle's own runs sessions.
    let lease_url = url.clone();
    let lease = CycleLease {
        name: lease_name(&config),
        holder: holder_id(),
        open: Box::new(move || lease_url.open()),
    };
    let mut out = Out::new(args.output);
    let rt = runtime()?;
    // Runtime `process`'s Note [Interrupts]: a signal reaches the running
    // agent, ends its session as `interrupted`, and ends `ops` (128 + N).
    let mut interrupts = listen(&rt)?;
    let hub = Hub::default();
    let sup = Supervisor {
        config: &config,
        dry_run: args.dry_run,
        hub: &hub,
        process: ProcessOptions {
            interrupts: Some(interrupts.clone()),
            ..ProcessOptions::default()
        },
        feed: crate::commands::run::feed_options(),
        lease: Some(lease),
    };
    let mut exit = Exit::Ok;
    // Note [Live export never fails a run] in `otel`.
    let live = crate::otel::Live::start(&args.otlp, crate::otel::FINISH, 1)?;
    rt.block_on(async {
        let folds = live
            .as_ref()
            .map(|l| crate::otel::Folds::spawn(&hub, l.content).0);
        loop {
            let mut failed: Option<std::io::Error> = None;
            let mut print = |r: &OpsReport<'_>| {
                if let OpsReport::LeaseBusy {
                    name,
                    holder,
                    expires_at,
                } = r
                {
                    // Not a result: stderr only, so `--json` stdout keeps its shape.
                    eprint(&format!(
                        "agentshape ops: waiting for the lease `{}` held by {} (lapses at {expires_at} unless renewed)",
                        clean(name),
                        clean(holder)
                    ));
                    return;
                }
                let res = if out.json {
                    out.json_line(r)
                } else {
                    out.line(&human(r))
                };
                if let Err(e) = res.and_then(|()| out.flush()) {
                    failed.get_or_insert(e);
                }
            };
            let sessions = sup
                .cycle(&mut *store, &mut print)
                .await
                .map_err(runner_error)?;
            if let Some(e) = failed {
                return Err(anyhow::Error::from(e));
            }
            for s in &sessions {
                exit = exit.worst(session_exit(s));
                if let Some(l) = &live {
                    l.send(&crate::otel::finished_trace(
                        Some(&url),
                        folds.as_ref(),
                        s,
                        l.content,
                    ));
                }
            }
            if args.once || interrupts.first().is_some() {
                return Ok(());
            }
            eprint(&format!(
                "agentshape ops: next cycle in {} s",
                config.interval_secs
            ));
            tokio::select! {
                () = tokio::time::sleep(Duration::from_secs(config.interval_secs)) => {}
                _ = interrupts.recv() => return Ok(()),
            }
        }
    })?;
    // What the last cycle made fire is sent before `ops` ends.
    if let Some(a) = alerts {
        a.finish();
    }
    if let Some(l) = live {
        let r = l.finish(crate::otel::FINISH);
        if out.json {
            out.json_line(&serde_json::json!({ "otlp": crate::otel::report_json(&r) }))?;
        } else {
            out.line(&crate::otel::report_line(&r))?;
        }
        out.flush()?;
    }
    if let Some(sig) = interrupts.first() {
        return Ok(Exit::interrupted(sig));
    }
    Ok(exit)
}

fn human(r: &OpsReport<'_>) -> String {
    match r {
        OpsReport::Session {
            id,
            parent_id,
            tier,
            status,
            extraction_method,
            summary,
            ..
        } => {
            let parent = parent_id
                .map(|p| format!(", parent {p}"))
                .unwrap_or_default();
            format!(
                "tier {tier} session {id}{parent}: {status} ({}) {}",
                extraction_method.unwrap_or("none"),
                clean(summary.unwrap_or("")).replace('\n', " ")
            )
        }
        OpsReport::Decision {
            tier,
            decision,
            services,
            detail,
            ..
        } => format!(
            "tier {tier} asked to escalate [{}]: {decision}: {}",
            clean(&services.join(", ")),
            clean(detail)
        ),
        OpsReport::LeaseBusy { name, holder, .. } => {
            format!(
                "waiting for the lease `{}` held by {}",
                clean(name),
                clean(holder)
            )
        }
    }
}
