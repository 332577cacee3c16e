"""Real stacks on vtlab's links: two network namespaces joined through a scenario's
path in real time (docs/emulation.md).

The links, queue discs and loss models are the simulation's own, run by the compiled
core's real-time driver (``vtlab._core.Emulator``, a thread that never holds the GIL)
between two TAP devices.  This module does the operating system's part with ``ip``:
it checks the privileges before anything is created, creates the namespaces
``vtlab-<pid>-near`` (the first flow's receiver) and ``vtlab-<pid>-far`` (its
sender), moves one device into each as ``vtlab0``, addresses them, runs commands in
them and removes everything again: on every exit path of :meth:`Emulation.close`, and,
for an emulator that was killed, at the next start (:func:`cleanup_stale`: namespaces
whose owner's PID is no longer alive).  The host's own interfaces and routes are never
touched: the devices are created in the host namespace only to be moved at once, and
every address and route lives inside the two namespaces.

    >>> sc = vtlab.Scenario.preset("v2g", loss={"mean_loss": "1%"})
    >>> with vtlab.emulate(sc, seed=3) as em:    # doctest: +SKIP
    ...     em.run("ping -c 3 $VTLAB_PEER", side="near")
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from vtlab import _core
from vtlab.errors import CliError
from vtlab.scenario import Scenario, ScenarioLike

__all__ = [
    "SIDES",
    "TUN_ENV",
    "Emulation",
    "EmulateError",
    "cleanup_stale",
    "cpu_mask",
    "split_cpus",
    "emulate",
    "format_counters",
    "preflight",
]

#: The clone device of TUN/TAP; the environment variable ``VTLAB_TUN`` names another
#: one (the tests point it at a missing file to check the error).
TUN_DEFAULT = "/dev/net/tun"
TUN_ENV = "VTLAB_TUN"

#: The two ends: near is the first flow's receiver (the vehicle in v2g, the laptop in
#: lte-cabin), far its sender (the charger's backend, the server).
SIDES = ("near", "far")

#: Interface name inside each namespace, addresses and MAC addresses per side.
IFACE = "vtlab0"
ADDRESSES = {
    "near": {"ipv4": "10.0.23.2", "ipv6": "fe80::2", "mac": "02:76:74:00:23:02"},
    "far": {"ipv4": "10.0.23.1", "ipv6": "fe80::1", "mac": "02:76:74:00:23:01"},
}

#: Capability bit of CAP_NET_ADMIN in /proc/self/status's CapEff.
CAP_NET_ADMIN = 12

#: Seconds a command gets to end after SIGTERM before SIGKILL.
TERM_GRACE_S = 2.0

#: Where the kernel takes the CPUs that process a device's received frames (RPS).
RPS_CPUS = f"/sys/class/net/{IFACE}/queues/rx-0/rps_cpus"

_STALE = re.compile(r"^vtlab-(\d+)-(near|far)$")

#: Namespaces of the emulations open in this process (never stale).
_OPEN: set[str] = set()


class EmulateError(CliError):
    """The emulator cannot run here (privileges, devices, ``ip``) or a step failed;
    printed by the command line as one ``error:`` line, exit status 2."""


def _has_net_admin() -> bool:
    """Whether this process holds CAP_NET_ADMIN (root normally does)."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return False
    match = re.search(r"^CapEff:\s*([0-9a-f]+)$", status, re.M)
    return bool(match and int(match.group(1), 16) >> CAP_NET_ADMIN & 1)


def preflight(tun: str) -> None:
    """Refuse, before anything is created, where the emulator cannot run: not Linux,
    no root or CAP_NET_ADMIN, no TUN/TAP device, no ``ip``, no network namespaces."""
    if not sys.platform.startswith("linux"):
        raise EmulateError("emulate", f"needs Linux (network namespaces), not {sys.platform}")
    if not hasattr(_core, "Emulator"):
        raise EmulateError("emulate", "this build of vtlab has no emulator (Linux only)")
    if not _has_net_admin():
        raise EmulateError(
            "emulate", "needs root or CAP_NET_ADMIN to create namespaces and TAP devices"
        )
    if not os.path.exists(tun):
        raise EmulateError(tun, "no TUN/TAP device (load the tun module: modprobe tun)")
    try:
        os.close(os.open(tun, os.O_RDWR))
    except OSError as e:
        raise EmulateError(tun, f"cannot open the TUN/TAP device: {e.strerror}") from None
    if shutil.which("ip") is None:
        raise EmulateError("emulate", "needs the ip command (iproute2)")
    if not os.path.exists("/proc/self/ns/net"):
        raise EmulateError("emulate", "this kernel has no network namespaces")
    if subprocess.run(["ip", "netns", "list"], capture_output=True).returncode != 0:
        raise EmulateError("emulate", "'ip netns list' fails: no network namespace support")


def _ip(*args: str) -> str:
    done = subprocess.run(["ip", *args], capture_output=True, text=True)
    if done.returncode != 0:
        problem = (done.stderr.strip().splitlines() or ["failed"])[0]
        raise EmulateError("ip " + " ".join(args), problem)
    return done.stdout


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_namespace(name: str) -> None:
    """SIGKILL every process left in namespace ``name``, then delete it."""
    done = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True)
    for pid in done.stdout.split():
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pid), signal.SIGKILL)
    subprocess.run(["ip", "netns", "del", name], capture_output=True)


def cleanup_stale() -> list[str]:
    """Remove the namespaces (and the processes in them) of emulators that were
    killed: ``vtlab-<pid>-near``/``-far`` whose PID is no longer alive (or is this
    process's, reused, without an open emulation of ours). Their TAP devices went with
    the killed process.  Returns the names removed."""
    done = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    removed = []
    for line in done.stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        match = _STALE.match(name)
        if not match or name in _OPEN:
            continue
        pid = int(match.group(1))
        # Our own PID: left by an earlier process that had it (not open here).
        if pid == os.getpid() or not _alive(pid):
            _kill_namespace(name)
            removed.append(name)
    return removed


def cpu_mask(cpus: set[int]) -> str:
    """``cpus`` as the kernel writes a CPU mask: hexadecimal, in groups of 32 CPUs
    separated by commas, the highest group first."""
    bits = sum(1 << c for c in cpus)
    groups = [bits >> 32 * k & 0xFFFFFFFF for k in range(max(1, -(-bits.bit_length() // 32)))]
    return ",".join([f"{groups[-1]:x}", *(f"{g:08x}" for g in reversed(groups[:-1]))])


def split_cpus(cpus: set[int]) -> tuple[int | None, set[int]]:
    """The CPU for the emulator's loop (the highest of ``cpus``, the CPUs this process
    may use) and the others, which process the frames the loop writes into the
    namespaces; ``(None, set())`` with one CPU."""
    if len(cpus) < 2:
        return None, set()
    loop = max(cpus)
    return loop, cpus - {loop}


class Emulation:
    """Two namespaces joined through ``scenario``'s path, in real time, from
    :meth:`open` (or ``with``) to :meth:`close`.  ``namespaces[side]``,
    ``addresses[side]`` and :meth:`env` describe each end; :meth:`run` and
    :meth:`popen` run commands there.  :attr:`counters` holds the link counters after
    :meth:`close`."""

    def __init__(
        self,
        scenario: ScenarioLike,
        *,
        seed: int = 1,
        log: str | os.PathLike[str] | None = None,
        pcap: str | os.PathLike[str] | None = None,
        tun: str | None = None,
        realtime: bool = True,
    ) -> None:
        self.scenario = Scenario.coerce(scenario)
        self.seed = seed
        self.log = None if log is None else str(log)
        self.pcap = None if pcap is None else str(pcap)
        self.tun = tun or os.environ.get(TUN_ENV) or TUN_DEFAULT
        self.realtime = realtime
        self.cpu, self._stack_cpus = split_cpus(os.sched_getaffinity(0))
        pid = os.getpid()
        self.namespaces = {side: f"vtlab-{pid}-{side}" for side in SIDES}
        self._taps = {"far": f"vt{pid}f", "near": f"vt{pid}n"}
        self.addresses = {side: dict(a, iface=IFACE) for side, a in ADDRESSES.items()}
        self.nodes: dict[str, str] = {}
        self.mtu = 0
        self.counters: dict[str, Any] | None = None
        self._core: Any = None
        self._created: list[str] = []
        self._procs: list[subprocess.Popen[Any]] = []

    def __enter__(self) -> Emulation:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> None:
        """Check, create the devices and namespaces, and start carrying frames."""
        preflight(self.tun)
        cleanup_stale()
        self._core = _core.Emulator(
            self.scenario.to_json(),
            self.seed,
            self._taps["far"],
            self._taps["near"],
            self.tun,
            log=self.log,
            pcap=self.pcap,
            realtime=self.realtime,
            cpu=self.cpu,
        )
        self.nodes = {"near": self._core.near, "far": self._core.far}
        self.mtu = self._core.mtu
        try:
            for side in ("far", "near"):
                self._namespace(side)
            self._core.start()
        except BaseException:
            self.close()
            raise

    def _namespace(self, side: str) -> None:
        ns, tap, a = self.namespaces[side], self._taps[side], self.addresses[side]
        if ns in _OPEN:
            raise EmulateError("emulate", "one emulation at a time in a process")
        # Recorded first: a signal during `ip netns add` (which may have made it) still
        # leaves the name for close() to remove.
        self._created.append(ns)
        _OPEN.add(ns)
        _ip("netns", "add", ns)
        _ip("link", "set", "dev", tap, "netns", ns)
        _ip("-n", ns, "link", "set", "dev", tap, "name", IFACE)
        _ip("-n", ns, "link", "set", "dev", IFACE, "address", a["mac"], "mtu", str(self.mtu))
        _ip("-n", ns, "link", "set", "dev", IFACE, "addrgenmode", "none")
        _ip("-n", ns, "addr", "add", f"{a['ipv4']}/24", "dev", IFACE)
        _ip("-n", ns, "addr", "add", f"{a['ipv6']}/64", "dev", IFACE, "nodad")
        _ip("-n", ns, "link", "set", "dev", "lo", "up")
        _ip("-n", ns, "link", "set", "dev", IFACE, "up")
        if self._stack_cpus:
            # Frames the loop writes are processed on the other CPUs. Best effort: a
            # kernel without RPS processes them on the loop's thread, only slower.
            mask = cpu_mask(self._stack_cpus)
            subprocess.run(
                ["ip", "netns", "exec", ns, "sh", "-c", f"echo {mask} > {RPS_CPUS}"],
                capture_output=True,
            )

    def env(self, side: str, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment of a command at ``side``: ``base`` (default: this
        process's) with VTLAB_PEER (the other end's IPv4 address), VTLAB_PEER6 (its
        IPv6 link-local address with ``%vtlab0``), VTLAB_SELF, VTLAB_NETNS and
        VTLAB_IFACE."""
        _check_side(side)
        peer = self.addresses["far" if side == "near" else "near"]
        env = dict(os.environ if base is None else base)
        env.update(
            VTLAB_PEER=peer["ipv4"],
            VTLAB_PEER6=f"{peer['ipv6']}%{IFACE}",
            VTLAB_SELF=self.addresses[side]["ipv4"],
            VTLAB_NETNS=self.namespaces[side],
            VTLAB_IFACE=IFACE,
        )
        return env

    def argv(self, cmd: str | Sequence[str], side: str) -> list[str]:
        """The command line that runs ``cmd`` (a shell string or an argument list) in
        ``side``'s namespace."""
        _check_side(side)
        words = ["sh", "-c", cmd] if isinstance(cmd, str) else list(cmd)
        return ["ip", "netns", "exec", self.namespaces[side], *words]

    def popen(
        self, cmd: str | Sequence[str], side: str = "near", **kwargs: Any
    ) -> subprocess.Popen[Any]:
        """Start ``cmd`` in ``side``'s namespace (its own process group unless
        ``start_new_session=False``); it is ended by :meth:`close`."""
        if self._core is None:
            raise EmulateError("emulate", "the emulation is not open")
        kwargs.setdefault("start_new_session", True)
        kwargs["env"] = self.env(side, kwargs.get("env"))
        proc = subprocess.Popen(self.argv(cmd, side), **kwargs)
        self._procs.append(proc)
        return proc

    def run(
        self,
        cmd: str | Sequence[str],
        side: str = "near",
        *,
        timeout: float | None = None,
        **kwargs: Any,
    ) -> subprocess.CompletedProcess[Any]:
        """Run ``cmd`` in ``side``'s namespace to its end (as :func:`subprocess.run`;
        on a timeout or an exception its process group is killed)."""
        if kwargs.pop("capture_output", False):
            kwargs.update(stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        with self.popen(cmd, side, **kwargs) as proc:
            try:
                out, err = proc.communicate(timeout=timeout)
            except BaseException:
                _end(proc)
                raise
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    def running(self) -> bool:
        """Whether the driver still carries frames (it stops on an I/O error)."""
        return self._core is not None and self._core.running()

    def close(self) -> dict[str, Any] | None:
        """End the commands, stop the driver, remove the namespaces (and with the
        driver's devices).  Safe to call more than once; returns the counters."""
        errors: list[BaseException] = []
        try:
            for proc in self._procs:
                _end(proc)
            self._procs.clear()
            if self._core is not None:
                try:
                    self.counters = self._core.stop()
                except OSError as e:
                    errors.append(e)
                self._core = None
        finally:  # the namespaces go even if ending a command or the driver failed
            for ns in self._created:
                _kill_namespace(ns)
                _OPEN.discard(ns)
            self._created.clear()
        if errors:
            raise EmulateError("emulate", f"the driver failed: {errors[0]}")
        return self.counters


def _check_side(side: str) -> None:
    if side not in SIDES:
        raise EmulateError("side", f"{side!r} is not one of 'near', 'far'")


def _end(proc: subprocess.Popen[Any]) -> None:
    """SIGTERM ``proc``'s process group (or ``proc`` alone when it shares ours), then
    SIGKILL after :data:`TERM_GRACE_S`."""
    if proc.poll() is not None:
        return
    own_group = os.getpgid(0)

    def send(sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            group = os.getpgid(proc.pid)
            if group != own_group:
                os.killpg(group, sig)
            else:
                proc.send_signal(sig)

    send(signal.SIGTERM)
    try:
        proc.wait(TERM_GRACE_S)
    except subprocess.TimeoutExpired:
        send(signal.SIGKILL)
        proc.wait()


def emulate(scenario: ScenarioLike, **options: Any) -> Emulation:
    """An :class:`Emulation` of ``scenario`` (a preset name, a dict or a
    :class:`Scenario`), to be used with ``with``; ``options``: seed, log (a CSV file
    of every decision), pcap (a directory for near.pcap and far.pcap), tun (the clone
    device), realtime (run the links at real-time priority; the default)."""
    return Emulation(scenario, **options)


def format_counters(report: Mapping[str, Any]) -> str:
    """The link counters of a run as a plain table, one row per path direction."""
    cols = ["link", "direction", "frames", "bytes", "drops_queue", "drops_aqm"]
    cols += ["drops_loss", "drops_harq", "queue_max"]
    rows = [[str(c[k]) for k in cols] for c in report["counters"]]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(cols)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(cols, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in rows]
    refused = sum(report["refused"])
    tail = f"{report['seconds']:.1f} s; frames read {report['read'][0]} far, "
    tail += f"{report['read'][1]} near; refused by the kernel {refused}; "
    tail += f"emulator busy {report['cpu_seconds'] / max(report['seconds'], 1e-9):.0%} "
    tail += "at real-time priority" if report["realtime"] else "at normal priority"
    late = [
        f"{way} p50 {x['p50_ns'] / 1e3:.0f} µs, p99 {x['p99_ns'] / 1e3:.0f} µs, "
        f"max {x['max_ns'] / 1e3:.0f} µs"
        for way, x in zip(("far->near", "near->far"), report["lateness"], strict=True)
        if x["frames"]
    ]
    if late:
        tail += "\nwritten after the links delivered: " + "; ".join(late)
    return "\n".join([*lines, tail])
