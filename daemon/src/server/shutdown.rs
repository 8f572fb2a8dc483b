//! Signals: SIGTERM and SIGINT start a graceful shutdown; a second one ends the process at once.

use tokio_util::sync::CancellationToken;

/// Waits for a termination signal and cancels `token`. Runs until the process exits.
#[cfg(unix)]
pub async fn on_signals(token: CancellationToken) {
    use tokio::signal::unix::{signal, SignalKind};
    let (mut term, mut int) = match (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) {
        (Ok(t), Ok(i)) => (t, i),
        (Err(e), _) | (_, Err(e)) => {
            tracing::error!(error = %e, "cannot install signal handlers; only `ccmemctl shutdown` will stop the daemon");
            return;
        }
    };
    let first = tokio::select! {
        // A shutdown already asked for comes first: a signal that arrives with it (both
        // ready at once) is the second one, which ends the shutdown (the test of it failed
        // when the choice between ready branches fell on the signal).
        biased;
        // Stopping for another reason (`ccmemctl shutdown`, a lost socket): keep listening,
        // so that a signal still ends a shutdown that takes too long.
        _ = token.cancelled() => None,
        _ = term.recv() => Some("SIGTERM"),
        _ = int.recv() => Some("SIGINT"),
    };
    if let Some(name) = first {
        tracing::info!(signal = name, "shutting down");
        token.cancel();
    }
    tokio::select! {
        _ = term.recv() => {},
        _ = int.recv() => {},
    }
    tracing::warn!("second signal: exiting without waiting");
    std::process::exit(130);
}

/// Waits for Ctrl-C and cancels `token`.
#[cfg(not(unix))]
pub async fn on_signals(token: CancellationToken) {
    if tokio::signal::ctrl_c().await.is_ok() {
        tracing::info!("Ctrl-C: shutting down");
        token.cancel();
    }
}

/// Reads the configuration again on every SIGHUP; a bad file is logged and the previous
/// configuration stays.
#[cfg(unix)]
pub async fn on_hangup(config: std::sync::Arc<crate::config::Reloader>) {
    use tokio::signal::unix::{signal, SignalKind};
    let Ok(mut hup) = signal(SignalKind::hangup()) else { return };
    while hup.recv().await.is_some() {
        // Reading the files (and compiling the redaction patterns) is blocking work.
        let c = config.clone();
        match tokio::task::spawn_blocking(move || c.reload()).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => tracing::error!(error = %e, "configuration not reloaded; the previous one stays in force"),
            Err(e) => tracing::error!(error = %e, "configuration not reloaded: the reload failed"),
        }
    }
}

/// No SIGHUP here: `ccmemctl config reload` reloads.
#[cfg(not(unix))]
pub async fn on_hangup(_config: std::sync::Arc<crate::config::Reloader>) {}
