//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation;
//! Linux `tcp_rate.c`, ns-3 `TcpRateLinux`), for controllers that ask for it
//! (`CongestionOps::has_cong_control`, BBR). Other controllers never build
//! one, so the sender keeps no per-segment state for them.
//!
//! Each transmission records the connection's delivered count, the time of
//! the last delivery and the start of the current send flight; when a
//! segment is (S)ACKed, the newest such record gives a sample: the bytes
//! delivered since it was sent over the longer of its send phase and its ACK
//! phase.
//!
//! Two flavours (`fresh_per_ack`): Linux builds a new sample for every ACK
//! (`struct rate_sample rs` is a local of `tcp_ack`); ns-3 keeps one
//! `m_rateSample` for the connection, so an ACK that delivers nothing new
//! repeats the previous sample's prior fields, and its `m_deliveryRate` is only
//! updated for samples that are not application-limited or exceed the last
//! recorded rate.

use std::collections::BTreeMap;

use crate::engine::{Duration, Time};

/// One rate sample, per ACK (Linux `struct rate_sample`, ns-3
/// `TcpRateSample`). Byte units.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RateSample {
    /// Delivery rate, bytes per second (0 when never computed).
    pub delivery_rate: f64,
    /// Whether the sample was taken while the application held data back.
    pub is_app_limited: bool,
    /// Sampling interval, max(send phase, ACK phase); zero when invalid.
    pub interval: Duration,
    /// Bytes delivered over `interval`; −1 when there is no sample.
    pub delivered: i64,
    /// The connection's delivered count when the newest delivered segment
    /// was sent.
    pub prior_delivered: u64,
    /// When the last delivery before that segment's transmission happened.
    pub prior_time: Option<Time>,
    pub send_elapsed: Duration,
    pub ack_elapsed: Duration,
    /// Bytes newly marked lost by this ACK.
    pub lost: u64,
    /// Bytes in flight before this ACK.
    pub prior_in_flight: u64,
    /// Bytes this ACK newly acknowledged or SACKed.
    pub acked_sacked: u64,
    /// The RTT sample this ACK gave, if any.
    pub rtt: Option<Duration>,
}

impl RateSample {
    /// Whether the sample carries a rate (delivered ≥ 0 over a non-zero
    /// interval), as BBR's `bbr_update_bw` requires.
    pub fn valid(&self) -> bool {
        self.delivered >= 0 && self.interval.0 > 0
    }
}

/// The connection-wide delivery counters a controller may read (ns-3
/// `TcpRateConnection`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateConn {
    /// Bytes delivered (cumulatively ACKed or SACKed) so far.
    pub delivered: u64,
    /// Nonzero while application-limited: the delivered count that ends it.
    pub app_limited: u64,
}

#[derive(Clone, Copy, Debug)]
struct TxRecord {
    len: u64,
    delivered: u64,
    delivered_time: Time,
    first_tx: Time,
    sent: Time,
    app_limited: bool,
    /// Already counted (SACKed earlier).
    counted: bool,
}

/// Per-connection delivery-rate state and the per-segment records.
#[derive(Clone, Debug)]
pub struct RateEstimator {
    fresh_per_ack: bool,
    delivered: u64,
    delivered_time: Time,
    first_tx_time: Time,
    app_limited: u64,
    rate_delivered: i64,
    rate_interval: Duration,
    sample: RateSample,
    segs: BTreeMap<u64, TxRecord>,
}

impl RateEstimator {
    /// `fresh_per_ack`: Linux (a new sample per ACK); false: ns-3.
    pub fn new(fresh_per_ack: bool) -> Self {
        RateEstimator {
            fresh_per_ack,
            delivered: 0,
            delivered_time: Time::ZERO,
            first_tx_time: Time::ZERO,
            app_limited: 0,
            rate_delivered: 0,
            rate_interval: Duration(0),
            sample: RateSample {
                delivered: -1,
                ..RateSample::default()
            },
            segs: BTreeMap::new(),
        }
    }

    pub fn conn(&self) -> RateConn {
        RateConn {
            delivered: self.delivered,
            app_limited: self.app_limited,
        }
    }

    /// A (re)transmission of `[seq, seq + len)` at `now` (Linux
    /// `tcp_rate_skb_sent`, ns-3 `SkbSent`). `start` when nothing was in
    /// flight: the sampling intervals restart now.
    pub fn on_send(&mut self, now: Time, seq: u64, len: u64, start: bool) {
        if start {
            self.first_tx_time = now;
            self.delivered_time = now;
        }
        self.segs.insert(
            seq,
            TxRecord {
                len,
                delivered: self.delivered,
                delivered_time: self.delivered_time,
                first_tx: self.first_tx_time,
                sent: now,
                app_limited: self.app_limited != 0,
                counted: false,
            },
        );
    }

    /// An ACK at `now`: SACKed segments (within a block) and those below the
    /// cumulative `ack` are delivered; SACKs first, as ns-3 `ReadOptions`
    /// before `DiscardUpTo` and Linux `tcp_sacktag_write_queue` before
    /// `tcp_clean_rtx_queue`. Returns the bytes newly delivered.
    pub fn on_ack(&mut self, now: Time, ack: u64, sack: &[(u64, u64)]) -> u64 {
        if self.fresh_per_ack {
            self.sample = RateSample {
                delivered: -1,
                ..RateSample::default()
            };
        }
        let before = self.delivered;
        for &(start, end) in sack {
            let keys: Vec<u64> = self
                .segs
                .range(start..end)
                .filter(|(s, r)| **s + r.len <= end && !r.counted)
                .map(|(s, _)| *s)
                .collect();
            for k in keys {
                self.deliver(now, k);
            }
        }
        while let Some((&seq, r)) = self.segs.first_key_value() {
            if seq + r.len > ack {
                break;
            }
            self.deliver(now, seq);
            self.segs.remove(&seq);
        }
        self.delivered - before
    }

    /// Linux `tcp_rate_skb_delivered`, ns-3 `SkbDelivered`.
    fn deliver(&mut self, now: Time, seq: u64) {
        let Some(r) = self.segs.get_mut(&seq) else {
            return;
        };
        if r.counted {
            return;
        }
        r.counted = true;
        let r = *r;
        self.delivered += r.len;
        self.delivered_time = now;
        let s = &mut self.sample;
        if s.prior_delivered == 0 || r.delivered > s.prior_delivered {
            s.ack_elapsed = now - r.delivered_time;
            s.prior_delivered = r.delivered;
            s.prior_time = Some(r.delivered_time);
            s.is_app_limited = r.app_limited;
            s.send_elapsed = r.sent - r.first_tx;
            self.first_tx_time = r.sent;
        }
    }

    /// The sample for the ACK just processed (Linux `tcp_rate_gen`, ns-3
    /// `GenerateSample`): `acked_sacked` bytes newly delivered, `lost` bytes
    /// newly marked lost, `prior_in_flight` before the ACK, the connection's
    /// minimum RTT (a sample shorter than it is discarded) and this ACK's RTT.
    pub fn gen_sample(
        &mut self,
        acked_sacked: u64,
        lost: u64,
        prior_in_flight: u64,
        min_rtt: Option<Duration>,
        rtt: Option<Duration>,
    ) -> RateSample {
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        let s = &mut self.sample;
        s.acked_sacked = acked_sacked;
        s.lost = lost;
        s.prior_in_flight = prior_in_flight;
        s.rtt = rtt;
        if s.prior_time.is_none() {
            s.delivered = -1;
            s.interval = Duration(0);
            return *s;
        }
        s.interval = s.send_elapsed.max(s.ack_elapsed);
        s.delivered = (self.delivered - s.prior_delivered) as i64;
        // No minimum RTT yet counts as an infinite one (ns-3 Time::Max,
        // Linux ~0U): the sample is discarded.
        if min_rtt.is_none_or(|m| s.interval < m) {
            s.interval = Duration(0);
            if !self.fresh_per_ack {
                s.prior_time = None;
            }
            return *s;
        }
        if self.fresh_per_ack {
            s.delivery_rate = s.delivered as f64 / s.interval.as_secs_f64();
        } else if !s.is_app_limited
            || i128::from(s.delivered) * i128::from(self.rate_interval.0)
                >= i128::from(self.rate_delivered) * i128::from(s.interval.0)
        {
            // ns-3 records the last non-app-limited or the highest
            // app-limited rate, and computes m_deliveryRate only then.
            self.rate_delivered = s.delivered;
            self.rate_interval = s.interval;
            s.delivery_rate = s.delivered as f64 / s.interval.as_secs_f64();
        }
        *s
    }

    /// Linux `tcp_rate_check_app_limited`, ns-3 `CalculateAppLimited`: less
    /// than a segment left to send, not cwnd-limited and every lost segment
    /// retransmitted: the flow is application-limited until what is in
    /// flight now is delivered.
    pub fn check_app_limited(&mut self, unsent: u64, mss: u64, in_flight: u64, cwnd: u64) {
        if unsent < mss && in_flight < cwnd {
            self.app_limited = (self.delivered + in_flight).max(1);
        }
    }

    /// Mark the flow application-limited until `in_flight` more bytes are
    /// delivered (Linux BBR's PROBE_RTT sets `tp->app_limited`).
    pub fn set_app_limited(&mut self, in_flight: u64) {
        self.app_limited = (self.delivered + in_flight).max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time::ZERO + Duration::from_millis(x)
    }

    /// A scripted exchange, expected values by hand. 1000-byte segments.
    /// t=0: segments 0 and 1 sent with nothing in flight (start: first_tx =
    /// delivered_time = 0, delivered = 0). t=10: segment 0 ACKed: delivered =
    /// 1000; the record of seg 0 has delivered 0, delivered_time 0, sent 0,
    /// first_tx 0: send phase 0, ACK phase 10 ms, interval 10 ms, 1000 bytes
    /// → 100 000 B/s. t=10: segment 2 sent (first_tx = 0 → becomes the sent
    /// time of seg 0 = 0; delivered_time = 10; delivered = 1000). t=12: seg 1
    /// ACKed: prior = its record (delivered 0, time 0): 2000 − 0 bytes over
    /// max(0 − 0, 12 − 0) = 12 ms → 166 666.67 B/s. t=25: seg 2 ACKed: its
    /// record has delivered 1000 at time 10, first_tx 0, sent 10: send phase
    /// 10 ms, ACK phase 15 ms → interval 15 ms, 3000 − 1000 = 2000 bytes →
    /// 133 333.33 B/s.
    #[test]
    fn rate_sample_arithmetic() {
        for fresh in [false, true] {
            let mut r = RateEstimator::new(fresh);
            let min_rtt = Some(Duration::from_millis(5));
            r.on_send(ms(0), 0, 1000, true);
            r.on_send(ms(0), 1000, 1000, false);
            assert_eq!(r.on_ack(ms(10), 1000, &[]), 1000);
            let s = r.gen_sample(1000, 0, 2000, min_rtt, None);
            assert_eq!(s.delivered, 1000);
            assert_eq!(s.interval, Duration::from_millis(10));
            assert!((s.delivery_rate - 100_000.0).abs() < 1e-6);
            assert_eq!(s.prior_in_flight, 2000);
            r.on_send(ms(10), 2000, 1000, false);
            r.on_ack(ms(12), 2000, &[]);
            let s = r.gen_sample(1000, 0, 2000, min_rtt, None);
            assert_eq!((s.delivered, s.interval), (2000, Duration::from_millis(12)));
            assert!((s.delivery_rate - 2000.0 / 0.012).abs() < 1e-6);
            r.on_ack(ms(25), 3000, &[]);
            let s = r.gen_sample(1000, 0, 1000, min_rtt, None);
            assert_eq!(s.prior_delivered, 1000);
            assert_eq!(s.send_elapsed, Duration::from_millis(10));
            assert_eq!(s.ack_elapsed, Duration::from_millis(15));
            assert_eq!((s.delivered, s.interval), (2000, Duration::from_millis(15)));
            assert!((s.delivery_rate - 2000.0 / 0.015).abs() < 1e-6);
            assert_eq!(r.conn().delivered, 3000);
        }
    }

    /// A SACKed segment counts once: when SACKed, not again when the
    /// cumulative ACK covers it. An interval shorter than min_rtt gives no
    /// rate (interval 0).
    #[test]
    fn sacked_segments_count_once_and_short_intervals_are_discarded() {
        let mut r = RateEstimator::new(true);
        for k in 0..3 {
            r.on_send(ms(0), k * 1000, 1000, k == 0);
        }
        // Segment 1 SACKed at t = 10 (segment 0 lost).
        assert_eq!(r.on_ack(ms(10), 0, &[(1000, 2000)]), 1000);
        let s = r.gen_sample(1000, 0, 3000, Some(Duration::from_millis(20)), None);
        assert_eq!(s.delivered, 1000);
        assert_eq!(s.interval, Duration(0), "10 ms < min_rtt 20 ms");
        assert!(!s.valid());
        // The cumulative ACK of everything delivers 0 and 2 only.
        assert_eq!(r.on_ack(ms(30), 3000, &[]), 2000);
        assert_eq!(r.conn().delivered, 3000);
    }

    /// ns-3 keeps the sample between ACKs: an ACK that delivers nothing
    /// repeats the previous rate; Linux gives no sample then.
    #[test]
    fn ns3_sample_persists_linux_sample_is_fresh() {
        let min_rtt = Some(Duration::from_millis(1));
        for (fresh, expect) in [(false, 1000), (true, -1)] {
            let mut r = RateEstimator::new(fresh);
            r.on_send(ms(0), 0, 1000, true);
            r.on_send(ms(0), 1000, 1000, false);
            r.on_ack(ms(10), 1000, &[]);
            r.gen_sample(1000, 0, 2000, min_rtt, None);
            r.on_ack(ms(11), 1000, &[]);
            let s = r.gen_sample(0, 0, 1000, min_rtt, None);
            assert_eq!(s.delivered, expect);
        }
    }

    #[test]
    fn app_limited_until_in_flight_delivered() {
        let mut r = RateEstimator::new(true);
        r.on_send(ms(0), 0, 1000, true);
        r.check_app_limited(0, 1000, 1000, 10_000);
        assert_eq!(r.conn().app_limited, 1000);
        r.on_send(ms(0), 1000, 1000, false);
        r.on_ack(ms(10), 1000, &[]);
        let s = r.gen_sample(1000, 0, 2000, Some(Duration::from_millis(1)), None);
        // Segment 0 was sent before the mark: not app-limited.
        assert!(!s.is_app_limited);
        r.on_ack(ms(20), 2000, &[]);
        let s = r.gen_sample(1000, 0, 1000, Some(Duration::from_millis(1)), None);
        assert!(s.is_app_limited, "segment 1 was sent while app-limited");
        assert_eq!(r.conn().app_limited, 0, "cleared once delivered > 1000");
    }
}
