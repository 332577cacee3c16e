//! `vtlab._core.Emulator`: the real-time driver of vtlab-core's `emu`
//! module, run in a thread of its own (it never holds the GIL).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use pyo3::exceptions::{PyOSError, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use vtlab_core::emu::driver::{Emulator as Driver, Options, Report};
use vtlab_core::emu::Path;
use vtlab_core::{spec, Plan};

use crate::to_py_err;

type Pending = (Driver, Plan, Path, u64);

/// Two TAP devices joined through a scenario's path in real time.
/// `Emulator(spec_json, seed, far_tap, near_tap, tun, log=None, pcap=None,
/// realtime=False, cpu=None)`
/// checks the scenario, then creates the devices; `start()` runs the links,
/// `stop()` ends the run and returns its counters.
#[pyclass(module = "vtlab._core")]
pub struct Emulator {
    #[pyo3(get)]
    near: String,
    #[pyo3(get)]
    far: String,
    #[pyo3(get)]
    mtu: u32,
    stop: Arc<AtomicBool>,
    pending: Option<Pending>,
    handle: Option<JoinHandle<Result<Report, String>>>,
}

#[pymethods]
impl Emulator {
    #[new]
    #[pyo3(signature = (spec_json, seed, far_tap, near_tap, tun, log=None, pcap=None, realtime=false, cpu=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        spec_json: &str,
        seed: u64,
        far_tap: &str,
        near_tap: &str,
        tun: PathBuf,
        log: Option<PathBuf>,
        pcap: Option<PathBuf>,
        realtime: bool,
        cpu: Option<usize>,
    ) -> PyResult<Self> {
        let scenario = spec::resolve_json(spec_json).map_err(to_py_err)?;
        let plan = spec::plan(&scenario).map_err(to_py_err)?;
        let path = Path::of(&plan).map_err(to_py_err)?;
        let options = Options {
            log,
            pcap,
            realtime,
            cpu,
        };
        let driver = Driver::open(&tun, far_tap, near_tap, &options).map_err(PyOSError::new_err)?;
        Ok(Emulator {
            near: path.near.clone(),
            far: path.far.clone(),
            mtu: path.mtu,
            stop: Arc::new(AtomicBool::new(false)),
            pending: Some((driver, plan, path, seed)),
            handle: None,
        })
    }

    /// Start the links' clock and carry frames, in a thread of its own.
    fn start(&mut self) -> PyResult<()> {
        let Some((driver, plan, path, seed)) = self.pending.take() else {
            return Err(PyRuntimeError::new_err("the emulator was started already"));
        };
        let stop = Arc::clone(&self.stop);
        self.handle = Some(std::thread::spawn(move || {
            driver.run(&plan, path, seed, &stop)
        }));
        Ok(())
    }

    /// Whether the driver thread is still carrying frames.
    fn running(&self) -> bool {
        self.handle.as_ref().is_some_and(|h| !h.is_finished())
    }

    /// Stop carrying frames and return the run's counters (None if it never
    /// started); an error the driver met is raised as OSError.
    fn stop<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.stop.store(true, Ordering::Relaxed);
        self.pending = None; // closing unused devices removes them
        let Some(handle) = self.handle.take() else {
            return Ok(None);
        };
        let outcome = py.detach(|| handle.join());
        let report = outcome
            .map_err(|_| PyRuntimeError::new_err("the emulator's thread panicked"))?
            .map_err(PyOSError::new_err)?;
        report_dict(py, &report).map(Some)
    }
}

fn report_dict<'py>(py: Python<'py>, r: &Report) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    let rows = PyList::empty(py);
    for c in &r.counters {
        let d = PyDict::new(py);
        d.set_item("link", &c.row.link)?;
        d.set_item("direction", &c.row.direction)?;
        d.set_item("frames", c.row.packets_carried)?;
        d.set_item("bytes", c.row.bytes_carried)?;
        d.set_item("drops_queue", c.row.drops_queue)?;
        d.set_item("drops_aqm", c.row.qdisc_drops_aqm)?;
        d.set_item("drops_loss", c.row.drops_link_error - c.row.drops_harq)?;
        d.set_item("drops_harq", c.row.drops_harq)?;
        d.set_item("queue_max", c.queue_max)?;
        rows.append(d)?;
    }
    out.set_item("counters", rows)?;
    out.set_item("read", r.read.to_vec())?;
    out.set_item("written", r.written.to_vec())?;
    out.set_item("refused", r.refused.to_vec())?;
    out.set_item("seconds", r.seconds)?;
    out.set_item("cpu_seconds", r.cpu_seconds)?;
    out.set_item("realtime", r.realtime)?;
    let late = PyList::empty(py);
    for l in &r.lateness {
        let d = PyDict::new(py);
        d.set_item("frames", l.count)?;
        d.set_item("p50_ns", l.quantile_ns(0.5))?;
        d.set_item("p99_ns", l.quantile_ns(0.99))?;
        d.set_item("p999_ns", l.quantile_ns(0.999))?;
        d.set_item("max_ns", l.max_ns)?;
        late.append(d)?;
    }
    out.set_item("lateness", late)?;
    Ok(out)
}
