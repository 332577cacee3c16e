//! The real-time loop: frames read from one TAP device enter the path's
//! links at the monotonic clock's time (integer ns since the start), the
//! links run every event when its time has come, and frames that reach the
//! end of their way are written to the other TAP device.
//!
//! With [`Options::realtime`] (the command's default) it runs at the lowest
//! real-time priority (SCHED_FIFO 1) and sleeps in `ppoll` (1 ns timer
//! slack) until the next event is due or a frame arrives; it never spins: a
//! real-time thread that kept a CPU busy would be throttled by the kernel
//! (50 ms in every second by default). At normal priority it sleeps until
//! [`SPIN_NS`] before the next event, then polls without sleeping.
//!
//! A write to a TAP device runs the receiving namespace's network stack on
//! the writer's thread (its TCP receive path, or the sender's whole reaction
//! to an ACK). With [`Options::cpu`] the loop stays on that CPU, and the
//! caller steers the namespaces' receive processing to the other CPUs (RPS),
//! so that the stacks' work does not delay the frames due next.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path as FsPath, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use pcap_file::pcap::{PcapPacket, PcapWriter};

use super::relay::{Counter, Relay, ETHERNET_HEADER, WAYS};
use super::tap::Tap;
use super::Path;
use crate::engine::Time;
use crate::sim::capture::ethernet_pcap;
use crate::sim::Plan;

/// Without real-time priority, the loop stops sleeping this long before
/// the next event (waking from `ppoll` takes tens of µs).
pub const SPIN_NS: u64 = 60_000;

/// Longest sleep, so that a stop request is seen within it.
const MAX_WAIT_NS: u64 = 20_000_000;

/// Frames read from one device before the links run again.
const READ_BATCH: usize = 64;

/// Frames read from one device in every pass, even when events are due.
const READ_FIRST: usize = 4;

/// Largest frame read: a 64 KiB IP packet and its Ethernet header.
const MAX_FRAME: usize = 65_536 + ETHERNET_HEADER;

/// Where the emulator writes what it did.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Every decision as CSV (`time_ns,way,frame,link,direction,fate`).
    pub log: Option<PathBuf>,
    /// A directory for `near.pcap` and `far.pcap`: the frames each end sent
    /// and received, at the time the emulator read or wrote them.
    pub pcap: Option<PathBuf>,
    /// Run at real-time priority (needs CAP_SYS_NICE; ignored without it).
    pub realtime: bool,
    /// Keep the loop on this CPU (ignored if the process may not use it, or
    /// beyond the 1024 CPUs of a `cpu_set_t`).
    pub cpu: Option<usize>,
}

/// What a run did.
#[derive(Clone, Debug)]
pub struct Report {
    /// The path's directions, way 0 (far → near) first.
    pub counters: Vec<Counter>,
    /// Per way: frames read at its entry, written at its exit, and refused
    /// by the kernel at its exit.
    pub read: [u64; 2],
    pub written: [u64; 2],
    pub refused: [u64; 2],
    pub seconds: f64,
    /// CPU time the emulator's thread used (its share of `seconds` is how
    /// busy it was).
    pub cpu_seconds: f64,
    /// Whether the loop ran at real-time priority (asked for and granted).
    pub realtime: bool,
    /// Per way: how late frames were written, after the time the links
    /// delivered them (the emulator's own error).
    pub lateness: [Lateness; 2],
}

/// A histogram of lateness in 1 µs bins up to [`Lateness::RANGE_US`], and
/// the largest value.
#[derive(Clone, Debug)]
pub struct Lateness {
    bins: Vec<u64>,
    pub max_ns: u64,
    pub count: u64,
}

impl Default for Lateness {
    fn default() -> Self {
        Lateness {
            bins: vec![0; Self::RANGE_US as usize + 1],
            max_ns: 0,
            count: 0,
        }
    }
}

impl Lateness {
    /// Bins of 1 µs cover 0 to 10 ms; later frames share the last bin.
    pub const RANGE_US: u64 = 10_000;

    fn add(&mut self, ns: u64) {
        self.bins[(ns / 1000).min(Self::RANGE_US) as usize] += 1;
        self.max_ns = self.max_ns.max(ns);
        self.count += 1;
    }

    /// The `q` quantile in ns (the upper edge of its 1 µs bin; the maximum
    /// beyond the range), 0 without frames.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        let want = (q.clamp(0.0, 1.0) * self.count as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (us, &n) in self.bins.iter().enumerate() {
            seen += n;
            if seen >= want && self.count > 0 {
                return if us as u64 == Self::RANGE_US {
                    self.max_ns
                } else {
                    ((us as u64 + 1) * 1000).min(self.max_ns)
                };
            }
        }
        0
    }
}

/// The TAP devices and output files of an emulation, opened before it runs.
pub struct Emulator {
    /// `[far, near]`: way `w` reads `taps[w]` and writes `taps[1 - w]`.
    taps: [Tap; 2],
    log: Option<BufWriter<File>>,
    /// `[far, near]`, like the devices.
    pcaps: Option<[PcapWriter<BufWriter<File>>; 2]>,
    realtime: bool,
    cpu: Option<usize>,
}

impl Emulator {
    /// Create the TAP devices `far` and `near` through `tun`, and the output
    /// files. Errors are one line each.
    pub fn open(tun: &FsPath, far: &str, near: &str, options: &Options) -> Result<Self, String> {
        let log = match &options.log {
            Some(p) => {
                let f = File::create(p).map_err(|e| format!("--log: {}: {e}", p.display()))?;
                let mut w = BufWriter::new(f);
                writeln!(w, "time_ns,way,frame,link,direction,fate")
                    .map_err(|e| format!("--log: {}: {e}", p.display()))?;
                Some(w)
            }
            None => None,
        };
        let pcaps = match &options.pcap {
            Some(dir) => {
                std::fs::create_dir_all(dir)
                    .map_err(|e| format!("--pcap: {}: {e}", dir.display()))?;
                let open =
                    |n: &str| ethernet_pcap(&dir.join(n)).map_err(|e| format!("--pcap: {e}"));
                Some([open("far.pcap")?, open("near.pcap")?])
            }
            None => None,
        };
        let tap = |name: &str| {
            Tap::open(tun, name)
                .map_err(|e| format!("{}: cannot create TAP device {name}: {e}", tun.display()))
        };
        Ok(Emulator {
            taps: [tap(far)?, tap(near)?],
            log,
            pcaps,
            realtime: options.realtime,
            cpu: options.cpu,
        })
    }

    /// Run `path` of `plan` with `seed` until `stop` is set.
    pub fn run(
        self,
        plan: &Plan,
        path: Path,
        seed: u64,
        stop: &AtomicBool,
    ) -> Result<Report, String> {
        let realtime = timing(self.realtime, self.cpu);
        let spin = if realtime { 0 } else { SPIN_NS };
        let record = self.log.is_some();
        let mut run = Run {
            relay: Relay::new(plan, path, seed, record),
            em: self,
            start: Instant::now(),
            read: [0; 2],
            written: [0; 2],
            refused: [0; 2],
            lateness: Default::default(),
            buf: vec![0; MAX_FRAME],
            realtime,
        };
        let mut ready = [true; 2];
        while !stop.load(Ordering::Relaxed) {
            for (w, &r) in ready.iter().enumerate() {
                if r {
                    run.read(w)?;
                }
            }
            let now = run.now();
            run.relay.advance(now);
            run.flush()?;
            let next = run.relay.next_event().map_or(u64::MAX, |t| t.0);
            let wait = next.saturating_sub(run.now().0).min(MAX_WAIT_NS);
            ready = run.poll(wait.saturating_sub(spin))?;
        }
        run.finish()
    }
}

/// Best effort: 1 ns timer slack, the thread on `cpu`, and with `realtime`
/// the lowest real-time priority (SCHED_FIFO 1, so that busy processes do not
/// delay the links). Whether it runs at real-time priority: a thread without
/// the privilege stays at normal priority.
fn timing(realtime: bool, cpu: Option<usize>) -> bool {
    let param = libc::sched_param { sched_priority: 1 };
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument; sched_setaffinity
    // reads one cpu_set_t (the CPU is within it); sched_setscheduler reads one
    // sched_param. Failures leave the thread as it was.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
        if let Some(cpu) = cpu.filter(|&c| c < libc::CPU_SETSIZE as usize) {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
        realtime && libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) == 0
    }
}

/// CPU time of the calling thread.
fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to fill; on failure it stays zero.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

struct Run {
    relay: Relay,
    em: Emulator,
    start: Instant,
    read: [u64; 2],
    written: [u64; 2],
    refused: [u64; 2],
    lateness: [Lateness; 2],
    buf: Vec<u8>,
    realtime: bool,
}

impl Run {
    fn now(&self) -> Time {
        Time(self.start.elapsed().as_nanos() as u64)
    }

    /// Wait up to `ns` for a frame on either device; which have one.
    fn poll(&self, ns: u64) -> Result<[bool; 2], String> {
        let mut fds = self.em.taps.each_ref().map(|t| libc::pollfd {
            fd: t.raw(),
            events: libc::POLLIN,
            revents: 0,
        });
        let ts = libc::timespec {
            tv_sec: (ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (ns % 1_000_000_000) as libc::c_long,
        };
        // SAFETY: two valid pollfds and a valid timespec.
        let n = unsafe { libc::ppoll(fds.as_mut_ptr(), 2, &ts, std::ptr::null()) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                return Ok([true; 2]);
            }
            return Err(format!("poll: {e}"));
        }
        let bad = libc::POLLERR | libc::POLLHUP | libc::POLLNVAL;
        if let Some(f) = fds.iter().find(|f| f.revents & bad != 0) {
            return Err(format!("TAP device failed (poll events {:#x})", f.revents));
        }
        Ok(fds.map(|f| f.revents & libc::POLLIN != 0))
    }

    /// Read up to [`READ_BATCH`] frames that entered way `w`; after the
    /// first [`READ_FIRST`], stop when an event of the links is due, so that
    /// a burst of arrivals does not hold back the frames due to be written.
    fn read(&mut self, w: usize) -> Result<(), String> {
        for k in 0..READ_BATCH {
            let now = self.now();
            if k >= READ_FIRST && self.relay.next_event().is_some_and(|t| t <= now) {
                return Ok(());
            }
            let n = match self.em.taps[w].read(&mut self.buf) {
                Ok(Some(n)) => n,
                Ok(None) => return Ok(()),
                Err(e) => return Err(format!("reading {}: {e}", self.em.taps[w].name)),
            };
            let now = self.now();
            self.read[w] += 1;
            let frame = self.buf[..n].to_vec();
            self.capture(w, now, &frame)?;
            self.relay.offer(now, w, frame);
        }
        Ok(())
    }

    /// Write the frames that reached the end of their way, and log.
    fn flush(&mut self) -> Result<(), String> {
        let delivered: Vec<_> = self.relay.take_delivered().collect();
        for (w, due, frame) in delivered {
            let now = self.now();
            self.lateness[usize::from(w)].add(now.0.saturating_sub(due.0));
            let side = 1 - usize::from(w);
            let tap = &self.em.taps[side];
            match tap.write(&frame) {
                Ok(true) => self.written[usize::from(w)] += 1,
                Ok(false) => self.refused[usize::from(w)] += 1,
                Err(e) => return Err(format!("writing {}: {e}", tap.name)),
            }
            self.capture(side, now, &frame)?;
        }
        let Some(log) = self.em.log.as_mut() else {
            return Ok(());
        };
        let decisions: Vec<_> = self.relay.take_decisions().collect();
        for d in decisions {
            let (link, dir) = self.relay.dir_name(d.dir);
            writeln!(
                log,
                "{},{},{},{link},{dir},{}",
                d.time.0,
                WAYS[usize::from(d.way)],
                d.frame,
                d.fate.name()
            )
            .map_err(|e| format!("--log: {e}"))?;
        }
        Ok(())
    }

    /// Record `frame` at device `side` (`[far, near]`).
    fn capture(&mut self, side: usize, now: Time, frame: &[u8]) -> Result<(), String> {
        if let Some(p) = self.em.pcaps.as_mut() {
            let ts = std::time::Duration::from_nanos(now.0);
            p[side]
                .write_packet(&PcapPacket::new(ts, frame.len() as u32, frame))
                .map_err(|e| format!("--pcap: {e}"))?;
        }
        Ok(())
    }

    fn finish(mut self) -> Result<Report, String> {
        self.flush()?;
        if let Some(log) = self.em.log.as_mut() {
            log.flush().map_err(|e| format!("--log: {e}"))?;
        }
        if let Some(pcaps) = self.em.pcaps.take() {
            for p in pcaps {
                p.into_writer()
                    .flush()
                    .map_err(|e| format!("--pcap: {e}"))?;
            }
        }
        Ok(Report {
            counters: self.relay.counters(),
            read: self.read,
            written: self.written,
            refused: self.refused,
            seconds: self.start.elapsed().as_secs_f64(),
            cpu_seconds: thread_cpu_seconds(),
            realtime: self.realtime,
            lateness: self.lateness,
        })
    }
}
