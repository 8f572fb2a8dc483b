//! The benchmark report: every bench records its figures here, each beside the baseline it
//! measured in the same run, and on `finish` writes `target/bench-report/<bench>.json` and
//! regenerates `report.json` and `report.md` from every bench's file there. `cargo bench`
//! (all benches) thus leaves one report; a single bench refreshes its own part of it.
#![allow(dead_code)]

use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::Mutex;

static FIGURES: Mutex<Vec<Value>> = Mutex::new(Vec::new());
static TARGETS: Mutex<Vec<Value>> = Mutex::new(Vec::new());

/// The `q` quantile of `v` (0.5 the median), nearest rank; NaN when `v` is empty.
pub fn quantile(v: &[f64], q: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    if s.is_empty() {
        return f64::NAN;
    }
    s[((s.len() - 1) as f64 * q).round() as usize]
}

/// How long `f` takes, in milliseconds.
pub fn time_ms(f: impl FnOnce()) -> f64 {
    let t = std::time::Instant::now();
    f();
    t.elapsed().as_secs_f64() * 1e3
}

/// Records a figure beside its baseline (smaller is better for both, or both are rates).
pub fn record(figure: &str, value: f64, unit: &str, baseline: &str, base: f64) {
    let ratio = if base != 0.0 { value / base } else { f64::NAN };
    let mut f = FIGURES.lock().unwrap_or_else(|e| e.into_inner());
    f.push(json!({
        "figure": figure, "value": finite(value), "unit": unit,
        "baseline": baseline, "baseline_value": finite(base), "ratio": finite(ratio),
    }));
}

/// Records a target and whether this run met it. A quick run (`CCMEM_BENCH_QUICK=1`)
/// measures at a smaller size than the targets were set for: its targets are shown, not
/// judged.
pub fn target(what: &str, met: bool) {
    let judged = !quick();
    let mark = match (judged, met) {
        (false, _) => "not judged: quick run",
        (true, true) => "met",
        (true, false) => "MISSED",
    };
    println!("  [{mark}] {what}");
    TARGETS.lock().unwrap_or_else(|e| e.into_inner()).push(json!({"target": what, "met": met, "judged": judged}));
}

/// `CCMEM_BENCH_QUICK=1`: a short run at a smaller size.
pub fn quick() -> bool {
    std::env::var_os("CCMEM_BENCH_QUICK").is_some_and(|v| v != "0" && !v.is_empty())
}

fn finite(v: f64) -> Value {
    if v.is_finite() {
        json!((v * 1000.0).round() / 1000.0)
    } else {
        Value::Null
    }
}

/// `target/bench-report`, beside the bench executable's `target/<profile>/deps/`.
fn report_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("CCMEM_BENCH_REPORT") {
        return Some(PathBuf::from(d));
    }
    let exe = std::env::current_exe().ok()?;
    Some(exe.parent()?.parent()?.parent()?.join("bench-report"))
}

/// Writes this bench's figures and regenerates the whole report; then, when a judged target
/// was missed, says which and returns failure for `main` to return
/// (`CCMEM_BENCH_REPORT_ONLY=1`: report, success). Returned, not `exit`ed: the bench's
/// daemons are stopped by their guards as `main` returns.
pub fn finish(bench: &str, quick: bool) -> std::process::ExitCode {
    let missed: Vec<String> = TARGETS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .filter(|t| t["judged"] == true && t["met"] == false)
        .filter_map(|t| t["target"].as_str().map(str::to_string))
        .collect();
    if let Some(dir) = report_dir() {
        match write(&dir, bench, quick) {
            Ok(()) => println!("\nreport: {} (and report.json)", dir.join("report.md").display()),
            Err(e) => eprintln!("cannot write the benchmark report in {}: {e}", dir.display()),
        }
    }
    if !missed.is_empty() && std::env::var_os("CCMEM_BENCH_REPORT_ONLY").is_none() {
        eprintln!("\n{bench}: {} target{} missed:", missed.len(), if missed.len() == 1 { "" } else { "s" });
        for m in &missed {
            eprintln!("  - {m}");
        }
        return std::process::ExitCode::FAILURE;
    }
    std::process::ExitCode::SUCCESS
}

fn write(dir: &std::path::Path, bench: &str, quick: bool) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let figures = std::mem::take(&mut *FIGURES.lock().unwrap_or_else(|e| e.into_inner()));
    let targets = std::mem::take(&mut *TARGETS.lock().unwrap_or_else(|e| e.into_inner()));
    let mine = json!({
        "bench": bench,
        "command": format!("cargo bench --bench {bench}"),
        "quick": quick,
        "ran_at": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "figures": figures,
        "targets": targets,
    });
    std::fs::write(dir.join(format!("{bench}.json")), serde_json::to_vec_pretty(&mine)?)?;
    let mut all: Vec<Value> = std::fs::read_dir(dir)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json") && p.file_stem().is_some_and(|s| s != "report"))
        .filter_map(|p| std::fs::read(&p).ok().and_then(|b| serde_json::from_slice(&b).ok()))
        .collect();
    all.sort_by(|a, b| a["bench"].as_str().cmp(&b["bench"].as_str()));
    std::fs::write(dir.join("report.json"), serde_json::to_vec_pretty(&json!({ "benches": all }))?)?;
    std::fs::write(dir.join("report.md"), markdown(&all))
}

fn markdown(all: &[Value]) -> String {
    let mut s = String::from("# ccmem benchmark report\n\nEach figure beside the baseline measured in the same run.\n");
    let num = |v: &Value| v.as_f64().map_or("—".to_string(), |x| format!("{x}"));
    for b in all {
        s.push_str(&format!(
            "\n## {} (`{}`{}), {} cores, {}\n\n| figure | value | unit | baseline | baseline value | ratio |\n|---|---:|---|---|---:|---:|\n",
            b["bench"].as_str().unwrap_or("?"),
            b["command"].as_str().unwrap_or(""),
            if b["quick"] == true { ", quick run" } else { "" },
            b["cores"],
            b["ran_at"].as_str().unwrap_or("")
        ));
        for f in b["figures"].as_array().into_iter().flatten() {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                f["figure"].as_str().unwrap_or(""),
                num(&f["value"]),
                f["unit"].as_str().unwrap_or(""),
                f["baseline"].as_str().unwrap_or(""),
                num(&f["baseline_value"]),
                f["ratio"].as_f64().map_or("—".into(), |r| format!("{r:.2}×"))
            ));
        }
        let targets = b["targets"].as_array().cloned().unwrap_or_default();
        if !targets.is_empty() {
            s.push('\n');
            for t in targets {
                let met = match (t["judged"] != false, t["met"] == true) {
                    (false, _) => "not judged (quick run)",
                    (true, true) => "met",
                    (true, false) => "**missed**",
                };
                s.push_str(&format!("- {met}: {}\n", t["target"].as_str().unwrap_or("")));
            }
        }
    }
    s
}
