//! `agentshape serve`: the store as a dashboard of HTML pages, a JSON API
//! and its live feed as SSE (issue 9). The server is `agentshape-web`;
//! this module checks the address against the token, prints where it
//! listens and runs until SIGINT or SIGTERM.

use agentshape_web::{Config, Error, Token};

use crate::args::ServeArgs;
use crate::exit::{CliError, Exit};
use crate::output::eprint;
use crate::signals::stopped;

/// Run `serve`.
///
/// # Errors
/// 64 for a non-loopback address without `--token` (or with one shorter
/// than 16 characters) or an empty token; store
/// failures with their own codes; an address that cannot be bound.
pub fn run(args: ServeArgs) -> anyhow::Result<Exit> {
    // A bad rules file stops `serve` before anything starts.
    let rules = args
        .alerts
        .as_deref()
        .map(super::alerts::load)
        .transpose()?;
    let token = args.token;
    // Never empty; on a non-loopback address at least 16 characters.
    if let Some(t) = &token {
        Token::check(t, args.addr).map_err(CliError::Usage)?;
    }
    // Anyone who can reach a non-loopback address could read every prompt
    // and answer in the store: refuse rather than expose it by accident.
    if !args.addr.ip().is_loopback() && token.is_none() {
        return Err(CliError::Usage(format!(
            "refusing to serve on {} without --token: only loopback addresses (127.0.0.1, ::1) may go without one",
            args.addr
        ))
        .into());
    }
    let mut config = Config::new(agentshape_store::StoreUrl::parse(&args.store)?);
    config.token = token.map(Token::new);
    if let Some(dir) = &args.schemas {
        std::fs::create_dir_all(dir).map_err(|e| {
            CliError::Usage(format!(
                "--schemas {}: cannot create the folder: {e}",
                dir.display()
            ))
        })?;
    }
    config.schemas = args.schemas;
    config.mask = crate::mask::masker().is_some();
    // Note [Masking a stored store]: said once, at start.
    if let Ok(store) = config.store.open_copyable(false)
        && let Ok(n) = agentshape_store::secrets::unmasked_sessions(&*store)
        && n > 0
    {
        crate::output::eprint(&format!(
            "{n} sessions were stored before secret masking (or with --no-mask); pages mask them \
             as they are shown; `agentshape secrets mask --store {}` masks them in the store",
            config.store
        ));
    }
    config.max_feed_clients = args.max_feed_clients as usize;
    config.client_timeout = std::time::Duration::from_secs_f64(args.client_timeout);
    // `--watch`: the agents' own sessions, followed on a thread of their
    // own with their own store handle; the feed tailer sees their rows as
    // it sees a `run`'s.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let otlp_flags =
        args.otlp.endpoint.is_some() || !args.otlp.header.is_empty() || args.otlp.content;
    if args.watch.is_none() && otlp_flags {
        return Err(crate::exit::CliError::Usage(
            "--otlp-* exports what --watch imports: give --watch".into(),
        )
        .into());
    }
    let watcher = match &args.watch {
        Some(paths) => {
            let plan = super::import::Plan::new(paths, None, None, None)?;
            let url = agentshape_store::StoreUrl::parse(&args.store)?;
            Some(super::import::follow_in_background(
                plan,
                &url,
                std::sync::Arc::clone(&stop),
                &args.otlp,
            )?)
        }
        None => None,
    };
    // Note [Alert loops] in the runtime: threads of their own.
    let alerts = match rules {
        Some(r) => Some(super::alerts::start(
            r,
            &agentshape_store::StoreUrl::parse(&args.store)?,
        )?),
        None => None,
    };
    raise_descriptor_limit();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let served = rt.block_on(async {
        let bound = agentshape_web::bind(args.addr, config).await?;
        let addr = bound.local_addr()?;
        // Tests and scripts read this line to find a port 0 server.
        eprint(&format!("agentshape: listening on http://{addr}"));
        bound.run(stopped()).await
    });
    // Dropping the runtime does not wait for SSE client tasks: they never end by themselves.
    rt.shutdown_background();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    if let Some(w) = watcher {
        let _ = w.join();
    }
    if let Some(a) = alerts {
        a.stop();
    }
    match served {
        Ok(()) => Ok(Exit::Ok),
        // The store's own error, so the exit code is its kind's (65, 73, 75...).
        Err(Error::Store(e)) => Err(e.into()),
        Err(e) => Err(e.into()),
    }
}

/// Note \[Descriptors\]: every connection costs a file descriptor, and the
/// soft limit a shell gives a process is often small (1,024, or 256 on some
/// systems) while the hard limit is far larger. A few hundred clients that
/// hold their connections open (trickling bodies, up to `--client-timeout`;
/// feed readers, up to `--max-feed-clients`) would otherwise use up the soft
/// limit, and then `accept` fails and every other request waits. So `serve`
/// raises its soft limit to the hard one (at most 2^20) before it listens;
/// where that is refused it keeps the limit it has.
fn raise_descriptor_limit() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) {
        let want = hard.min(1 << 20);
        if soft < want {
            let _ = setrlimit(Resource::RLIMIT_NOFILE, want, hard);
        }
    }
}
