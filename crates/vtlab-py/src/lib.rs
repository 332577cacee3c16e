//! Thin PyO3 binding of vtlab-core as the Python module `vtlab._core`.
//! No simulation logic lives here: it converts JSON specs in and result
//! tables out (as dicts of column lists).

#[cfg(target_os = "linux")]
mod emulate;

use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyDict, PyList, PyString};
use pyo3::IntoPyObjectExt;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use vtlab_core::metrics::{
    Column, ColumnData, ColumnKind, EventRow, FlowColumns, FlowResult, LinkColumns, LinkResult,
    MessageRow, SessionColumns, SessionResult, Trace, TraceRow, ID_COLUMNS,
};
use vtlab_core::tcp::cc;
use vtlab_core::{spec, CaptureRequest, Hooks, RunOptions, RunResult, SpecError};

create_exception!(
    _core,
    ScenarioError,
    PyValueError,
    "An invalid scenario: the message names the field and the allowed values."
);

pub(crate) fn to_py_err(e: SpecError) -> PyErr {
    ScenarioError::new_err(e.to_string())
}

/// Set by [`request_stop`]: every running simulation stops at its next check.
static STOP: AtomicBool = AtomicBool::new(false);

/// Ask every running simulation (in any thread) to stop soon with
/// KeyboardInterrupt; `clear` resets the request.
#[pyfunction]
#[pyo3(signature = (clear=false))]
fn request_stop(clear: bool) {
    STOP.store(!clear, Ordering::Relaxed);
}

/// The vtlab version.
#[pyfunction]
fn version() -> &'static str {
    vtlab_core::VERSION
}

/// Names of the scenario presets.
#[pyfunction]
fn presets() -> Vec<&'static str> {
    spec::PRESETS.to_vec()
}

/// Every congestion control: name, description, source, the ns-3 TypeId it
/// is validated against (None where ns-3 has none) and parameters.
#[pyfunction]
fn congestion_controls(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let list = PyList::empty(py);
    for d in cc::REGISTRY {
        let entry = PyDict::new(py);
        entry.set_item("name", d.name)?;
        entry.set_item("description", d.description)?;
        entry.set_item("source", d.source)?;
        entry.set_item("ns3_type_id", d.ns3_type_id)?;
        let params = PyList::empty(py);
        for p in d.params {
            let pd = PyDict::new(py);
            pd.set_item("name", p.name)?;
            pd.set_item("default", p.default_ns3)?;
            pd.set_item("default_ns3", p.default_ns3)?;
            pd.set_item("default_linux", p.default_linux)?;
            pd.set_item("min", p.min)?;
            pd.set_item("max", p.max)?;
            pd.set_item("doc", p.doc)?;
            pd.set_item("integer", p.integer)?;
            pd.set_item("at_most", p.at_most)?;
            params.append(pd)?;
        }
        entry.set_item("params", params)?;
        list.append(entry)?;
    }
    Ok(list)
}

/// Validate a scenario spec (JSON text) and return the resolved scenario as
/// canonical JSON.
#[pyfunction]
fn expand(spec_json: &str) -> PyResult<String> {
    let s = spec::resolve_json(spec_json).map_err(to_py_err)?;
    Ok(s.canonical_json())
}

/// Hash of the resolved scenario (what every result row carries).
#[pyfunction]
fn scenario_hash(spec_json: &str) -> PyResult<String> {
    Ok(spec::resolve_json(spec_json).map_err(to_py_err)?.hash())
}

/// Mean loss rate of the burst model for burst-start probability `p`.
#[pyfunction]
#[pyo3(signature = (p, burst_min=1, burst_max=4))]
fn burst_mean_loss(p: f64, burst_min: u32, burst_max: u32) -> PyResult<f64> {
    spec::loss::checked_mean_loss(p, burst_min, burst_max).map_err(to_py_err)
}

/// Burst-start probability that gives mean loss rate `mean_loss`.
#[pyfunction]
#[pyo3(signature = (mean_loss, burst_min=1, burst_max=4))]
fn burst_start_for_mean_loss(mean_loss: f64, burst_min: u32, burst_max: u32) -> PyResult<f64> {
    spec::loss::checked_burst_start(mean_loss, burst_min, burst_max, "mean_loss").map_err(to_py_err)
}

/// A quantity as scenario fields take it (`kind`: "bytes", "rate",
/// "duration" or "fraction"), in its base unit: bytes, bit/s and nanoseconds
/// as an int, a fraction as a float. A bad value raises ScenarioError with
/// the message that scenario field would give.
#[pyfunction]
fn parse_quantity(py: Python<'_>, kind: &str, text: &str) -> PyResult<Py<PyAny>> {
    match spec::units::parse_quantity(kind, text).map_err(ScenarioError::new_err)? {
        spec::units::Quantity::Whole(v) => Ok(v.into_pyobject(py)?.into_any().unbind()),
        spec::units::Quantity::Real(v) => Ok(v.into_pyobject(py)?.into_any().unbind()),
    }
}

/// Identity columns every result row carries.
struct RowId<'a> {
    scenario_hash: &'a str,
    seed: u64,
    version: &'a str,
}

/// A dict of column lists: the identity columns, then the table's declared
/// columns (`vtlab_core::metrics`), in declaration order.
fn columns<'py>(
    py: Python<'py>,
    n: usize,
    cols: Vec<(&'static str, ColumnData)>,
    id: &RowId,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("scenario_hash", repeated(py, id.scenario_hash, n)?)?;
    d.set_item("seed", repeated(py, id.seed, n)?)?;
    d.set_item("version", repeated(py, id.version, n)?)?;
    for (name, data) in cols {
        match data {
            ColumnData::Str(v) => d.set_item(name, shared_strings(py, &v)?)?,
            ColumnData::U64(v) => d.set_item(name, v)?,
            ColumnData::F64(v) => d.set_item(name, v)?,
            ColumnData::Bool(v) => d.set_item(name, v)?,
        }
    }
    Ok(d)
}

/// A column of `n` rows that all hold `value`: `n` references to one Python
/// object (8 bytes a row).
fn repeated<'py, T>(py: Python<'py>, value: T, n: usize) -> PyResult<Bound<'py, PyList>>
where
    T: IntoPyObject<'py>,
{
    let value = value.into_bound_py_any(py)?;
    PyList::new(py, std::iter::repeat_n(value, n))
}

/// A column of names (flows, sessions, messages, states: few distinct
/// values in many rows), each distinct name one Python string.
fn shared_strings<'py>(py: Python<'py>, values: &[String]) -> PyResult<Bound<'py, PyList>> {
    let mut seen: HashMap<&str, Bound<'py, PyString>> = HashMap::new();
    PyList::new(
        py,
        values.iter().map(|v| {
            seen.entry(v.as_str())
                .or_insert_with(|| PyString::new(py, v))
                .clone()
        }),
    )
}

fn schema_list<'py>(py: Python<'py>, cols: &[Column]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for c in ID_COLUMNS.iter().chain(cols) {
        let d = PyDict::new(py);
        d.set_item("name", c.name)?;
        d.set_item(
            "kind",
            match c.kind {
                ColumnKind::Str => "str",
                ColumnKind::U64 => "u64",
                ColumnKind::F64 => "f64",
                ColumnKind::Bool => "bool",
            },
        )?;
        d.set_item("unit", c.unit)?;
        d.set_item("doc", c.doc)?;
        list.append(d)?;
    }
    Ok(list)
}

/// The channel model's per-TTI output for one cellular direction, as a run of
/// `spec_json` with `seed` sees it: a dict of columns (`time_ms`, `bytes`,
/// `lost`, `rsrp_dbm`, `sinr_db`, `cqi`, `itbs`), each a pair (numpy dtype,
/// bytearray of the values in that dtype): 8 bytes per number and 1 per flag,
/// one value per TTI, so an hour of TTIs is about 160 MB.
#[pyfunction]
#[pyo3(signature = (spec_json, link, from_node, n_ms, seed))]
fn channel_series<'py>(
    py: Python<'py>,
    spec_json: &str,
    link: &str,
    from_node: &str,
    n_ms: u64,
    seed: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let scenario = spec::resolve_json(spec_json).map_err(to_py_err)?;
    let s = py
        .detach(|| vtlab_core::channel_series(&scenario, link, from_node, n_ms, seed))
        .map_err(to_py_err)?;
    let int = |v: i64| v.to_le_bytes();
    let columns: [(&str, &str, Vec<u8>); 7] = [
        (
            "time_ms",
            "<i8",
            s.time_ms.iter().flat_map(|&t| int(t as i64)).collect(),
        ),
        (
            "bytes",
            "<i8",
            s.bytes.iter().flat_map(|&b| int(b.into())).collect(),
        ),
        ("lost", "?", s.lost.iter().map(|&l| u8::from(l)).collect()),
        (
            "rsrp_dbm",
            "<f8",
            s.rsrp_dbm.iter().flat_map(|x| x.to_le_bytes()).collect(),
        ),
        (
            "sinr_db",
            "<f8",
            s.sinr_db.iter().flat_map(|x| x.to_le_bytes()).collect(),
        ),
        (
            "cqi",
            "<i8",
            s.cqi.iter().flat_map(|&c| int(c.into())).collect(),
        ),
        (
            "itbs",
            "<i8",
            s.itbs.iter().flat_map(|&c| int(c.into())).collect(),
        ),
    ];
    let d = PyDict::new(py);
    for (name, dtype, data) in columns {
        d.set_item(name, (dtype, PyByteArray::new(py, &data)))?;
    }
    Ok(d)
}

/// The declared columns of every result table: {"flows": [...], "links":
/// [...], "traces": [...]}, each a list of {name, kind, unit, doc}.
#[pyfunction]
fn schema(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("flows", schema_list(py, FlowResult::COLUMNS)?)?;
    d.set_item("links", schema_list(py, LinkResult::COLUMNS)?)?;
    d.set_item("sessions", schema_list(py, SessionResult::COLUMNS)?)?;
    d.set_item("messages", schema_list(py, MessageRow::COLUMNS)?)?;
    d.set_item("traces", schema_list(py, TraceRow::COLUMNS)?)?;
    d.set_item("events", schema_list(py, EventRow::COLUMNS)?)?;
    Ok(d)
}

/// The capture file names `run(..., pcap=DIR, pcap_points=points)` would
/// write into DIR, in order; raises ScenarioError for an unknown name.
#[pyfunction]
#[pyo3(signature = (spec_json, pcap_points=None))]
fn pcap_files(spec_json: &str, pcap_points: Option<Vec<String>>) -> PyResult<Vec<String>> {
    let scenario = spec::resolve_json(spec_json).map_err(to_py_err)?;
    let plan = spec::plan(&scenario).map_err(to_py_err)?;
    vtlab_core::sim::capture::file_names(&plan, &pcap_points.unwrap_or_default())
        .map_err(|e| to_py_err(e.into()))
}

/// The capture `run` was asked for: files of `points` (default: every node)
/// in `dir`.
fn open_capture(
    plan: &vtlab_core::Plan,
    dir: Option<std::path::PathBuf>,
    points: Option<Vec<String>>,
    payload: bool,
) -> PyResult<Option<vtlab_core::Capture>> {
    match dir {
        Some(dir) => Some(vtlab_core::Capture::open(
            plan,
            &CaptureRequest {
                dir,
                points: points.unwrap_or_default(),
                payload,
            },
        )),
        None if points.is_some() => {
            return Err(ScenarioError::new_err(
                "pcap_points: a capture selection needs a pcap directory",
            ))
        }
        None => None,
    }
    .transpose()
    .map_err(|e| to_py_err(e.into()))
}

/// Run one simulation of a scenario spec (JSON text) with `seed`.
///
/// Returns {"flows": columns, "links": columns, "traces": columns or None,
/// "meta": {...}}. The simulation runs without holding the GIL.
///
/// `pcap`: a directory to write packet captures into (docs/captures.md), of
/// the nodes and links named in `pcap_points` (default: every node), with
/// zero-filled payloads unless `pcap_payload` is false. Unknown names raise
/// ScenarioError before the run; `meta["pcap"]` lists the files written.
#[pyfunction]
#[pyo3(signature = (spec_json, seed, trace=false, trace_changes=false, events=false, trace_batches=None, pcap=None, pcap_points=None, pcap_payload=true))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    spec_json: &str,
    seed: u64,
    trace: bool,
    trace_changes: bool,
    events: bool,
    trace_batches: Option<Py<PyAny>>,
    pcap: Option<std::path::PathBuf>,
    pcap_points: Option<Vec<String>>,
    pcap_payload: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let plan = planned(spec_json)?;
    let plan = &*plan;
    let options = RunOptions {
        trace,
        trace_changes,
        events,
    };
    let capture = open_capture(plan, pcap, pcap_points, pcap_payload)?;
    // The run releases the GIL; every CHECK_EVERY events it looks at the stop
    // flag other threads may set and, in the main thread only (Python runs
    // signal handlers nowhere else), takes the GIL back briefly to let Python
    // handle signals (Ctrl-C raises KeyboardInterrupt here). A run in another
    // thread never waits for the GIL before its end.
    let threading = py.import("threading")?;
    let main_thread = threading
        .call_method0("main_thread")?
        .is(&threading.call_method0("current_thread")?);
    let mut interrupted = || {
        STOP.load(Ordering::Relaxed)
            || (main_thread && Python::attach(|py| py.check_signals().is_err()))
    };
    // With `trace_batches`, the trace goes to that callable in batches of
    // column dicts as the run produces it (bounded memory); a Python error in
    // the callable stops the run and is raised here.
    let hash = plan.hash().to_owned();
    let batch_id = RowId {
        scenario_hash: &hash,
        seed,
        version: vtlab_core::VERSION,
    };
    let mut sink_error: Option<PyErr> = None;
    let mut sink = |t: Trace| -> bool {
        let Some(callback) = trace_batches.as_ref() else {
            return true;
        };
        let sent = Python::attach(|py| {
            let cols = columns(py, t.len(), t.into_columns(), &batch_id)?;
            callback.call1(py, (cols,)).map(drop)
        });
        sent.map_err(|e| sink_error = Some(e)).is_ok()
    };
    let streaming = trace_batches.is_some();
    let outcome = py.detach(|| {
        let hooks = Hooks {
            interrupted: Some(&mut interrupted),
            trace_sink: if streaming { Some(&mut sink) } else { None },
        };
        let sim = vtlab_core::sim::Simulation::new(plan, seed, options);
        match capture {
            Some(c) => sim.with_capture(c),
            None => sim,
        }
        .run_with(hooks)
    });
    if let Some(e) = sink_error {
        return Err(e);
    }
    let Some(result) = outcome else {
        return Err(PyKeyboardInterrupt::new_err("simulation interrupted"));
    };
    if let Some(e) = result.capture.as_ref().and_then(capture_error) {
        return Err(e);
    }
    run_output(py, result)
}

/// A capture that failed: an I/O failure is OSError(errno, text, file), as
/// Python's own file functions raise it (the capture files are removed).
fn capture_error(c: &vtlab_core::metrics::CaptureReport) -> Option<PyErr> {
    let e = c.error.clone()?;
    Some(match &c.os_error {
        Some((path, code)) => {
            let text = vtlab_core::sim::capture::io_text(&std::io::Error::from_raw_os_error(*code));
            PyOSError::new_err((*code, text, path.clone()))
        }
        None => PyOSError::new_err(e),
    })
}

/// Specs up to this long (JSON bytes) keep their plan for the thread's next run; a
/// longer one (a replayed loss list, say) is planned anew each time.
const PLAN_CACHE_MAX_JSON: usize = 64 * 1024;

thread_local! {
    /// The last scenario this thread ran, as its spec JSON and its plan: a sweep
    /// runs a scenario's seeds one after another, and resolving, checking and
    /// hashing the spec took 14 µs of a short ISO 15118 session's 52 µs.
    static LAST_PLAN: RefCell<Option<(String, Arc<vtlab_core::Plan>)>> = const { RefCell::new(None) };
}

/// The plan of `spec_json`: this thread's last one when the spec is the same text
/// (a plan depends on nothing else), else resolved and planned now.
fn planned(spec_json: &str) -> PyResult<Arc<vtlab_core::Plan>> {
    let hit = LAST_PLAN.with_borrow(|last| {
        last.as_ref()
            .filter(|(json, _)| json == spec_json)
            .map(|(_, plan)| Arc::clone(plan))
    });
    if let Some(plan) = hit {
        return Ok(plan);
    }
    let scenario = spec::resolve_json(spec_json).map_err(to_py_err)?;
    let plan = Arc::new(spec::plan(&scenario).map_err(to_py_err)?);
    if spec_json.len() <= PLAN_CACHE_MAX_JSON {
        LAST_PLAN.set(Some((spec_json.to_owned(), Arc::clone(&plan))));
    }
    Ok(plan)
}

/// `run`'s dict: every result table as columns, and the run's metadata.
fn run_output(py: Python<'_>, mut result: RunResult) -> PyResult<Bound<'_, PyDict>> {
    let id = RowId {
        scenario_hash: &result.scenario_hash,
        seed: result.seed,
        version: result.version,
    };
    let out = PyDict::new(py);
    let flows: FlowColumns = std::mem::take(&mut result.flows).into_iter().collect();
    out.set_item(
        "flows",
        columns(py, flows.len(), flows.into_columns(), &id)?,
    )?;
    let links: LinkColumns = std::mem::take(&mut result.links).into_iter().collect();
    out.set_item(
        "links",
        columns(py, links.len(), links.into_columns(), &id)?,
    )?;
    let sessions: SessionColumns = std::mem::take(&mut result.sessions).into_iter().collect();
    out.set_item(
        "sessions",
        columns(py, sessions.len(), sessions.into_columns(), &id)?,
    )?;
    let messages = std::mem::take(&mut result.messages);
    out.set_item(
        "messages",
        columns(py, messages.len(), messages.into_columns(), &id)?,
    )?;
    match result.trace.take() {
        Some(t) => out.set_item("traces", columns(py, t.len(), t.into_columns(), &id)?)?,
        None => out.set_item("traces", py.None())?,
    }
    match result.events.take() {
        Some(e) => out.set_item("events", columns(py, e.len(), e.into_columns(), &id)?)?,
        None => out.set_item("events", py.None())?,
    }
    out.set_item("meta", run_meta(py, &mut result)?)?;
    Ok(out)
}

/// `run`'s `meta`: identity, counts, times and the capture files written.
fn run_meta<'py>(py: Python<'py>, result: &mut RunResult) -> PyResult<Bound<'py, PyDict>> {
    let meta = PyDict::new(py);
    meta.set_item("scenario_hash", &result.scenario_hash)?;
    meta.set_item("seed", result.seed)?;
    meta.set_item("version", result.version)?;
    meta.set_item("events", result.events_processed)?;
    meta.set_item("packets", result.packets)?;
    meta.set_item("wall_s", result.wall_s)?;
    meta.set_item("sim_time_s", result.sim_time_s)?;
    if let Some(c) = result.capture.take() {
        let files = PyList::empty(py);
        for (path, packets) in c.files {
            let f = PyDict::new(py);
            f.set_item("path", path)?;
            f.set_item("packets", packets)?;
            files.append(f)?;
        }
        meta.set_item("pcap", files)?;
    }
    Ok(meta)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(congestion_controls, m)?)?;
    m.add_function(wrap_pyfunction!(expand, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_hash, m)?)?;
    m.add_function(wrap_pyfunction!(burst_mean_loss, m)?)?;
    m.add_function(wrap_pyfunction!(burst_start_for_mean_loss, m)?)?;
    m.add_function(wrap_pyfunction!(parse_quantity, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(pcap_files, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(channel_series, m)?)?;
    m.add_function(wrap_pyfunction!(request_stop, m)?)?;
    #[cfg(target_os = "linux")]
    m.add_class::<emulate::Emulator>()?;
    Ok(())
}
