//! The daemon itself: ping, status, shutdown, version, the user service, and the MCP server
//! handed over to.

use super::*;

/// How long `shutdown` waits for the daemon to exit.
pub(super) const SHUTDOWN_WAIT: Duration = Duration::from_secs(20);

/// Hands over to `ccmem-mcp`, the MCP server. It is a program of its own so that its async
/// runtime and MCP library stay out of this one, which every agent hook starts.
pub(super) fn mcp(ctx: &Ctx) -> Result<(), Error> {
    let exe = autostart::find_program("ccmem-mcp").ok_or_else(|| {
        Error::Failed(
            "ccmem-mcp is not installed beside ccmemctl or on PATH (cargo install --path . installs it)".into(),
        )
    })?;
    let mut cmd = std::process::Command::new(&exe);
    cmd.arg("--socket").arg(&ctx.socket);
    if !ctx.autostart {
        cmd.arg("--no-start");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let e = cmd.exec();
        Err(Error::Failed(format!("cannot run {}: {e}", exe.display())))
    }
    #[cfg(not(unix))]
    {
        let status = cmd.status().map_err(|e| Error::Failed(format!("cannot run {}: {e}", exe.display())))?;
        if status.success() {
            Ok(())
        } else {
            Err(Error::Quiet)
        }
    }
}

pub(super) fn ping(ctx: &Ctx) -> Result<(), Error> {
    let (hello, rtt) = with_daemon(ctx, |c, hello| {
        let t = Instant::now();
        let _: String = c.call(method::PING, &json!({}))?;
        Ok((hello.clone(), t.elapsed()))
    })?;
    if ctx.json {
        output::print_json(
            &json!({"pong": true, "pid": hello.pid, "version": hello.daemon_version, "rtt_ms": rtt.as_secs_f64() * 1e3}),
        );
    } else {
        println!("pong from ccmemd {} (pid {}) in {:.2} ms", hello.daemon_version, hello.pid, rtt.as_secs_f64() * 1e3);
    }
    Ok(())
}

pub(super) fn status(ctx: &Ctx, path: Option<PathBuf>) -> Result<(), Error> {
    let params = api::StatusParams { path: Some(project_path(path)?) };
    let reply: api::StatusReply = with_daemon(ctx, |c, _| c.call(method::STATUS, &params))?;
    if ctx.json {
        output::print_json(&reply);
    } else {
        print!("{}", output::status(&reply));
    }
    Ok(())
}

pub(super) fn shutdown(ctx: &Ctx) -> Result<(), Error> {
    match stop_daemon(ctx)? {
        None => output::say(ctx.json, json!({"stopped": false, "running": false}), "ccmemd is not running"),
        Some(pid) => {
            output::say(ctx.json, json!({"stopped": true, "pid": pid}), &format!("ccmemd (pid {pid}) stopped"))
        }
    }
    Ok(())
}

/// Stops the running daemon and waits for it to exit; its pid, or None when none ran.
/// Never starts a daemon just to stop it.
pub(super) fn stop_daemon(ctx: &Ctx) -> Result<Option<u32>, Error> {
    let quiet = Ctx { socket: ctx.socket.clone(), json: ctx.json, autostart: false };
    let reply =
        match with_daemon_of(&quiet, false, |c, _| c.call::<_, api::ShutdownReply>(method::SHUTDOWN, &json!({}))) {
            Ok(r) => r,
            Err(Error::Unreachable(_)) if !ctx.socket_present() => return Ok(None),
            Err(e) => return Err(e),
        };
    wait_for_exit(&ctx.socket, reply.pid, SHUTDOWN_WAIT).map_err(Error::Failed)?;
    Ok(Some(reply.pid))
}

/// The daemon removes its pidfile (and so releases its lock) as its very last act; a pidfile
/// that names another pid is another daemon's, started since (a client that was running,
/// an `import --all`, started it again): the one stopped is gone.
pub(super) fn wait_for_exit(socket: &Path, pid: u32, timeout: Duration) -> Result<(), String> {
    let pidfile = paths::pidfile_for(socket).map_err(|e| e.to_string())?;
    let deadline = Instant::now() + timeout;
    loop {
        match std::fs::File::open(&pidfile) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Ok(f) if f.try_lock().is_ok() => return Ok(()),
            Ok(mut f) => {
                let mut named = String::new();
                let _ = io::Read::read_to_string(&mut f, &mut named);
                if named.trim().parse::<u32>().is_ok_and(|p| p != pid) {
                    return Ok(());
                }
            }
            _ => {}
        }
        if Instant::now() >= deadline {
            return Err(format!("ccmemd is still shutting down after {timeout:?} (pidfile {})", pidfile.display()));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

pub(super) fn version(ctx: &Ctx) -> Result<(), Error> {
    // Asking for versions must not start a daemon.
    let daemon = Conn::connect(&ctx.socket).ok().and_then(|mut c| c.hello().ok());
    if ctx.json {
        output::print_json(&json!({
            "client": {"version": VERSION, "protocol_version": PROTOCOL_VERSION},
            "daemon": daemon,
        }));
        return Ok(());
    }
    println!("ccmemctl {VERSION} (protocol {PROTOCOL_VERSION})");
    match daemon {
        Some(h) => println!("ccmemd   {} (protocol {}), pid {}", h.daemon_version, h.protocol_version, h.pid),
        None => println!("ccmemd   not running (socket {})", ctx.socket.display()),
    }
    Ok(())
}

/// Installs, starts, stops or shows the user service.
pub(super) fn service(ctx: &Ctx, action: crate::service::Action) -> Result<(), Error> {
    // A daemon started on demand holds the socket the service manager must bind.
    let stop = || stop_daemon(ctx).map(|_| ()).map_err(|e| format!("cannot stop the running ccmemd: {e:?}"));
    if action == crate::service::Action::Status {
        let (home, config) = crate::service::home_and_config().map_err(Error::Failed)?;
        let st = crate::service::status(&home, &config);
        if ctx.json {
            output::print_json(&st);
        } else {
            println!("{}", st.lines().join("\n"));
        }
        // As `systemctl status` does, scripts can ask whether there is a service at all.
        return if st.installed() { Ok(()) } else { Err(Error::Quiet) };
    }
    let said = crate::service::act(action, stop).map_err(Error::Failed)?;
    let done: Vec<&str> = said.lines().collect();
    output::say(ctx.json, json!({"action": format!("{action:?}").to_lowercase(), "done": done}), &said);
    Ok(())
}
