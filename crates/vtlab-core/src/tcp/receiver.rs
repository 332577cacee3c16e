//! The TCP receiver of a bulk transfer: reassembly, the advertised window,
//! delayed ACKs and timestamp echo.
//!
//! * Delayed ACKs (RFC 1122/5681, ns-3 `DelAckCount`/`DelAckTimeout`): an ACK
//!   is sent for every `delayed_ack_count` in-order segments or when the timer
//!   (armed by the first unacknowledged segment) expires. Out-of-order,
//!   duplicate and hole-filling segments are acknowledged at once. The
//!   `linux` profile adds Linux's quick ACKs, interactive mode and its
//!   acknowledgement of short segments on read ([`crate::tcp::delack`]);
//!   the RTO its idle-gap rule compares with is this end's: the sender's of
//!   a two-way connection ([`Receiver::set_local_rto`]), else the one the
//!   handshake gives (`tcp_synack_rtt_meas`: the RTT from the SYN-ACK to the
//!   first segment, or 3 s without a sample, `TCP_TIMEOUT_FALLBACK`).
//! * The application reads in-order data at once (ns-3 `PacketSink`). Under
//!   the `ns3` profile the advertised window is then the whole receive buffer,
//!   out-of-order bytes held or not (ns-3.44 `TcpSocketBase::
//!   AdvertisedWindowSize` = `TcpRxBuffer::MaxRxSequence` − `NextRxSequence`,
//!   where `MaxRxSequence` is `NextRxSequence` + the buffer once the in-order
//!   bytes are read); a segment is kept if it starts below `rcv_nxt` + the
//!   buffer (`TcpSocketBase::OutOfRange`), its tail cut at the lowest
//!   out-of-order byte held + the buffer (`TcpRxBuffer::Add`). The `ns2`
//!   receiver advertises the buffer less the out-of-order bytes held. The
//!   `linux` profile autotunes the buffer and selects the window as Linux does
//!   ([`crate::tcp::autotune`]), unless a receive-window control (ARWND) sets
//!   it (then the buffer less the out-of-order bytes).
//! * SACK (RFC 2018), when the flow uses SACK recovery: an ACK sent while
//!   out-of-order data is held carries up to 4 blocks (3 with timestamps); the
//!   first is the block holding the most recently received segment, the rest
//!   follow from the highest down. Under the `ns2` profile ns-2's sink
//!   chooses them instead ([`crate::tcp::ns2_sack`]: at most 3, earlier
//!   blocks as reported).
//! * Timestamps (RFC 7323 §4.3): TS.Recent is updated from a segment only if it
//!   starts at or before the last acknowledgement sent, so a delayed ACK echoes
//!   the earliest segment it covers.

use std::collections::BTreeMap;

use crate::engine::{Duration, Time};
use crate::net::{NodeId, Packet, PacketKind, MAX_SACK_BLOCKS};
use crate::tcp::autotune::RcvAutotune;
use crate::tcp::cc::Profile;
use crate::tcp::config::option_bytes;
use crate::tcp::delack::LinuxAck;
use crate::tcp::ns2_sack::Ns2Sacker;
use crate::tcp::rwnd::RwndControl;
use crate::tcp::{Recovery, RttEstimator, TcpConfig};

#[derive(Clone, Debug, Default)]
pub struct ReceiverStats {
    pub segments_received: u64,
    pub duplicate_segments: u64,
    pub out_of_order_segments: u64,
    pub acks_sent: u64,
}

pub struct Receiver {
    flow: u32,
    /// The sender's node.
    peer: NodeId,
    total: u64,
    recv_buffer: u64,
    /// ns-3's receive buffer rules (the `ns3` profile): out-of-order bytes
    /// leave the window whole.
    ns3_buffer: bool,
    header_bytes: u32,
    timestamps: bool,
    delayed_ack: bool,
    delayed_ack_count: u32,
    delayed_ack_timeout: Duration,
    rcv_nxt: u64,
    /// Out-of-order intervals [start, end), disjoint and non-adjacent.
    ooo: BTreeMap<u64, u64>,
    ooo_bytes: u64,
    unacked_segments: u32,
    timer: Option<Time>,
    ts_recent: Time,
    last_ack_sent: u64,
    completed_at: Option<Time>,
    /// SACK blocks per ACK (0: SACK off).
    sack_blocks: usize,
    /// Start of the most recently received out-of-order segment.
    last_out_of_order: u64,
    /// ns-2's SACK sink (the `ns2` profile with SACK), and the start of the
    /// last data segment received (its `old_seqno`).
    ns2_sacker: Option<Ns2Sacker>,
    last_segment: u64,
    /// What window to advertise within the buffer ([`crate::tcp::rwnd`]).
    window: RwndControl,
    /// Linux's delayed-ACK engine (the `linux` profile).
    linux: Option<LinuxAck>,
    /// Linux's receive-buffer autotuning (the `linux` profile with the
    /// fixed window control).
    autotune: Option<RcvAutotune>,
    /// This end's RTO as its sender would set it from the handshake.
    handshake_rtt: RttEstimator,
    /// This end's RTO, set by the owner of a two-way connection.
    local_rto: Option<Duration>,
    /// The first SYN-ACK's send time and how many were sent.
    syn_ack_at: Option<Time>,
    syn_acks: u32,
    pub stats: ReceiverStats,
}

impl Receiver {
    pub fn new(cfg: &TcpConfig, flow: u32, peer: NodeId, total: u64) -> Self {
        Receiver {
            flow,
            peer,
            total,
            recv_buffer: cfg.recv_buffer,
            ns3_buffer: cfg.profile == Profile::Ns3,
            header_bytes: cfg.header_bytes as u32,
            timestamps: cfg.timestamps,
            delayed_ack: cfg.delayed_ack,
            delayed_ack_count: cfg.delayed_ack_count,
            delayed_ack_timeout: Duration(cfg.delayed_ack_timeout_ns),
            rcv_nxt: 0,
            ooo: BTreeMap::new(),
            ooo_bytes: 0,
            // ns-3 (ProcessSynRcvd) primes the delayed-ACK counter when the
            // handshake completes, so the first data segment is ACKed at once.
            unacked_segments: if cfg.profile == Profile::Ns3 {
                cfg.delayed_ack_count.saturating_sub(1)
            } else {
                0
            },
            timer: None,
            ts_recent: Time::ZERO,
            last_ack_sent: 0,
            completed_at: None,
            sack_blocks: match (cfg.recovery, cfg.timestamps) {
                (Recovery::Sack, true) => MAX_SACK_BLOCKS - 1,
                (Recovery::Sack, false) => MAX_SACK_BLOCKS,
                _ => 0,
            },
            last_out_of_order: 0,
            ns2_sacker: (cfg.profile == Profile::Ns2 && cfg.recovery == Recovery::Sack)
                .then(Ns2Sacker::default),
            last_segment: 0,
            window: RwndControl::new(&cfg.rwnd, cfg.mss, cfg.recv_buffer),
            linux: (cfg.profile == Profile::Linux).then(|| {
                LinuxAck::new(
                    cfg.mss,
                    u64::from(option_bytes(cfg.timestamps, 0)),
                    cfg.recv_buffer,
                    Duration(cfg.delayed_ack_timeout_ns),
                )
            }),
            autotune: (cfg.profile == Profile::Linux && cfg.rwnd.is_fixed()).then(|| {
                RcvAutotune::new(
                    cfg.recv_buffer,
                    cfg.recv_buffer_max,
                    cfg.mss - u64::from(option_bytes(cfg.timestamps, 0)),
                )
            }),
            handshake_rtt: RttEstimator::new(
                Duration(cfg.rto_initial_ns),
                Duration(cfg.rto_min_ns),
                Duration(cfg.rto_max_ns),
                Duration(cfg.clock_granularity_ns),
            ),
            local_rto: None,
            syn_ack_at: None,
            syn_acks: 0,
            stats: ReceiverStats::default(),
        }
    }

    pub fn bytes_received(&self) -> u64 {
        self.rcv_nxt
    }
    /// When the last byte of the transfer arrived in order.
    pub fn completed_at(&self) -> Option<Time> {
        self.completed_at
    }
    pub fn timer_deadline(&self) -> Option<Time> {
        self.timer
    }
    /// The window this receiver advertises now.
    pub fn advertised_window(&self) -> u64 {
        self.rwnd()
    }
    fn rwnd(&self) -> u64 {
        match &self.autotune {
            Some(a) => a.current_window(self.rcv_nxt),
            None if self.ns3_buffer => self.window.window(self.recv_buffer),
            None => self
                .window
                .window(self.recv_buffer.saturating_sub(self.ooo_bytes)),
        }
    }

    /// The last window advertised, whole (Linux `rcv_wnd`, which sizes the
    /// quick-ACK count); without autotuning the window now.
    fn last_rcv_wnd(&self) -> u64 {
        self.autotune
            .as_ref()
            .map_or(self.rwnd(), RcvAutotune::rcv_wnd)
    }

    /// The window an ACK sent now advertises (Linux `tcp_select_window`
    /// under autotuning, which also records it).
    fn select_window(&mut self) -> u64 {
        let Some(a) = self.autotune.as_mut() else {
            return self.rwnd();
        };
        let (window, quick_off) = a.select_window(self.rcv_nxt, self.ooo_bytes);
        if quick_off {
            if let Some(l) = self.linux.as_mut() {
                l.end_quick();
            }
        }
        window
    }

    /// Linux's autotuning state (`sk_rcvbuf`, `window_clamp`,
    /// `rcv_ssthresh`, `rcvq_space.space`, `scaling_ratio`, the receiver's
    /// RTT in µs × 8); None without autotuning.
    pub fn autotune_state(&self) -> Option<(u64, u64, u64, u64, u64, u64)> {
        self.autotune.as_ref().map(RcvAutotune::state)
    }

    /// A raised rcv_ssthresh asks for a quick ACK (`tcp_grow_window`).
    fn request_quick(&mut self, grown: bool) {
        if grown {
            if let Some(l) = self.linux.as_mut() {
                l.request_quick();
            }
        }
    }

    /// How far the highest out-of-order byte lies beyond `rcv_nxt`.
    fn ooo_span(&self) -> u64 {
        self.ooo
            .last_key_value()
            .map_or(0, |(_, &e)| e - self.rcv_nxt)
    }

    /// This end's retransmission timeout now (its sender's, on a two-way
    /// connection): Linux's receiver enters quick-ACK mode when data
    /// arrives more than that after the previous segment.
    pub fn set_local_rto(&mut self, rto: Duration) {
        self.local_rto = Some(rto);
    }

    /// Quick ACKs left and whether the connection is interactive (the
    /// `linux` profile's engine; None for `ns3`).
    pub fn quick_ack_state(&self) -> Option<(u32, bool)> {
        self.linux.as_ref().map(|l| (l.quick(), l.pingpong()))
    }

    /// The receive-window controller (ARWND's counters, for tests and metrics).
    pub fn window_control(&self) -> &RwndControl {
        &self.window
    }

    pub fn on_packet(&mut self, now: Time, p: &Packet, out: &mut Vec<Packet>) {
        match p.kind {
            PacketKind::Syn => {
                // (Re)accept; a duplicate SYN means our SYN-ACK was lost.
                let mut reply = self.ack_packet(now, PacketKind::SynAck);
                reply.ts_ecr = p.ts_val;
                self.syn_ack_at.get_or_insert(now);
                self.syn_acks += 1;
                out.push(reply);
            }
            PacketKind::Data => self.on_data(now, p, out),
            PacketKind::SynAck | PacketKind::Ack => {}
        }
    }

    pub fn on_timer(&mut self, now: Time, out: &mut Vec<Packet>) {
        if matches!(self.timer, Some(t) if t <= now) {
            if let Some(l) = self.linux.as_mut() {
                l.on_delack_timer();
            }
            self.send_ack(now, out);
        }
    }

    fn on_data(&mut self, now: Time, p: &Packet, out: &mut Vec<Packet>) {
        self.stats.segments_received += 1;
        let (start, end) = (p.seq, p.seq + u64::from(p.len));
        self.last_segment = start;
        if let Some(a) = self.autotune.as_mut() {
            let ecr = (self.timestamps && p.ts_ecr > Time::ZERO).then_some(p.ts_ecr);
            a.on_segment(now, u64::from(p.len), ecr);
        }
        if end <= self.rcv_nxt {
            self.stats.duplicate_segments += 1;
            let rwnd = self.last_rcv_wnd();
            if let Some(l) = self.linux.as_mut() {
                l.on_duplicate(rwnd);
            }
            self.send_ack(now, out);
            return;
        }
        if start > self.rcv_nxt {
            self.stats.out_of_order_segments += 1;
            if let Some(end) = self.ooo_accept(start, end) {
                self.insert_out_of_order(start, end);
                self.last_out_of_order = start;
                let (span, held) = (self.ooo_span(), self.ooo_bytes);
                let grown = self
                    .autotune
                    .as_mut()
                    .is_some_and(|a| a.on_out_of_order(u64::from(p.len), span, held));
                self.request_quick(grown);
            }
            self.send_ack(now, out);
            return;
        }
        if start <= self.last_ack_sent {
            self.ts_recent = p.ts_val;
        }
        if self.timestamps && p.ts_ecr > Time::ZERO && now >= p.ts_ecr {
            // Linux's tcp_rcv_rtt_measure_ts: the echo of our own ACK's TSval.
            self.window.on_rtt(now, now - p.ts_ecr);
        }
        let had_gap = !self.ooo.is_empty();
        self.rcv_nxt = end;
        while let Some((&s, &e)) = self.ooo.first_key_value() {
            if s > self.rcv_nxt {
                break;
            }
            self.ooo.remove(&s);
            self.ooo_bytes -= e - s;
            self.rcv_nxt = self.rcv_nxt.max(e);
        }
        if self.rcv_nxt >= self.total && self.completed_at.is_none() {
            self.completed_at = Some(now);
        }
        if self.linux.is_some() {
            let (rwnd, rto) = (self.last_rcv_wnd(), self.local_rto(now, p));
            if let Some(l) = self.linux.as_mut() {
                l.on_data(now, u64::from(p.len), p.push, rwnd, rto);
            }
        }
        let (rcv_nxt, held) = (self.rcv_nxt, self.ooo_bytes);
        let grown = self
            .autotune
            .as_mut()
            .is_some_and(|a| a.on_in_order(now, u64::from(p.len), rcv_nxt, held));
        self.request_quick(grown);
        self.decide(now, had_gap, out);
        // The application reads what arrived in order (`tcp_rcv_space_adjust`).
        let span = self.ooo_span();
        if let Some(a) = self.autotune.as_mut() {
            a.on_read(now, rcv_nxt, span);
        }
    }

    /// Where the kept part of an out-of-order segment [start, end) ends, or
    /// None if it is dropped. `ns3`: kept if it starts below `rcv_nxt` + the
    /// buffer (`TcpSocketBase::OutOfRange`), its tail cut at the lowest
    /// out-of-order byte held + the buffer (`TcpRxBuffer::Add`). Otherwise
    /// kept whole if it ends within the buffer, or under autotuning the
    /// window promised, beyond `rcv_nxt`.
    fn ooo_accept(&self, start: u64, end: u64) -> Option<u64> {
        if self.ns3_buffer {
            if start - self.rcv_nxt >= self.recv_buffer {
                return None;
            }
            let cap = self
                .ooo
                .first_key_value()
                .map_or(end, |(&low, _)| low + self.recv_buffer);
            return (end.min(cap) > start).then_some(end.min(cap));
        }
        let limit = match &self.autotune {
            Some(a) => a.current_window(self.rcv_nxt),
            None => self.recv_buffer,
        };
        (end - self.rcv_nxt <= limit).then_some(end)
    }

    /// This end's RTO: the owner's, else the handshake's, sampled at the
    /// first in-order segment (Linux measures the SYN-ACK's round trip when
    /// the handshake's ACK arrives, which the first segment carries).
    fn local_rto(&mut self, now: Time, p: &Packet) -> Duration {
        if let Some(rto) = self.local_rto {
            return rto;
        }
        if self.handshake_rtt.srtt().is_none() {
            let sample = if self.timestamps && p.ts_ecr > Time::ZERO && now >= p.ts_ecr {
                Some(now - p.ts_ecr)
            } else {
                self.syn_ack_at
                    .filter(|_| self.syn_acks == 1)
                    .map(|t| now - t)
            };
            match sample {
                Some(r) => self.handshake_rtt.sample(r),
                None => self.local_rto = Some(Duration::from_secs(3)),
            }
        }
        self.local_rto.unwrap_or(self.handshake_rtt.rto())
    }

    /// Whether to ACK an in-order arrival now or later (delayed ACK).
    fn decide(&mut self, now: Time, had_gap: bool, out: &mut Vec<Packet>) {
        self.unacked_segments += 1;
        let quick = self.linux.as_ref().is_some_and(LinuxAck::ack_now);
        if had_gap || !self.delayed_ack || quick || self.unacked_segments >= self.delayed_ack_count
        {
            self.send_ack(now, out);
        } else if self.timer.is_none() {
            self.timer = Some(now + self.delayed_ack_timeout);
        }
    }

    /// A pure ACK now (the client's ACK of the SYN-ACK on a two-way connection).
    pub fn ack_now(&mut self, now: Time, out: &mut Vec<Packet>) {
        if let Some(l) = self.linux.as_mut() {
            l.on_ack_sent(false);
        }
        out.push(self.ack_packet(now, PacketKind::Ack));
        self.stats.acks_sent += 1;
        self.last_ack_sent = self.rcv_nxt;
        self.unacked_segments = 0;
        self.timer = None;
    }

    fn insert_out_of_order(&mut self, mut start: u64, mut end: u64) {
        if let Some((&s, &e)) = self.ooo.range(..=start).next_back() {
            if e >= start {
                self.ooo.remove(&s);
                self.ooo_bytes -= e - s;
                start = s;
                end = end.max(e);
            }
        }
        while let Some((&s, &e)) = self.ooo.range(start..).next() {
            if s > end {
                break;
            }
            self.ooo.remove(&s);
            self.ooo_bytes -= e - s;
            end = end.max(e);
        }
        self.ooo.insert(start, end);
        self.ooo_bytes += end - start;
    }

    /// SACK blocks for the next ACK: the block holding the latest
    /// out-of-order segment first, then the others from the highest down.
    fn fill_sack(&mut self, p: &mut Packet) {
        if let Some(s) = self.ns2_sacker.as_mut() {
            let n = s.blocks(self.last_segment, self.rcv_nxt, &self.ooo, &mut p.sack);
            p.sack_len = n as u8;
            return;
        }
        if self.sack_blocks == 0 || self.ooo.is_empty() {
            return;
        }
        let recent = self
            .ooo
            .range(..=self.last_out_of_order)
            .next_back()
            .filter(|(_, &e)| e > self.last_out_of_order)
            .map(|(&s, &e)| (s, e));
        let others = self
            .ooo
            .iter()
            .rev()
            .map(|(&s, &e)| (s, e))
            .filter(|b| Some(*b) != recent);
        for (i, block) in recent
            .into_iter()
            .chain(others)
            .take(self.sack_blocks)
            .enumerate()
        {
            p.sack[i] = block;
            p.sack_len = i as u8 + 1;
        }
    }

    fn ack_packet(&mut self, now: Time, kind: PacketKind) -> Packet {
        // The SYN-ACK offers the first window, unscaled (Linux
        // `tcp_make_synack`).
        let rwnd = match (&self.autotune, kind) {
            (Some(a), PacketKind::SynAck) => a.syn_window(),
            _ => self.select_window(),
        };
        let mut p = Packet {
            flow: self.flow,
            dst: self.peer,
            kind,
            seq: 0,
            len: 0,
            ack: self.rcv_nxt,
            rwnd,
            ts_val: now,
            ts_ecr: self.ts_recent,
            ip_bytes: self.header_bytes,
            sack: Default::default(),
            sack_len: 0,
            frag_index: 0,
            frag_count: 1,
            piggyback: false,
            push: false,
        };
        self.fill_sack(&mut p);
        p.ip_bytes += option_bytes(self.timestamps, usize::from(p.sack_len));
        p
    }

    /// The acknowledgement a data segment of the opposite direction carries
    /// (every segment of an established connection does): it also cancels a
    /// delayed ACK and restarts the count (ns-3 `SendDataPacket`, Linux
    /// `tcp_event_ack_sent`). Counted among the ACKs sent only when it
    /// stands in for a delayed ACK.
    /// For the `linux` profile it is also a data segment this end sends
    /// (`tcp_event_data_sent`: a reply within `ato` makes it interactive).
    pub fn ack_for_data(&mut self, now: Time) -> Packet {
        let p = self.ack_packet(now, PacketKind::Ack);
        let scheduled = self.timer.is_some() || self.unacked_segments > 0;
        if scheduled {
            self.stats.acks_sent += 1;
        }
        if let Some(l) = self.linux.as_mut() {
            l.on_ack_sent(scheduled);
            l.on_data_sent(now);
        }
        self.last_ack_sent = self.rcv_nxt;
        self.unacked_segments = 0;
        self.timer = None;
        p
    }

    /// An ACK of data that arrived (every caller answers a segment or the
    /// delayed-ACK timer).
    fn send_ack(&mut self, now: Time, out: &mut Vec<Packet>) {
        if let Some(l) = self.linux.as_mut() {
            l.on_ack_sent(true);
        }
        out.push(self.ack_packet(now, PacketKind::Ack));
        self.stats.acks_sent += 1;
        self.last_ack_sent = self.rcv_nxt;
        self.unacked_segments = 0;
        self.timer = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(seq: u64, len: u32, ts: u64) -> Packet {
        Packet {
            flow: 0,
            dst: NodeId(1),
            kind: PacketKind::Data,
            seq,
            len,
            ack: 0,
            rwnd: 0,
            ts_val: Time(ts),
            ts_ecr: Time::ZERO,
            ip_bytes: len + 40,
            sack: Default::default(),
            sack_len: 0,
            frag_index: 0,
            frag_count: 1,
            piggyback: false,
            push: false,
        }
    }

    fn rx(total: u64) -> Receiver {
        let cfg = TcpConfig {
            recovery: Recovery::NewReno,
            ..TcpConfig::default()
        };
        Receiver::new(&cfg, 0, NodeId(0), total)
    }

    #[test]
    fn sack_blocks_most_recent_first_then_highest() {
        let mut r = Receiver::new(&TcpConfig::default(), 0, NodeId(0), 100_000);
        let mut out = vec![];
        r.on_packet(Time(1), &data(2000, 1000, 1), &mut out);
        assert_eq!(out[0].sack_blocks(), &[(2000, 3000)]);
        r.on_packet(Time(2), &data(6000, 1000, 2), &mut out);
        r.on_packet(Time(3), &data(4000, 1000, 3), &mut out);
        assert_eq!(
            out[2].sack_blocks(),
            &[(4000, 5000), (6000, 7000), (2000, 3000)]
        );
        // Timestamps on: at most 3 blocks.
        r.on_packet(Time(4), &data(8000, 1000, 4), &mut out);
        r.on_packet(Time(5), &data(10000, 1000, 5), &mut out);
        assert_eq!(out[4].sack_len, 3);
        assert_eq!(out[4].sack[0], (10000, 11000));
        // Merging with a neighbour reports the merged block.
        r.on_packet(Time(6), &data(3000, 1000, 6), &mut out);
        assert_eq!(out[5].sack[0], (2000, 5000));
        // Once the holes are filled no blocks are sent.
        r.on_packet(Time(7), &data(0, 2000, 7), &mut out);
        assert_eq!(out[6].ack, 5000);
        assert!(out[6].sack_len > 0, "6000.. still held");
    }

    fn rx_profile(profile: Profile, buffer: u64) -> Receiver {
        let cfg = TcpConfig {
            recovery: Recovery::NewReno,
            profile,
            recv_buffer: buffer,
            ..TcpConfig::default()
        };
        Receiver::new(&cfg, 0, NodeId(0), 1_000_000)
    }

    #[test]
    fn ns3_window_ignores_out_of_order_bytes_and_keeps_by_its_start() {
        // ns-3.44 with a 10000 B buffer and a PacketSink that reads at once.
        // AdvertisedWindowSize = MaxRxSequence - NextRxSequence; with every
        // in-order byte read, MaxRxSequence = NextRxSequence + 10000, so the
        // window stays 10000 while 1000..3000 is held out of order.
        let mut r = rx_profile(Profile::Ns3, 10_000);
        let mut out = vec![];
        r.on_packet(Time(1), &data(0, 1000, 1), &mut out);
        r.on_packet(Time(2), &data(2000, 1000, 2), &mut out);
        assert_eq!((out[1].ack, r.advertised_window()), (1000, 10_000));
        // OutOfRange drops a segment starting at NextRxSequence + 10000 =
        // 11000 (ACKed, not kept); one starting at 10000 passes, and Add
        // cuts its tail at the lowest held byte 2000 + 10000 = 12000, so of
        // [10000, 12500) only [10000, 12000) is kept.
        r.on_packet(Time(3), &data(11_000, 1000, 3), &mut out);
        assert_eq!((out.len(), r.ooo_bytes), (3, 1000));
        r.on_packet(Time(4), &data(10_000, 2500, 4), &mut out);
        assert_eq!(r.ooo_bytes, 1000 + 2000);
        assert_eq!(r.advertised_window(), 10_000);
        // The hole [1000, 2000) filled: NextRxSequence 3000, window whole.
        r.on_packet(Time(5), &data(1000, 1000, 5), &mut out);
        assert_eq!((out[4].ack, r.advertised_window()), (3000, 10_000));
        // The ns2 receiver (unchanged) subtracts the held bytes: 10000 - 1000.
        let mut n = rx_profile(Profile::Ns2, 10_000);
        n.on_packet(Time(1), &data(0, 1000, 1), &mut out);
        n.on_packet(Time(2), &data(2000, 1000, 2), &mut out);
        assert_eq!(n.advertised_window(), 9000);
    }

    #[test]
    fn ns3_acks_the_first_data_segment_at_once() {
        // ns-3 primes the delayed-ACK counter at the end of the handshake.
        let cfg = TcpConfig {
            recovery: Recovery::NewReno,
            profile: Profile::Ns3,
            ..TcpConfig::default()
        };
        let mut r = Receiver::new(&cfg, 0, NodeId(0), 100_000);
        let mut out = vec![];
        r.on_packet(Time(10), &data(0, 1000, 10), &mut out);
        assert_eq!(out.len(), 1);
        r.on_packet(Time(20), &data(1000, 1000, 20), &mut out);
        assert_eq!(out.len(), 1, "then every second segment");
    }

    #[test]
    fn ns2_sinks_ack_every_packet_or_every_second_after_100_ms() {
        // TCPSink (the ns2 default, count 1): an ACK per packet at once.
        let cfg = TcpConfig::defaults(Profile::Ns2);
        let mut r = Receiver::new(&cfg, 0, NodeId(0), 100_000);
        let mut out = vec![];
        r.on_packet(Time(10), &data(0, 1000, 10), &mut out);
        r.on_packet(Time(20), &data(1000, 1000, 20), &mut out);
        assert_eq!(out.iter().map(|p| p.ack).collect::<Vec<_>>(), [1000, 2000]);
        // DelAckSink::recv: the first in-order packet waits (no priming after
        // the pseudo-SYN), the second is ACKed at once, and a lone packet
        // waits interval_ = 100 ms.
        let cfg = TcpConfig {
            delayed_ack_count: 2,
            ..TcpConfig::defaults(Profile::Ns2)
        };
        let mut r = Receiver::new(&cfg, 0, NodeId(0), 100_000);
        let mut out = vec![];
        r.on_packet(Time(10), &data(0, 1000, 10), &mut out);
        assert!(out.is_empty());
        assert_eq!(
            r.timer_deadline(),
            Some(Time(10) + Duration::from_millis(100))
        );
        r.on_packet(Time(20), &data(1000, 1000, 20), &mut out);
        assert_eq!(out.iter().map(|p| p.ack).collect::<Vec<_>>(), [2000]);
        r.on_packet(Time(30), &data(2000, 1000, 30), &mut out);
        r.on_timer(Time(30) + Duration::from_millis(100), &mut out);
        assert_eq!(out.last().map(|p| p.ack), Some(3000));
        // A packet above a hole is ACKed at once (a duplicate ACK).
        r.on_packet(Time(40), &data(4000, 1000, 40), &mut out);
        assert_eq!(out.last().map(|p| p.ack), Some(3000));
        assert_eq!(out.len(), 3);
    }

    #[test]
    fn delayed_ack_every_second_segment_and_on_timeout() {
        // The ns3 profile without its primed first ACK: the plain rule.
        let cfg = TcpConfig {
            recovery: Recovery::NewReno,
            ..TcpConfig::default()
        };
        let mut r = Receiver::new(&cfg, 0, NodeId(0), 100_000);
        r.unacked_segments = 0;
        let mut out = vec![];
        r.on_packet(Time(10), &data(0, 1000, 10), &mut out);
        assert!(out.is_empty());
        assert_eq!(
            r.timer_deadline(),
            Some(Time(10) + Duration::from_millis(200))
        );
        r.on_packet(Time(20), &data(1000, 1000, 20), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].ack, 2000);
        // The delayed ACK echoes the first segment's timestamp (RFC 7323).
        assert_eq!(out[0].ts_ecr, Time(10));
        assert_eq!(r.timer_deadline(), None);
        r.on_packet(Time(30), &data(2000, 1000, 30), &mut out);
        r.on_timer(Time(30) + Duration::from_millis(200), &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(out[1].ack, 3000);
    }

    const MS: u64 = 1_000_000;

    /// A linux-profile bulk receiver after its handshake: SYN and SYN-ACK at
    /// 1 ms.
    fn linux_rx() -> (Receiver, Vec<Packet>) {
        let cfg = TcpConfig::defaults(Profile::Linux);
        let mut r = Receiver::new(&cfg, 0, NodeId(0), 10_000_000);
        let mut out = vec![];
        let mut syn = data(0, 0, MS);
        syn.kind = PacketKind::Syn;
        r.on_packet(Time(MS), &syn, &mut out);
        out.clear();
        (r, out)
    }

    fn seg(seq: u64, at_ms: u64) -> Packet {
        let mut p = data(seq, 1448, at_ms * MS);
        p.ts_ecr = Time(MS); // the SYN-ACK's TSval
        p
    }

    #[test]
    fn linux_acks_the_first_twenty_two_segments_at_once() {
        // Hand-derived from tcp_event_data_recv: the first segment (1448 B)
        // sets rcv_mss = 1448 and the quick count to
        // min(65160 / (2 * 1448), 16) = 16 (65160: the SYN-ACK's window);
        // each ACK takes one. tcp_grow_window raises rcv_ssthresh by
        // 2 * 1448 from 65160 towards window_clamp = 131072 * 160 / 256 =
        // 81920 (autotune.rs) on segments 0..=5 and each time sets
        // quick |= 1: 16 -> 17, and the ACK takes it back to 16. So 16 quick
        // ACKs remain after segment 5: segments 0..=21 are acknowledged at once.
        let (mut r, mut out) = linux_rx();
        for k in 0..22 {
            r.on_packet(Time(5 * MS), &seg(k * 1448, 5), &mut out);
            assert_eq!(out.len() as u64, k + 1, "segment {k} acknowledged at once");
        }
        // Then every second segment, the first of a pair on the 40 ms timer.
        r.on_packet(Time(6 * MS), &seg(22 * 1448, 6), &mut out);
        assert_eq!(out.len(), 22);
        assert_eq!(r.timer_deadline(), Some(Time(46 * MS)));
        r.on_packet(Time(6 * MS), &seg(23 * 1448, 6), &mut out);
        assert_eq!(out.len(), 23);
        assert_eq!(r.quick_ack_state(), Some((0, false)));
    }

    #[test]
    fn linux_quick_acks_after_a_gap_longer_than_the_handshake_rto() {
        // The first segment echoes the SYN-ACK sent at 1 ms and arrives at
        // 5 ms: R = 4 ms, so this end's RTO is R + max(200 ms, 4 * R/2) =
        // 204 ms (the linux profile's srtt + max(tcp_rto_min, 4 rttvar)).
        // 22 quick ACKs first (the test above).
        let (mut r, mut out) = linux_rx();
        for k in 0..22 {
            r.on_packet(Time(5 * MS), &seg(k * 1448, 5), &mut out);
        }
        r.on_packet(Time(6 * MS), &seg(22 * 1448, 6), &mut out);
        r.on_packet(Time(6 * MS), &seg(23 * 1448, 6), &mut out);
        assert_eq!(out.len(), 23);
        // 204 ms after the last arrival: not more than the RTO, delayed.
        r.on_packet(Time(210 * MS), &seg(24 * 1448, 210), &mut out);
        assert_eq!(out.len(), 23);
        assert_eq!(r.quick_ack_state(), Some((0, false)));
        r.on_timer(Time(250 * MS), &mut out);
        assert_eq!(out.len(), 24);
        // 205 ms after that: quick-ACK mode again, 16 more.
        r.on_packet(Time(415 * MS), &seg(25 * 1448, 415), &mut out);
        assert_eq!(out.len(), 25);
        assert_eq!(r.quick_ack_state(), Some((15, false)));
    }

    #[test]
    fn linux_acks_a_short_pushed_segment_on_read() {
        // 100 B with PSH after the quick ACKs are spent: shorter than
        // rcv_mss (1448), so ICSK_ACK_PUSHED, and the read sends the ACK.
        let (mut r, mut out) = linux_rx();
        for k in 0..22 {
            r.on_packet(Time(5 * MS), &seg(k * 1448, 5), &mut out);
        }
        let n = out.len();
        let mut tail = data(22 * 1448, 100, 7 * MS);
        tail.push = true;
        r.on_packet(Time(7 * MS), &tail, &mut out);
        assert_eq!(out.len(), n + 1);
        // Without PSH (100 + 32 >= 88 + 20 B): the first is PUSHED all the
        // same, the second of equal length teaches rcv_mss = 100 and is not,
        // so it waits for a second segment or the timer.
        r.on_packet(Time(8 * MS), &data(22 * 1448 + 100, 100, 8 * MS), &mut out);
        assert_eq!(out.len(), n + 2);
        r.on_packet(Time(9 * MS), &data(22 * 1448 + 200, 100, 9 * MS), &mut out);
        assert_eq!(out.len(), n + 2);
        assert_eq!(r.timer_deadline(), Some(Time(49 * MS)));
    }

    #[test]
    fn out_of_order_and_hole_fill_are_acked_at_once() {
        let mut r = rx(100_000);
        let mut out = vec![];
        r.on_packet(Time(1), &data(1000, 1000, 1), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].ack, 0);
        // ns-3 (the default profile): held out-of-order bytes leave the
        // window whole (AdvertisedWindowSize, MaxRxSequence).
        assert_eq!(out[0].rwnd, 131_072);
        r.on_packet(Time(2), &data(3000, 1000, 2), &mut out);
        assert_eq!(out[1].ack, 0);
        // Filling the first hole acks up to the second hole, immediately.
        r.on_packet(Time(3), &data(0, 1000, 3), &mut out);
        assert_eq!(out[2].ack, 2000);
        r.on_packet(Time(4), &data(2000, 1000, 4), &mut out);
        assert_eq!(out[3].ack, 4000);
        assert_eq!(out[3].rwnd, 131_072);
        // A duplicate is acked at once.
        r.on_packet(Time(5), &data(0, 1000, 5), &mut out);
        assert_eq!(out.len(), 5);
        assert_eq!(r.stats.duplicate_segments, 1);
    }

    #[test]
    fn overlapping_out_of_order_intervals_merge() {
        let mut r = rx(100_000);
        let mut out = vec![];
        for (s, l) in [(5000, 1000), (7000, 1000), (5500, 2000), (9000, 500)] {
            r.on_packet(Time(1), &data(s, l, 1), &mut out);
        }
        assert_eq!(r.ooo.len(), 2);
        assert_eq!(r.ooo_bytes, 3000 + 500);
        r.on_packet(Time(2), &data(0, 5000, 2), &mut out);
        assert_eq!(r.bytes_received(), 8000);
    }

    #[test]
    fn completion_time_is_the_last_in_order_byte() {
        let mut r = rx(2500);
        let mut out = vec![];
        r.on_packet(Time(1), &data(1000, 1500, 1), &mut out);
        assert_eq!(r.completed_at(), None);
        r.on_packet(Time(9), &data(0, 1000, 9), &mut out);
        assert_eq!(r.completed_at(), Some(Time(9)));
    }
}
