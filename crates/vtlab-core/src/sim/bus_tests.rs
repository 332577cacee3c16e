//! TCP end to end over the ideal bus ([`crate::net::family::bus`]), the
//! smallest link family: the plan of a two-node 802.11 medium with the
//! medium swapped for a bus (same nodes, same hops), run by the simulation.

use serde_json::json;

use super::{Hooks, Plan, RunOptions, Simulation};
use crate::engine::{Duration, Time};
use crate::net::family::bus::BusConf;
use crate::net::family::FamilyConf;
use crate::spec::{plan, resolve_value};

/// A bulk flow of `bytes` from a to b, starting at 0, over a bus of 8 Mbit/s
/// (1 µs per byte) and 1 ms delay; ns-3 profile without timestamps (40 B of
/// headers, 1460 B segments, initial window 10 segments).
fn bus_plan(bytes: u64) -> Plan {
    let s = resolve_value(json!({
        "preset": "custom",
        "nodes": ["a", "b"],
        "media": [{"name": "air", "nodes": ["a", "b"],
                   "mobility": [{"x_m": 0, "y_m": 0}, {"x_m": 10, "y_m": 0}]}],
        "flows": [{"src": "a", "dst": "b", "bytes": bytes,
                   "tcp": {"profile": "ns3", "timestamps": false}}],
    }))
    .unwrap();
    let mut p = plan(&s).unwrap();
    p.media[0].conf = FamilyConf::Bus(BusConf {
        name: "bus".into(),
        nodes: vec!["a".into(), "b".into()],
        rate_bps: 8_000_000,
        delay: Duration(1_000_000),
        mtu_bytes: 1500,
    });
    p
}

/// Run to the end and hand back the simulation (its state) and the end time.
fn run(bytes: u64) -> (Simulation, Time) {
    let mut sim = Simulation::new(&bus_plan(bytes), 1, RunOptions::default());
    let end = sim.run_loop(&mut Hooks::default()).unwrap();
    (sim, end)
}

#[test]
fn tcp_over_the_bus_delivers_every_byte_once_in_order() {
    // 1 MB is 685 segments (684 × 1460 + 1360): each reaches the receiver
    // once, at the next expected byte, and none is sent twice.
    let (sim, end) = run(1_000_000);
    let rx = &sim.flows[0].receiver;
    assert_eq!(rx.bytes_received(), 1_000_000);
    assert_eq!(rx.stats.segments_received, 685);
    assert_eq!(rx.stats.duplicate_segments, 0);
    assert_eq!(rx.stats.out_of_order_segments, 0);
    let r = sim.finish(end, 0.0);
    let f = &r.flows[0];
    assert!(f.completed);
    assert_eq!((f.segments_sent, f.retransmissions), (685, 0));
    assert_eq!((f.drops_queue, f.drops_link_error), (0, 0));
    // One row per site: a carried the SYN and every segment with its 40 B
    // of headers.
    let a = &r.links[0];
    assert_eq!((a.link.as_str(), a.direction.as_str()), ("bus", "a"));
    assert_eq!(
        (a.packets_carried, a.bytes_carried),
        (686, 40 + 1_000_000 + 685 * 40)
    );
    assert_eq!(r.links[1].direction, "b");
}

#[test]
fn a_small_transfer_completes_at_the_hand_computed_time() {
    // 4380 B = 3 segments of 1460 B (1500 B packets), within the initial window.
    //   SYN (40 B):      on the bus 0 → 0.040 ms, at b 1.040 ms
    //   SYN-ACK (40 B):  on the bus 1.040 → 1.080 ms, at a 2.080 ms
    //   3 segments, all sent at 2.080 ms, one after the other on the bus,
    //   1.5 ms each: the last is on it 5.080 → 6.580 ms and reaches b at
    //   7.580 ms. (b's ACK of the first two is offered at 6.080 ms and waits
    //   behind the third segment: FIFO.)
    // The handshake is the sender's RTT sample: 2.080 ms.
    let (sim, _) = run(4380);
    let f = &sim.flows[0];
    assert_eq!(f.receiver.completed_at(), Some(Time(7_580_000)));
    assert_eq!(f.sender.stats().rtt_min, Some(Duration(2_080_000)));
}
