"""`vtlab emulate` with real processes in real network namespaces (CI runs as root).

Every expected value is derived by hand in the test: the replayed loss positions, the
goodput bound of a 40 Mbit/s cable, the exit statuses. Each emulation runs under a
timeout of its own, and every test checks that nothing is left behind."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.geteuid() != 0,
    reason="the emulator needs root (network namespaces, TAP devices); CI runs as root",
)

VTLAB = [sys.executable, "-m", "vtlab"]

ECHO_SERVER = """
import socket
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.bind(("::", 9000))
while True:
    data, peer = s.recvfrom(2048)
    s.sendto(data, peer)
"""

# Sends to each address given until a reply comes back (ARP and neighbour discovery
# first); prints one "ok ADDRESS" line per address answered.
ECHO_CLIENT = """
import socket, sys
for addr in sys.argv[1:]:
    family, _, _, _, where = socket.getaddrinfo(addr, 9000, type=socket.SOCK_DGRAM)[0]
    s = socket.socket(family, socket.SOCK_DGRAM)
    s.settimeout(0.5)
    for attempt in range(20):
        s.sendto(b"hello", where)
        try:
            if s.recvfrom(2048)[0] == b"hello":
                print("ok", addr)
                break
        except TimeoutError:
            pass
"""


def _script(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    path.chmod(0o644)
    return f"{sys.executable} {path}"


def _namespaces() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.startswith("vtlab-")}


def _links() -> str:
    return subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout


def _emulate(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*VTLAB, "emulate", *args], capture_output=True, text=True, timeout=timeout
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (not yet reaped by its parent) no longer runs.
    state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    return state != "Z"


def _wait_for(predicate, seconds: float = 20) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


@pytest.fixture(autouse=True)
def _nothing_left_behind():
    before = _namespaces()
    yield
    assert _namespaces() <= before


def test_ipv4_ipv6_link_local_and_multicast_cross_the_cable(tmp_path):
    server = _script(tmp_path, "echo_server.py", ECHO_SERVER)
    client = _script(tmp_path, "echo_client.py", ECHO_CLIENT)
    done = _emulate(
        "v2g",
        "--far",
        server,
        "--",
        client,
        "$VTLAB_PEER",
        "$VTLAB_PEER6",
        "ff02::1%vtlab0",
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines == ["ok 10.0.23.1", "ok fe80::1%vtlab0", "ok ff02::1%vtlab0"], done.stdout
    # The counters name both directions of both links of the path.
    for row in ("wan   sa->secc", "plc   secc->evcc", "plc   evcc->secc", "wan   secc->sa"):
        assert row in done.stderr


def test_the_exit_status_is_the_near_commands():
    assert _emulate("v2g", "-q", "--", "exit 7").returncode == 7


@pytest.mark.parametrize("preset", ["wired-wireless", "lte-cabin"])
def test_other_point_to_point_and_cellular_paths_carry_frames(tmp_path, preset):
    server = _script(tmp_path, "echo_server.py", ECHO_SERVER)
    client = _script(tmp_path, "echo_client.py", ECHO_CLIENT)
    done = _emulate(preset, "-q", "--far", server, "--", client, "$VTLAB_PEER6")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["ok fe80::1%vtlab0"]


def test_without_a_command_a_shell_runs_in_the_near_namespace():
    # The shell reads its commands from standard input here; its status is the run's.
    done = subprocess.run(
        [*VTLAB, "emulate", "v2g", "-q"],
        input="echo $VTLAB_PEER $VTLAB_NETNS\nexit 3\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 3, done.stderr
    peer, netns = done.stdout.split()
    assert peer == "10.0.23.1" and re.fullmatch(r"vtlab-\d+-near", netns)


def test_replayed_losses_hit_the_frames_at_their_positions(tmp_path):
    # Replay loses the frames at positions 1, 3 and 4 of the cable's direction
    # toward the EVCC (the loss model's stream, whatever the frames are): the log
    # must show exactly those lost there, every other frame delivered.
    server = _script(tmp_path, "echo_server.py", ECHO_SERVER)
    client = _script(tmp_path, "echo_client.py", ECHO_CLIENT)
    log = tmp_path / "decisions.csv"
    done = _emulate(
        "v2g",
        "--set",
        'loss={model="replay", drops=[1, 3, 4]}',
        "--log",
        str(log),
        "--far",
        server,
        "--",
        client,
        "$VTLAB_PEER",
    )
    assert done.returncode == 0, done.stderr
    rows = [line.split(",") for line in log.read_text().splitlines()[1:]]
    cable = [r for r in rows if r[3] == "plc" and r[4] == "secc->evcc"]
    assert len(cable) >= 6
    assert [int(r[2]) for r in cable] == list(range(len(cable)))
    lost = [int(r[2]) for r in cable if r[5] == "lost"]
    assert lost == [1, 3, 4]
    assert {r[5] for r in cable} == {"lost", "delivered"}
    # A frame lost on the cable never reaches the next link; others pass every hop.
    assert all(r[1] == "far->near" for r in cable)


def test_a_tcp_download_runs_at_the_cables_rate(tmp_path):
    # 12 MB over http.server at a 40 Mbit/s cable (the WAN is 500 Mbit/s). Linux
    # sends 1448 B of payload per 1500 B packet (timestamps on), 1502 B with the
    # cable's framing: at most 40e6 · 1448/1502 = 38.56 Mbit/s of payload. The
    # download includes the handshake and slow start, so at least 70 % of that.
    (tmp_path / "blob").write_bytes(os.urandom(12_000_000))
    server = f"{sys.executable} -m http.server 8000 --bind 10.0.23.1 --directory {tmp_path}"
    client = _script(
        tmp_path,
        "get.py",
        """
        import os, time, urllib.request
        url = f"http://{os.environ['VTLAB_PEER']}:8000/blob"
        for attempt in range(100):
            try:
                urllib.request.urlopen(url.replace("blob", ""), timeout=2).read()
                break
            except OSError:
                time.sleep(0.1)
        start = time.monotonic()
        n = len(urllib.request.urlopen(url, timeout=30).read())
        print(n, time.monotonic() - start)
        """,
    )
    done = _emulate("v2g", "--set", "plc_rate=40Mbps", "--far", server, "--", client)
    assert done.returncode == 0, done.stderr
    n, seconds = done.stdout.splitlines()[-1].split()
    assert int(n) == 12_000_000
    rate = int(n) * 8 / float(seconds)
    bound = 40e6 * 1448 / 1502
    assert 0.70 * bound < rate < 1.01 * bound, (rate, bound)


def _written(path: Path) -> bool:
    """Whether ``path`` exists and holds a line (a command wrote its PID there)."""
    try:
        return path.read_text().endswith("\n")
    except FileNotFoundError:
        return False


def _started(proc: subprocess.Popen[str], tmp_path: Path) -> tuple[int, int]:
    """Wait until ``proc``'s commands run (each has written its PID, in whichever
    order they start); their PIDs (far, near). If they do not, ``proc`` is stopped
    (its namespaces removed) before the test fails."""
    ns = {f"vtlab-{proc.pid}-near", f"vtlab-{proc.pid}-far"}
    ok = _wait_for(
        lambda: (
            ns <= _namespaces()
            and _written(tmp_path / "far.pid")
            and _written(tmp_path / "near.pid")
        )
    )
    if not ok:
        proc.terminate()
        proc.wait(timeout=30)
    assert ok, (tmp_path / "stderr").read_text()
    far = int((tmp_path / "far.pid").read_text())
    near = int((tmp_path / "near.pid").read_text())
    return far, near


def _sleepers(tmp_path: Path) -> subprocess.Popen[str]:
    far = f"echo $$ > {tmp_path}/far.pid; exec sleep 60"
    near = f"echo $$ > {tmp_path}/near.pid; exec sleep 60"
    # Files, not pipes: the sleepers of a killed emulator would hold pipes open.
    with open(tmp_path / "stderr", "w") as err:
        return subprocess.Popen(
            [*VTLAB, "emulate", "v2g", "--wait", "0", "--far", far, "--", near],
            stdout=subprocess.DEVNULL,
            stderr=err,
            text=True,
        )


def test_sigterm_removes_namespaces_devices_and_processes(tmp_path):
    proc = _sleepers(tmp_path)
    far, near = _started(proc, tmp_path)
    assert f"vt{proc.pid}n" not in _links()  # moved into its namespace at once
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    err = (tmp_path / "stderr").read_text()
    assert proc.returncode == 143, err
    assert "terminated" in err and "plc   secc->evcc" in err
    assert not any(n.startswith(f"vtlab-{proc.pid}-") for n in _namespaces())
    assert not _alive(far) and not _alive(near)
    assert f"vt{proc.pid}" not in _links()


def test_a_run_after_a_sigkilled_emulator_removes_its_leftovers(tmp_path):
    proc = _sleepers(tmp_path)
    far, near = _started(proc, tmp_path)
    proc.kill()
    proc.wait(timeout=30)
    left = {f"vtlab-{proc.pid}-near", f"vtlab-{proc.pid}-far"}
    assert left <= _namespaces()  # SIGKILL leaves the namespaces and their processes
    assert _alive(far)
    done = _emulate("v2g", "-q", "--", "true")
    assert done.returncode == 0, done.stderr
    assert not left & _namespaces()
    assert _wait_for(lambda: not _alive(far) and not _alive(near), 10)
    assert f"vt{proc.pid}" not in _links()  # the devices went with their process


def test_without_cap_net_admin_or_tun_one_error_line_and_nothing_created(tmp_path):
    before = _namespaces()
    # Root without CAP_NET_ADMIN in its bounding set (so not in its effective set).
    done = subprocess.run(
        ["setpriv", "--bounding-set=-net_admin", *VTLAB, "emulate", "v2g", "--", "true"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "error: emulate: needs root or CAP_NET_ADMIN to create namespaces and TAP devices"
    ]
    missing = tmp_path / "no-tun"
    done = subprocess.run(
        [*VTLAB, "emulate", "v2g", "--", "true"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "VTLAB_TUN": str(missing)},
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"error: {missing}: no TUN/TAP device (load the tun module: modprobe tun)"
    ]
    assert _namespaces() == before


def test_802_11_is_refused():
    done = _emulate("vanet-chain", "--", "true")
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert re.match(r"error: media: the scenario has the shared medium '\w+' \(802\.11\)", line)


def test_the_python_context_manager(tmp_path):
    import vtlab

    with vtlab.emulate("wired-wireless", seed=2) as em:
        assert em.nodes == {"near": "d", "far": "s"}
        assert set(em.namespaces.values()) <= _namespaces()
        got = em.run("ip -br addr show vtlab0", side="far", capture_output=True, text=True)
        assert "10.0.23.1/24" in got.stdout and "fe80::1/64" in got.stdout
        env = em.run("echo $VTLAB_PEER $VTLAB_PEER6", capture_output=True, text=True)
        assert env.stdout.split() == ["10.0.23.1", "fe80::1%vtlab0"]
        names = set(em.namespaces.values())
    assert not names & _namespaces()
    assert [c["link"] for c in em.counters["counters"]] == [
        "wired",
        "wireless",
        "wireless",
        "wired",
    ]


def test_cpu_masks_are_written_as_the_kernel_reads_them():
    from vtlab.emulation import cpu_mask, split_cpus

    # Bit k is CPU k, hexadecimal, 32 CPUs per comma-separated group, highest first.
    assert cpu_mask({0}) == "1"
    assert cpu_mask({1, 2}) == "6"
    assert cpu_mask({0, 32}) == "1,00000001"
    assert cpu_mask({35, 4}) == "8,00000010"
    # The loop gets the highest CPU, the namespaces' receive processing the others.
    assert split_cpus({0, 1}) == (1, {0})
    assert split_cpus({2, 5, 7}) == (7, {2, 5})
    assert split_cpus({3}) == (None, set())


def _may_use_realtime() -> bool:
    probe = "import os; os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))"
    return subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0


def test_the_loop_has_a_cpu_of_its_own_and_the_stacks_the_others():
    import vtlab
    from vtlab.emulation import cpu_mask

    cpus = os.sched_getaffinity(0)
    if len(cpus) < 2:
        pytest.skip("one CPU: nothing to split")
    loop, others = max(cpus), cpus - {max(cpus)}
    with vtlab.emulate("v2g") as em:
        for side in ("near", "far"):
            got = em.run(
                "cat /sys/class/net/vtlab0/queues/rx-0/rps_cpus",
                side=side,
                capture_output=True,
                text=True,
            )
            # The kernel pads the mask with zeros to its own width.
            assert int(got.stdout.strip().replace(",", ""), 16) == int(
                cpu_mask(others).replace(",", ""), 16
            )
        allowed = {
            Path(f"/proc/self/task/{t}/status").read_text().split("Cpus_allowed_list:")[1]
            for t in os.listdir("/proc/self/task")
        }
        assert any(a.split()[0] == str(loop) for a in allowed)
    assert em.counters["realtime"] == _may_use_realtime()


def test_no_realtime_runs_the_loop_at_normal_priority():
    done = _emulate("v2g", "--no-realtime", "--", "true")
    assert done.returncode == 0, done.stderr
    assert "at normal priority" in done.stderr
    done = _emulate("v2g", "--", "true")
    expected = "at real-time priority" if _may_use_realtime() else "at normal priority"
    assert expected in done.stderr
