use super::*;

#[test]
fn servers_go_to_the_innermost_project_of_their_cwd() {
    let l = |port, cwd: Option<&str>| Listener {
        port,
        pid: port as u32,
        process: "node".into(),
        command: String::new(),
        cwd: cwd.map(PathBuf::from),
    };
    let roots = vec![PathBuf::from("/w/app"), PathBuf::from("/w/app/packages/web"), PathBuf::from("/w/api")];
    let got = assign(
        &[
            l(3000, Some("/w/app/packages/web/src")),
            l(3001, Some("/w/api")),
            l(3002, Some("/w/app")),
            l(3003, Some("/home/u")),
            l(3004, Some("/w/application")),
            // Working in a directory above the project (a model server started beside it).
            l(3005, Some("/w")),
            l(3006, None),
        ],
        &roots,
    );
    let ports = |r: &str| got.get(Path::new(r)).map(|v| v.iter().map(|s| s.port).collect::<Vec<_>>());
    assert_eq!(ports("/w/app/packages/web"), Some(vec![3000]));
    assert_eq!(ports("/w/api"), Some(vec![3001]));
    assert_eq!(ports("/w/app"), Some(vec![3002]));
    assert_eq!(got.len(), 3, "a server outside every project belongs to none");
}

#[test]
fn a_scan_finds_this_process_listening() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut s = Scanner::new();
    let found = s.scan();
    let me = found.iter().find(|l| l.port == port).unwrap_or_else(|| panic!("port {port} not in {found:?}"));
    assert_eq!(me.pid, std::process::id());
    assert_eq!(me.cwd, Some(std::env::current_dir().unwrap()));
    drop(listener);
    // Gone once the kernel says so; under load another test of this process may bind the
    // same ephemeral port for a moment, so the port is looked for until a deadline.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while s.scan().iter().any(|l| l.port == port) {
        assert!(std::time::Instant::now() < deadline, "a closed socket is gone from the scans");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
