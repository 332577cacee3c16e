//! Packet captures end to end: files per capture point, unknown names refused,
//! results unchanged by capturing.

use vtlab_core::spec::{plan, resolve_value};
use vtlab_core::{run_plan, run_plan_captured, CaptureRequest, Hooks, RunOptions};

fn lossy_v2g() -> vtlab_core::Plan {
    let spec = serde_json::json!({"preset": "v2g", "bytes": "2MB", "loss": {"mean_loss": "2%"}});
    plan(&resolve_value(spec).unwrap()).unwrap()
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("vtlab-capture-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn captures_write_one_file_per_point_and_change_no_result() {
    let p = lossy_v2g();
    let dir = tmp("all");
    let plain = run_plan(&p, 3, RunOptions::default());
    let req = CaptureRequest::all(&dir);
    let r = run_plan_captured(&p, 3, RunOptions::default(), &req, Hooks::default())
        .unwrap()
        .unwrap();
    assert_eq!(plain.flows, r.flows);
    assert_eq!(plain.events_processed, r.events_processed);
    let report = r.capture.unwrap();
    assert_eq!(report.error, None);
    let names: Vec<_> = report
        .files
        .iter()
        .map(|(f, _)| f.file_name().unwrap().to_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["sa.pcap", "secc.pcap", "evcc.pcap"]);
    for (f, n) in &report.files {
        // 24 B file header, then 16 B per record plus the frame.
        let len = std::fs::metadata(f).unwrap().len();
        assert!(*n > 0 && len > 24 + 16 * n, "{f:?}");
    }
    if std::env::var_os("VTLAB_KEEP_CAPTURES").is_none() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn a_link_capture_is_one_file_per_end() {
    let p = lossy_v2g();
    let dir = tmp("link");
    let req = CaptureRequest {
        dir: dir.clone(),
        points: vec!["plc".into()],
        payload: false,
    };
    let r = run_plan_captured(&p, 3, RunOptions::default(), &req, Hooks::default())
        .unwrap()
        .unwrap();
    let report = r.capture.unwrap();
    let names: Vec<_> = report
        .files
        .iter()
        .map(|(f, _)| f.file_name().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["plc-secc.pcap", "plc-evcc.pcap"]);
    // Each end records what it sends (carried, lost on the link, or still on
    // the link when the run ends) and what it receives (carried).
    let plc = &r.links[2..];
    let (secc, evcc) = (report.files[0].1, report.files[1].1);
    let sent = |l: &vtlab_core::metrics::LinkResult| l.packets_carried + l.drops_link_error;
    let in_flight_secc = secc - sent(&plc[0]) - plc[1].packets_carried;
    let in_flight_evcc = evcc - plc[0].packets_carried - sent(&plc[1]);
    // The run ends when the last data byte arrives: the final ACK is on its way.
    assert_eq!(in_flight_evcc, 1);
    assert!(
        in_flight_secc <= 100,
        "at most a queue's worth: {in_flight_secc}"
    );
    if std::env::var_os("VTLAB_KEEP_CAPTURES").is_none() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn unknown_capture_points_are_refused_before_the_run() {
    let p = lossy_v2g();
    let dir = tmp("unknown");
    let req = CaptureRequest {
        dir: dir.clone(),
        points: vec!["plc".into(), "wifi".into()],
        payload: true,
    };
    let e = run_plan_captured(&p, 3, RunOptions::default(), &req, Hooks::default()).unwrap_err();
    assert_eq!(e.path, "pcap");
    assert_eq!(
        e.message,
        "unknown link or node 'wifi' (links: wan, plc; nodes: sa, secc, evcc)"
    );
    assert!(!dir.exists(), "nothing is created for a refused request");
}

/// A file that cannot be opened (here: a directory where `evcc.pcap` goes)
/// is refused before the run, and the files opened before it are removed.
#[test]
fn a_capture_that_cannot_open_every_file_leaves_none() {
    let p = lossy_v2g();
    let dir = tmp("open");
    std::fs::create_dir_all(dir.join("evcc.pcap")).unwrap();
    let req = CaptureRequest::all(&dir);
    let e = run_plan_captured(&p, 3, RunOptions::default(), &req, Hooks::default()).unwrap_err();
    assert_eq!(e.path, "pcap");
    let evcc = dir.join("evcc.pcap");
    // EISDIR in the system's words, lower case (std's text minus "(os error 21)").
    assert_eq!(
        e.message,
        format!("cannot write {}: is a directory", evcc.display())
    );
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|f| f.unwrap().file_name())
        .collect();
    assert_eq!(left, ["evcc.pcap"], "sa.pcap and secc.pcap were removed");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A write that fails during the run (a full disk: /dev/full behind the
/// capture's file name) reports the file and the system's error, and no
/// capture file is left; the device itself is untouched.
#[cfg(target_os = "linux")]
#[test]
fn a_failed_capture_write_names_the_file_and_leaves_no_file() {
    let p = lossy_v2g();
    let dir = tmp("full");
    std::fs::create_dir_all(&dir).unwrap();
    let sa = dir.join("sa.pcap");
    std::os::unix::fs::symlink("/dev/full", &sa).unwrap();
    let req = CaptureRequest::all(&dir);
    let r = run_plan_captured(&p, 3, RunOptions::default(), &req, Hooks::default())
        .unwrap()
        .unwrap();
    let report = r.capture.unwrap();
    // ENOSPC (28 on Linux), as strerror words it, in lower case.
    assert_eq!(
        report.error.as_deref(),
        Some(&*format!(
            "cannot write {}: no space left on device",
            sa.display()
        ))
    );
    assert_eq!(report.os_error, Some((sa.clone(), 28)));
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "no partial capture"
    );
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata("/dev/full")
        .unwrap()
        .file_type()
        .is_char_device());
    std::fs::remove_dir_all(&dir).unwrap();
}
