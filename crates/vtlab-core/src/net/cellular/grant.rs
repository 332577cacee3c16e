//! An uplink served on request: the UE reports its buffer, the eNB grants
//! transmissions, and only granted opportunities carry data.
//!
//! The model follows ns-3's LTE uplink (`LteUeMac`, `PfFfMacScheduler`):
//!
//! * **Request.** When data arrives, the UE reports its buffer (the bytes not
//!   yet sent) in the next TTI. With grants flowing, the report rides on the
//!   uplink (a buffer status report every TTI, ns-3's ideal BSR); without, it
//!   waits for the next scheduling-request occasion (`sr_period_ms`).
//! * **Scheduling.** The report reaches the scheduler `request_delay_ms`
//!   later and *replaces* its credit for this UE. At every opportunity whose
//!   decision time (the opportunity's time less `grant_delay_ms`, the n+4 of
//!   TS 36.213) finds a positive credit, the whole opportunity (all the UE's
//!   resource blocks at the channel's MCS, not the reported size) is granted
//!   and the credit falls by its size.
//! * **Transmission.** A granted opportunity carries whatever is queued when
//!   it comes (FIFO), so the ACKs of a burst that arrive while the first grant
//!   is on its way leave together; a report counts bytes already granted but
//!   not yet sent, so the scheduler over-grants (padding), as ns-3's does.
//!
//! A packet's departure is computed when it is enqueued. Later arrivals only
//! send reports that take effect after its own, each reporting every byte not
//! yet sent, so the credit stays positive until the packet is covered: they
//! change the credit left over, never which opportunities carry it (module
//! tests check this against a per-TTI reference).

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::schedule::{Feed, Fill, Opportunity, OpportunitySource, Service};
use crate::engine::Time;

/// Nanoseconds per millisecond (one TTI).
const MS: u64 = 1_000_000;

/// The request–grant timing of one uplink (resolved, checked by the spec layer).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct GrantConf {
    /// Period of the scheduling-request occasions (TS 36.213: 1–80 ms); 1 is
    /// ns-3's ideal BSR, sent in the TTI after the data arrives.
    pub sr_period_ms: u32,
    /// From the TTI of the request to the scheduler's decision that sees it.
    pub request_delay_ms: u32,
    /// From the decision to the TTI the grant is used in (TS 36.213: 4).
    pub grant_delay_ms: u32,
}

/// Serves a FIFO from the granted opportunities of a source.
pub struct GrantServer<S> {
    fill: Fill,
    grants: Grants<S>,
}

/// The scheduler's side of a [`GrantServer`]: reports, credit, decisions.
struct Grants<S> {
    source: S,
    conf: GrantConf,
    /// The scheduler's credit after the decisions made so far.
    credit: u64,
    /// Reports not yet applied: (effect time, bytes), in time order.
    pending: VecDeque<(Time, u64)>,
    /// Granted decisions a later report may still precede: (decision time, bytes).
    decided: VecDeque<(Time, u32)>,
    /// Decision time of the last opportunity decided.
    last_decision: Time,
    /// The TTI the last report was sent in, and when it takes effect.
    last_sent: u64,
    last_effect: Time,
    /// The source has been positioned (its first opportunity sought).
    started: bool,
    /// Bytes enqueued so far, and bytes served by the last report's TTI.
    enqueued: u64,
    served: u64,
    /// Service not yet counted in `served`: (opportunity time, bytes served).
    served_log: VecDeque<(Time, u32)>,
}

impl<S: OpportunitySource> GrantServer<S> {
    pub fn new(source: S, conf: GrantConf) -> Self {
        GrantServer {
            fill: Fill::default(),
            grants: Grants {
                source,
                conf,
                credit: 0,
                pending: VecDeque::new(),
                decided: VecDeque::new(),
                last_decision: Time::ZERO,
                last_sent: 0,
                last_effect: Time::ZERO,
                started: false,
                enqueued: 0,
                served: 0,
                served_log: VecDeque::new(),
            },
        }
    }

    /// Serve a packet of `bytes` bytes that joins the queue at `now`.
    pub fn serve(&mut self, now: Time, bytes: u32) -> Service {
        self.grants.enqueued += u64::from(bytes);
        self.grants.report(now);
        self.fill.serve(&mut self.grants, now, bytes)
    }
}

impl<S: OpportunitySource> Feed for Grants<S> {
    fn first(&mut self, now: Time) -> Opportunity {
        self.next_granted(now)
    }
    fn next(&mut self, now: Time) -> Opportunity {
        self.next_granted(now)
    }
    fn took(&mut self, t: Time, bytes: u32) {
        match self.served_log.back_mut() {
            Some(last) if last.0 == t => last.1 += bytes,
            _ => self.served_log.push_back((t, bytes)),
        }
    }
}

impl<S: OpportunitySource> Grants<S> {
    /// The report an arrival at `now` triggers: sent at the next TTI (grants
    /// flowing) or scheduling-request occasion, counting every byte enqueued
    /// and not yet served by then.
    fn report(&mut self, now: Time) {
        let period = if self.credit > 0 {
            1
        } else {
            u64::from(self.conf.sr_period_ms)
        };
        let sent = (now.0.div_ceil(period * MS) * period * MS).max(self.last_sent);
        self.last_sent = sent;
        while let Some(&(t, b)) = self.served_log.front() {
            if t.0 > sent {
                break;
            }
            self.served += u64::from(b);
            self.served_log.pop_front();
        }
        let effect = Time(sent + u64::from(self.conf.request_delay_ms) * MS);
        let value = self.enqueued - self.served;
        self.last_effect = effect;
        if effect > self.last_decision || !self.started {
            match self.pending.back_mut() {
                Some(last) if last.0 == effect => last.1 = value,
                _ => self.pending.push_back((effect, value)),
            }
            return;
        }
        // It precedes decisions already made: those granted the whole
        // opportunity (the credit was positive), so only the credit left
        // changes.
        while self.decided.front().is_some_and(|d| d.0 < effect) {
            self.decided.pop_front();
        }
        let after: u64 = self.decided.iter().map(|d| u64::from(d.1)).sum();
        self.credit = value.saturating_sub(after);
    }

    /// The next granted opportunity at or after `now` (a packet is waiting,
    /// so one comes: its report keeps the credit positive until it leaves).
    fn next_granted(&mut self, now: Time) -> Opportunity {
        let g = u64::from(self.conf.grant_delay_ms) * MS;
        loop {
            let op = if self.credit == 0 || !self.started {
                // Nothing is granted before the next report takes effect.
                // Opportunities before `now` are still decided: a grant
                // there uses up credit (padding).
                self.started = true;
                let from = self.pending.front().map_or(now, |p| Time(p.0 .0 + g));
                self.source.seek(from)
            } else {
                self.source.next()
            };
            if op.time == super::NEVER.time {
                return op;
            }
            let decision = Time(op.time.0.saturating_sub(g));
            while self.pending.front().is_some_and(|p| p.0 <= decision) {
                self.credit = self.pending.pop_front().map_or(0, |p| p.1);
            }
            if self.credit == 0 {
                // The waiting packet's own report is pending, or applied and
                // then keeps the credit positive until the packet is covered.
                debug_assert!(
                    !self.pending.is_empty(),
                    "a waiting packet without a report"
                );
                if self.pending.is_empty() {
                    return super::NEVER;
                }
                continue;
            }
            self.credit = self.credit.saturating_sub(u64::from(op.bytes));
            self.last_decision = decision;
            self.decided.push_back((decision, op.bytes));
            while self.decided.front().is_some_and(|d| d.0 < self.last_effect) {
                self.decided.pop_front();
            }
            if op.time >= now {
                return op;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::cellular::schedule::TraceSource;
    use proptest::prelude::*;

    const fn ms(x: u64) -> Time {
        Time(x * MS)
    }

    /// ns-3's timing: report in the next TTI, 6 ms to the scheduler, n + 4.
    const NS3: GrantConf = GrantConf {
        sr_period_ms: 1,
        request_delay_ms: 6,
        grant_delay_ms: 4,
    };

    fn server(times: &[u64], bytes: u32, conf: GrantConf) -> GrantServer<TraceSource> {
        GrantServer::new(TraceSource::new(times.into(), bytes), conf)
    }

    #[test]
    fn a_burst_of_acks_leaves_in_the_first_grant_and_padding_carries_a_late_one() {
        // One 1500 B opportunity per ms. ACKs (52 B) at 0.5, 1.5, 2.5 ms report
        // at 1, 2, 3 ms; the first report reaches the scheduler at 7 ms, whose
        // grant is used at 11 ms and carries all three (156 B ≤ 1500 B). The
        // reports of 2 and 3 ms (104 B, 156 B: nothing had left by then)
        // grant 12 and 13 ms as well: an ACK arriving at 12.5 ms leaves at 13.
        let mut s = server(&[1], 1500, NS3);
        let ends: Vec<Time> = [500_000, 1_500_000, 2_500_000, 12_500_000]
            .iter()
            .map(|&t| s.serve(Time(t), 52).end)
            .collect();
        assert_eq!(ends, [11, 11, 11, 13].map(ms));
        // At 30 ms the grants are over: report at 30, decision at 36, used at 40.
        assert_eq!(s.serve(ms(30), 52).end, ms(40));
    }

    #[test]
    fn a_backlog_is_granted_every_opportunity_until_the_report_is_covered() {
        // Ten 1500 B packets at 0: one report (15 000 B) at 0 ms, effect 6 ms,
        // grants at 10..=19 ms (ten of 1500 B use up the credit exactly).
        let mut s = server(&[1], 1500, NS3);
        let ends: Vec<Time> = (0..10).map(|_| s.serve(Time(0), 1500).end).collect();
        assert_eq!(ends, (10..20).map(ms).collect::<Vec<_>>());
    }

    #[test]
    fn without_grants_flowing_the_request_waits_for_its_occasion() {
        // SR every 10 ms: data at 3 ms requests at 10, scheduler at 16, used at 20.
        let conf = GrantConf {
            sr_period_ms: 10,
            ..NS3
        };
        let mut s = server(&[1], 1500, conf);
        assert_eq!(s.serve(ms(3), 100).end, ms(20));
    }

    /// The ns-3 rules stepped opportunity by opportunity with every arrival
    /// known in advance (sr_period 1): report i is sent at
    /// max(previous, ⌈a_i⌉ ms), takes effect `request_delay` later and
    /// replaces the credit with the bytes of packets 0..=i not served by
    /// then; an opportunity whose decision time (t − grant_delay) finds
    /// credit is granted whole; granted opportunities serve the FIFO.
    fn reference(times: &[u64], op_bytes: u32, conf: GrantConf, pkts: &[(u64, u32)]) -> Vec<u64> {
        let q = u64::from(conf.request_delay_ms) * MS;
        let g = u64::from(conf.grant_delay_ms) * MS;
        let mut sent = Vec::new();
        let mut last = 0;
        for &(a, _) in pkts {
            last = a.div_ceil(MS).max(last / MS) * MS;
            sent.push(last);
        }
        let mut log: Vec<(u64, usize, u32)> = Vec::new(); // (time, packet, bytes)
        let mut left: Vec<u32> = pkts.iter().map(|p| p.1).collect();
        let mut end = vec![0u64; pkts.len()];
        let (mut credit, mut next_report, mut head) = (0u64, 0usize, 0usize);
        let mut src = TraceSource::new(times.into(), op_bytes);
        let mut op = src.seek(Time(0));
        while head < pkts.len() {
            let decision = op.time.0.saturating_sub(g);
            while next_report < pkts.len() && sent[next_report] + q <= decision {
                let i = next_report;
                let total: u64 = pkts[..=i].iter().map(|p| u64::from(p.1)).sum();
                let served: u64 = log
                    .iter()
                    .filter(|l| l.0 <= sent[i] && l.1 < i)
                    .map(|l| u64::from(l.2))
                    .sum();
                credit = total - served;
                next_report += 1;
            }
            if credit > 0 {
                credit = credit.saturating_sub(u64::from(op_bytes));
                let mut cap = op.bytes;
                while head < pkts.len() && pkts[head].0 <= op.time.0 && cap > 0 {
                    let take = cap.min(left[head]);
                    cap -= take;
                    left[head] -= take;
                    log.push((op.time.0, head, take));
                    if left[head] == 0 {
                        end[head] = op.time.0;
                        head += 1;
                    }
                }
            }
            op = src.next();
        }
        end
    }

    proptest! {
        #[test]
        fn departures_match_the_per_opportunity_reference(
            gaps in proptest::collection::vec(0u64..4_000_000, 1..40),
            sizes in proptest::collection::vec(40u32..3000, 40),
            holes in proptest::collection::vec(any::<bool>(), 12),
            op_bytes in 200u32..2000,
            request_delay_ms in 0u32..8,
            grant_delay_ms in 1u32..6,
        ) {
            // A 12 ms trace with some ms missing (at least its last).
            let mut times: Vec<u64> = (1..12).filter(|&t| holes[t as usize]).collect();
            times.push(12);
            let conf = GrantConf { sr_period_ms: 1, request_delay_ms, grant_delay_ms };
            let mut t = 0;
            let pkts: Vec<(u64, u32)> = gaps.iter().zip(&sizes).map(|(&g, &b)| {
                t += g;
                (t, b)
            }).collect();
            let want = reference(&times, op_bytes, conf, &pkts);
            let mut s = server(&times, op_bytes, conf);
            let got: Vec<u64> = pkts.iter().map(|&(a, b)| s.serve(Time(a), b).end.0).collect();
            prop_assert_eq!(got, want);
        }
    }
}
