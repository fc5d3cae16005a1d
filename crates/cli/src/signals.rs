//! How the commands that run until stopped (`serve`, `watch`) learn that
//! they should stop. Shared here: `serve --watch` runs `watch`'s loop.

/// Completes on SIGINT or SIGTERM: stopping a server is its normal end.
pub(crate) async fn stopped() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = term => {}
    }
}
