//! The DCF and PHY against timelines worked out by hand, driven by a small
//! event loop of their own (no TCP, no routing).

use std::collections::BTreeSet;

use super::medium::Medium;
use super::{MediumConf, Mobility, WifiConf};
use crate::engine::Time;
use crate::net::family::{DropCause, LinkFamily};
use crate::net::{NodeId, Packet, PacketKind};

const US: u64 = 1_000;

/// A data packet of `ip_bytes` toward node `dst`.
fn packet(ip_bytes: u32, seq: u64) -> Packet {
    Packet {
        flow: 0,
        dst: NodeId(1),
        kind: PacketKind::Data,
        seq,
        len: ip_bytes - 40,
        ack: 0,
        rwnd: 0,
        ts_val: Time::ZERO,
        ts_ecr: Time::ZERO,
        ip_bytes,
        sack: Default::default(),
        sack_len: 0,
        frag_index: 0,
        frag_count: 1,
        piggyback: false,
        push: false,
    }
}

/// Stations on the x axis at `xs` (m), ns-2 defaults changed by `edit`.
fn medium(xs: &[f64], edit: impl FnOnce(&mut WifiConf)) -> Medium {
    let mut wifi = WifiConf::ns2_defaults();
    edit(&mut wifi);
    let conf = MediumConf {
        name: "w".into(),
        nodes: (0..xs.len()).map(|i| format!("n{i}")).collect(),
        mobility: xs
            .iter()
            .map(|&x| Mobility {
                x_m: x,
                ..Default::default()
            })
            .collect(),
        wifi,
        routing: Default::default(),
    };
    let nodes = (0..xs.len() as u32).map(NodeId).collect();
    Medium::build(&conf, nodes, 1)
}

/// Runs a medium: its transmission ends and station timers, in time order.
struct Driver {
    m: Medium,
    /// (time, kind: 0 tx end / 1 timer, station)
    queue: BTreeSet<(Time, u8, usize)>,
    armed: Vec<Option<Time>>,
    /// (time, station, ip seq) of packets delivered.
    delivered: Vec<(Time, usize, u64)>,
    dropped: Vec<(Time, usize, DropCause)>,
    /// (start, station) of every transmission.
    starts: Vec<(Time, usize)>,
    now: Time,
}

impl Driver {
    fn new(m: Medium) -> Self {
        let n = m.sites();
        Driver {
            m,
            queue: BTreeSet::new(),
            armed: vec![None; n],
            delivered: Vec::new(),
            dropped: Vec::new(),
            starts: Vec::new(),
            now: Time::ZERO,
        }
    }

    fn drain(&mut self) {
        let out = std::mem::take(self.m.outbox());
        for (s, end) in out.tx_end {
            self.starts.push((self.now, s));
            self.queue.insert((end, 0, s));
        }
        for s in out.timers {
            if let Some(d) = self.m.deadline(s) {
                if self.armed[s].is_none_or(|t| d < t) {
                    self.armed[s] = Some(d);
                    self.queue.insert((d, 1, s));
                }
            }
        }
        for (s, p, cause) in out.dropped {
            let _ = p;
            self.dropped.push((self.now, s, cause));
        }
        for (s, p) in out.delivered {
            self.delivered.push((self.now, s, p.seq));
        }
    }

    fn enqueue_at(&mut self, t: Time, s: usize, next: usize, p: Packet) {
        self.run_until(t);
        self.now = t;
        self.m.enqueue(t, s, next, p);
        self.drain();
    }

    fn run_until(&mut self, until: Time) {
        while let Some(&(t, kind, s)) = self.queue.first() {
            if t > until {
                break;
            }
            self.queue.pop_first();
            self.now = t;
            if kind == 0 {
                self.m.on_tx_end(t, s);
            } else {
                if self.armed[s] != Some(t) {
                    continue;
                }
                self.armed[s] = None;
                self.m.on_timer(t, s);
                if let Some(d) = self.m.deadline(s) {
                    self.armed[s] = Some(d);
                    self.queue.insert((d, 1, s));
                }
            }
            self.drain();
        }
    }
}

fn us(t: u64) -> Time {
    Time(t * US)
}

#[test]
fn one_exchange_timed_by_hand() {
    // 802.11b, 1 Mbit/s, long preamble, no RTS. A 552-byte IP packet becomes
    // a 588-byte frame: 192 + 588·8 = 4896 µs. The medium has been idle since
    // 0, so the frame goes after DIFS = SIFS + 2 slots = 50 µs, no backoff:
    // data 50–4946 µs, delivered at 4946; ACK (14 B: 192 + 112 = 304 µs)
    // after SIFS: 4956–5260 µs.
    let mut d = Driver::new(medium(&[0.0, 200.0], |w| w.rts_threshold_bytes = 65_535));
    d.enqueue_at(Time::ZERO, 0, 1, packet(552, 7));
    d.run_until(us(100_000));
    assert_eq!(d.starts, [(us(50), 0), (us(4956), 1)]);
    assert_eq!(d.delivered, [(us(4946), 1, 7)]);
    let s = d.m.stats(0);
    assert_eq!((s.frames_sent, s.retries, s.packets_carried), (1, 0, 1));
}

#[test]
fn rts_cts_exchange_timed_by_hand() {
    // RTS 20 B = 352 µs at 50; CTS 14 B = 304 µs after SIFS: 412–716; data
    // 726–5622 (delivered then); ACK 5632–5936.
    let mut d = Driver::new(medium(&[0.0, 200.0], |_| {}));
    d.enqueue_at(Time::ZERO, 0, 1, packet(552, 0));
    d.run_until(us(100_000));
    assert_eq!(
        d.starts,
        [(us(50), 0), (us(412), 1), (us(726), 0), (us(5632), 1)]
    );
    assert_eq!(d.delivered, [(us(5622), 1, 0)]);
}

#[test]
fn backoff_freezes_while_the_medium_is_busy() {
    // Three stations in range of each other, no RTS. Station 0 holds a frame
    // with 10 backoff slots from t = 0: its access would be 50 + 10·20 =
    // 250 µs. Station 1 is offered a frame at 110 µs; the medium is idle, so
    // no backoff, only a DIFS counted from the offer (ns-3.44): it sends at
    // 160 µs. By then 0 has counted (160 − 50)/20 = 5 slots; 5 remain.
    // Station 1's data ends at 160 + 4896 = 5056, station 2's ACK runs
    // 5066–5370, and station 0's NAV (from the data frame: SIFS + ACK) also
    // ends at 5370. So station 0 sends at 5370 + DIFS + 5·20 = 5520 µs.
    let mut m = medium(&[0.0, 100.0, 200.0], |w| w.rts_threshold_bytes = 65_535);
    m.force_backoff(0, 10);
    let mut d = Driver::new(m);
    d.enqueue_at(Time::ZERO, 0, 2, packet(552, 1));
    d.enqueue_at(us(110), 1, 2, packet(552, 2));
    d.run_until(us(100_000));
    assert_eq!(d.starts[..3], [(us(160), 1), (us(5066), 2), (us(5520), 0)]);
}

#[test]
fn hidden_terminals_collide() {
    // 0 — 1 — 2 at 200 m, carrier sense only within receive range (250 m),
    // so 0 and 2 cannot hear each other. Both send to 1 without RTS: 0 at 50
    // µs, 2 at 150 µs. Station 1 locks onto 0's frame; 2's arrives at the
    // same power (SINR ≈ 0 dB < 10 dB), so 0's frame fails and 2's, arriving
    // while 1 is busy, is never received. No ACK: both retry. (Station 2's
    // packet, offered at 100 µs to an idle medium, goes a DIFS later.)
    let mut d = Driver::new(medium(&[0.0, 200.0, 400.0], |w| {
        w.rts_threshold_bytes = 65_535;
        w.cca_threshold_dbm = w.rx_sensitivity_dbm;
    }));
    d.enqueue_at(Time::ZERO, 0, 1, packet(552, 1));
    d.enqueue_at(us(100), 2, 1, packet(552, 2));
    // Both frames have ended (by 150 + 4896 µs) and both ACK timeouts passed
    // (end + SIFS + slot + 192 µs = 5268 µs at the latest).
    d.run_until(us(5_270));
    assert_eq!(d.starts, [(us(50), 0), (us(150), 2)]);
    assert!(d.delivered.is_empty());
    assert_eq!(d.m.stats(1).rx_errors, 1);
    assert_eq!((d.m.stats(0).retries, d.m.stats(2).retries), (1, 1));
    // Their independent random backoffs get both packets through eventually.
    d.run_until(us(2_000_000));
    let mut got: Vec<u64> = d.delivered.iter().map(|x| x.2).collect();
    got.sort();
    assert_eq!(got, [1, 2]);
}

#[test]
fn the_retry_limit_drops_the_frame() {
    // The receiver is out of range (1 km): no ACK ever. Without RTS the data
    // frame uses the short retry limit: 7 attempts, then the drop, and the
    // next frame starts afresh.
    let mut d = Driver::new(medium(&[0.0, 1000.0], |w| w.rts_threshold_bytes = 65_535));
    d.enqueue_at(Time::ZERO, 0, 1, packet(552, 1));
    d.run_until(us(10_000_000));
    let s = d.m.stats(0);
    assert_eq!((s.frames_sent, s.retries, s.retry_drops), (7, 7, 1));
    assert_eq!(d.dropped.len(), 1);
    assert_eq!(d.dropped[0].2, DropCause::Link);
    // With RTS: 7 RTS attempts (short limit), no data frame at all.
    let mut d = Driver::new(medium(&[0.0, 1000.0], |_| {}));
    d.enqueue_at(Time::ZERO, 0, 1, packet(552, 1));
    d.run_until(us(10_000_000));
    assert_eq!((d.m.stats(0).frames_sent, d.m.stats(0).retry_drops), (7, 1));
}

#[test]
fn the_interface_queue_drops_when_full() {
    // IFQ 2 (the frame in service counts): the third packet offered at once is dropped.
    let mut d = Driver::new(medium(&[0.0, 200.0], |w| w.ifq_packets = 2));
    for i in 0..3 {
        d.enqueue_at(Time::ZERO, 0, 1, packet(552, i));
    }
    assert_eq!(d.dropped, [(Time::ZERO, 0, DropCause::Queue)]);
    d.run_until(us(1_000_000));
    assert_eq!(d.delivered.len(), 2);
}

/// Delivered share of 200 packets offered 50 ms apart under an error model
/// on data frames that is bad (every frame lost) a third of the time.
fn delivered_share(placement: super::ErrorPlacement) -> (f64, u64) {
    delivered_share_dir(placement, super::ErrorDirection::Both)
}

fn delivered_share_dir(
    placement: super::ErrorPlacement,
    direction: super::ErrorDirection,
) -> (f64, u64) {
    use crate::net::{LossConf, Sojourn};
    let mut d = Driver::new(medium(&[0.0, 200.0], |w| {
        w.error = LossConf::GilbertElliott {
            sojourn: Sojourn::Time,
            mean_good: 0.02,
            mean_bad: 0.01,
            loss_good: 0.0,
            loss_bad: 1.0,
        };
        w.error_frames = super::ErrorFrames::Data;
        w.error_placement = placement;
        w.error_direction = direction;
        w.rts_threshold_bytes = 65_535;
    }));
    for i in 0..200 {
        d.enqueue_at(Time(i * 50_000_000), 0, 1, packet(552, i));
    }
    d.run_until(Time(100_000_000_000));
    (d.delivered.len() as f64 / 200.0, d.m.stats(0).retries)
}

#[test]
fn the_error_model_at_ip_loses_what_the_mac_repairs() {
    // At IP a packet survives the sender's outgoing and the receiver's
    // incoming model: (2/3)² = 0.444 (±0.12, 3.4 standard errors of 200).
    let (ip, retries) = delivered_share(super::ErrorPlacement::Ip);
    assert!((ip - 0.444).abs() < 0.12, "{ip}");
    assert_eq!(retries, 0);
    // Between MAC and PHY each attempt fails with the same probability, but
    // the MAC makes up to 7 (no RTS: the short limit) over about 60 ms of
    // growing backoffs, longer than the 10 ms bursts: independent attempts
    // would lose 0.556⁷ = 1.6 %; the bursts' correlation costs more, but far
    // less than IP's 56 %.
    let (mac, retries) = delivered_share(super::ErrorPlacement::Mac);
    assert!(mac > 0.8, "{mac}");
    assert!(retries > 50, "{retries}");
}

#[test]
fn under_aodv_a_packet_crosses_a_relay_after_a_route_request() {
    // Stations at 0, 200 and 400 m: 0 and 2 cannot hear each other (250 m
    // receive range). Every station sends its first HELLO within 110 ms, so
    // at 1 s station 1 has a fresh route to station 2 and answers station
    // 0's first request (TTL 1) itself: one request, then the packet goes
    // 0 → 1 → 2 and reaches its node at station 2 only.
    let mut conf = MediumConf {
        name: "w".into(),
        nodes: (0..3).map(|i| format!("n{i}")).collect(),
        mobility: [0.0, 200.0, 400.0]
            .iter()
            .map(|&x| Mobility {
                x_m: x,
                ..Default::default()
            })
            .collect(),
        wifi: WifiConf::ns2_defaults(),
        routing: Default::default(),
    };
    conf.routing = crate::net::routing::Routing::Aodv;
    let mut d = Driver::new(Medium::build(&conf, (0..3).map(NodeId).collect(), 1));
    for s in 0..3 {
        d.m.outbox().timers.push(s);
    }
    d.drain();
    d.enqueue_at(us(1_000_000), 0, 2, packet(552, 5));
    d.run_until(us(2_000_000));
    assert_eq!(d.delivered.len(), 1, "{:?}", d.delivered);
    assert_eq!((d.delivered[0].1, d.delivered[0].2), (2, 5));
    let aodv = |s: usize| d.m.aodv(s).map(|a| a.stats.clone()).unwrap_or_default();
    assert_eq!(aodv(0).rreq_sent, 1);
    // The reply and the gratuitous one to station 2.
    assert_eq!(aodv(1).rrep_sent, 2);
    assert!(d.dropped.is_empty());
}

#[test]
fn the_incoming_direction_spares_the_sender_s_model() {
    // Incoming only (ns-3's post-reception model): at IP a packet survives the
    // receiver's model alone, 2/3 of the time (±0.12 as above), not (2/3)².
    let (ip, _) = delivered_share_dir(super::ErrorPlacement::Ip, super::ErrorDirection::Incoming);
    assert!((ip - 0.667).abs() < 0.12, "{ip}");
}

#[test]
fn the_queue_lifetime_drops_stale_packets_at_access() {
    // No RTS, receiver in range, lifetime 10 ms, three packets offered at 0.
    // Packet 0: data 50–4946 µs, ACK 4956–5260 µs, then a backoff of U[0, 31]
    // slots: packet 1 goes at 5260 + 50 + at most 620 µs = 5930 µs (< 10 ms),
    // its ACK ends by 5930 + 4896 + 10 + 304 = 11 140 µs. Packet 2 gets the
    // medium after that (at least DIFS later, > 10 ms): expired, dropped.
    let mut d = Driver::new(medium(&[0.0, 200.0], |w| {
        w.rts_threshold_bytes = 65_535;
        w.queue_lifetime_ns = Some(10_000_000);
    }));
    for i in 0..3 {
        d.enqueue_at(Time::ZERO, 0, 1, packet(552, i));
    }
    d.run_until(us(1_000_000));
    let got: Vec<u64> = d.delivered.iter().map(|x| x.2).collect();
    assert_eq!(got, [0, 1]);
    assert_eq!(d.dropped.len(), 1);
    let (t, s, cause) = d.dropped[0];
    assert!(t > us(10_000) && t < us(11_140 + 50 + 620), "{t:?}");
    assert_eq!((s, cause), (0, DropCause::Queue));
    assert_eq!(d.m.stats(0).queue_drops, 1);
    // Without a lifetime all three arrive.
    let mut d = Driver::new(medium(&[0.0, 200.0], |w| w.rts_threshold_bytes = 65_535));
    for i in 0..3 {
        d.enqueue_at(Time::ZERO, 0, 1, packet(552, i));
    }
    d.run_until(us(1_000_000));
    assert_eq!(d.delivered.len(), 3);
}

#[test]
fn the_frame_in_service_never_expires_but_its_retry_does() {
    // Receiver out of range, lifetime 10 ms, one packet, no RTS. Attempt 1:
    // 50–4946 µs, ACK timeout 222 µs later (5168), backoff ≤ 63 slots: attempt
    // 2 starts by 5168 + 50 + 1260 = 6478 µs (< 10 ms, so it goes) and ends
    // after 5218 + 4896 = 10 114 µs; at the next access the packet is 10 ms old
    // and not being sent: dropped as expired, not at the retry limit.
    let mut d = Driver::new(medium(&[0.0, 1000.0], |w| {
        w.rts_threshold_bytes = 65_535;
        w.queue_lifetime_ns = Some(10_000_000);
    }));
    d.enqueue_at(Time::ZERO, 0, 1, packet(552, 1));
    d.run_until(us(1_000_000));
    let s = d.m.stats(0);
    assert_eq!((s.frames_sent, s.retries, s.retry_drops), (2, 2, 0));
    assert_eq!(d.dropped.len(), 1);
    assert_eq!(d.dropped[0].2, DropCause::Queue);
}

#[test]
fn a_full_queue_sheds_stale_packets_before_refusing() {
    // IFQ 2, lifetime 3 ms, receiver out of range, no RTS. Packets 0 and 1 at
    // 0: packet 0 is in the air 50–4946 µs. Packet 2 at 4 ms finds the queue
    // full; packet 1 (expired at 3 ms, not in service) makes room: it is
    // dropped at 4 ms and packet 2 is queued. Without the lifetime packet 2 is
    // refused.
    let mut d = Driver::new(medium(&[0.0, 1000.0], |w| {
        w.rts_threshold_bytes = 65_535;
        w.ifq_packets = 2;
        w.queue_lifetime_ns = Some(3_000_000);
    }));
    d.enqueue_at(Time::ZERO, 0, 1, packet(552, 0));
    d.enqueue_at(Time::ZERO, 0, 1, packet(552, 1));
    d.enqueue_at(us(4_000), 0, 1, packet(552, 2));
    assert_eq!(d.dropped, [(us(4_000), 0, DropCause::Queue)]);
    // packet 2 is sent: a second transmission starts after packet 0's timeout
    // (5168 µs), when packet 0 (expired, no longer in service) is dropped.
    d.run_until(us(6_500));
    assert_eq!(d.starts.len(), 2);
    assert_eq!(d.dropped.len(), 2);
    let mut d = Driver::new(medium(&[0.0, 1000.0], |w| {
        w.rts_threshold_bytes = 65_535;
        w.ifq_packets = 2;
    }));
    d.enqueue_at(Time::ZERO, 0, 1, packet(552, 0));
    d.enqueue_at(Time::ZERO, 0, 1, packet(552, 1));
    d.enqueue_at(us(4_000), 0, 1, packet(552, 2));
    assert_eq!(d.dropped, [(us(4_000), 0, DropCause::Queue)]);
    d.run_until(us(6_500));
    // here packet 0 is retried instead
    assert_eq!((d.starts.len(), d.dropped.len()), (2, 1));
}

/// Frames station 0 sends to a neighbour whose incoming model fails every
/// data frame (RTS and CTS get through) before the packet is dropped.
fn frames_until_dropped(edit: impl FnOnce(&mut WifiConf)) -> (u64, u64) {
    let mut d = Driver::new(medium(&[0.0, 200.0], |w| {
        w.error = crate::net::LossConf::Bernoulli { mean_loss: 1.0 };
        w.error_frames = super::ErrorFrames::Data;
        w.error_direction = super::ErrorDirection::Incoming;
        edit(w);
    }));
    d.enqueue_at(Time::ZERO, 0, 1, packet(552, 1));
    d.run_until(us(10_000_000));
    assert_eq!(d.dropped.len(), 1);
    let s = d.m.stats(0);
    (s.frames_sent, s.retry_drops)
}

#[test]
fn the_frame_retry_limit_counts_rts_and_data_together() {
    // 802.11 (ns-2): each CTS resets the short counter, the data frame after it
    // has the long limit, 4 attempts: 4 × (RTS + data) = 8 frames.
    assert_eq!(frames_until_dropped(|_| {}), (8, 1));
    // ns-3.44's FrameRetryLimit 7: 7 attempts of the frame, each RTS + data.
    assert_eq!(
        frames_until_dropped(|w| w.frame_retry_limit = Some(7)),
        (14, 1)
    );
}

/// When station 1 (200 m from station 0) first transmits: station 0 sends
/// one RTS (50–402 µs) to station 2, 1 km away, which never answers (short
/// retry limit 1: then it gives up); station 1 overhears the RTS and gets a
/// packet for station 0 at 100 µs, while the medium is busy.
fn first_send_after_a_failed_rts(nav_reset: bool) -> Time {
    let mut d = Driver::new(medium(&[0.0, 200.0, 1000.0], |w| {
        w.short_retry_limit = 1;
        w.rts_nav_reset = nav_reset;
    }));
    d.enqueue_at(Time::ZERO, 0, 2, packet(552, 1));
    d.enqueue_at(us(100), 1, 0, packet(552, 2));
    d.run_until(us(100_000));
    assert_eq!(d.starts[0], (us(50), 0));
    assert_eq!(d.starts[1].1, 1);
    d.starts[1].0
}

#[test]
fn an_rts_without_an_exchange_releases_the_nav_after_556_us() {
    // The RTS's NAV covers 3·SIFS + CTS + data + ACK = 30 + 304 + 4896 + 304 =
    // 5534 µs from its end (402 µs): station 1 defers to 5936 µs, then DIFS and
    // its backoff of 0–31 slots: it sends in [5986, 6606] µs.
    let kept = first_send_after_a_failed_rts(false);
    assert!(kept >= us(5_986) && kept <= us(6_606), "{kept:?}");
    // With the reset (ns-3): no reception starts within 2·SIFS + CTS (304) +
    // PHY header (192) + 2 slots = 556 µs, so the NAV ends at 958 µs and
    // station 1 sends in [1008, 1628] µs.
    let reset = first_send_after_a_failed_rts(true);
    assert!(reset >= us(1_008) && reset <= us(1_628), "{reset:?}");
}
