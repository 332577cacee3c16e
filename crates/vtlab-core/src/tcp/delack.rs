//! Linux's delayed-ACK engine (`struct inet_connection_sock`'s `icsk_ack`),
//! the `linux` profile's rules for when a receiver acknowledges at once.
//! Followed from Linux 6.18 (`net/ipv4/tcp_input.c`, `tcp_output.c`,
//! `tcp.c`, `include/net/inet_connection_sock.h`):
//!
//! * **Quick ACKs** (`tcp_event_data_recv`, `tcp_incr_quickack`): the first
//!   in-order data segment of a connection, and one that arrives more than
//!   this end's RTO (`icsk_rto`) after the previous one, raise the quick-ACK
//!   count to `rcv_wnd / (2·rcv_mss)` (2 if that is 0), at most
//!   `TCP_MAX_QUICKACKS` = 16. While the count is above 0 and the connection
//!   is not interactive, every in-order segment is acknowledged at once
//!   (`__tcp_ack_snd_check`, `tcp_in_quickack_mode`); every ACK that covers
//!   new data takes one off (`tcp_event_ack_sent`, `tcp_dec_quickack_mode`).
//!   A duplicate segment enters quick-ACK mode (`tcp_enter_quickack_mode`:
//!   the count raised, interactive mode left).
//! * **Interactive (ping-pong) mode** (`tcp_event_data_sent`,
//!   `sysctl_tcp_pingpong_thresh` = 1): a data segment sent less than `ato`
//!   after the last in-order arrival makes the connection interactive; a
//!   delayed-ACK timer that fires in that mode leaves it
//!   (`tcp_delack_timer_handler`).
//! * **Short segments** (`tcp_measure_rcv_mss`, `tcp_cleanup_rbuf`): a
//!   segment shorter than the receiver's estimate of the peer's MSS
//!   (`rcv_mss`: 536 B until a segment at least that long arrives) marks the
//!   ACK `ICSK_ACK_PUSHED`, a second one `ICSK_ACK_PUSHED2`; when the
//!   application reads (at once here) the ACK goes out if PUSHED2 is set, or
//!   PUSHED outside interactive mode.
//!
//! Not followed: `ato` above `TCP_ATO_MIN` (40 ms, the profile's delayed-ACK
//! timeout). The kernel lengthens it when segments arrive 20–40 ms apart or
//! a delayed ACK's timer fires, but bounds the timer by max(srtt, 40 ms)
//! (`tcp_send_delayed_ack`), so it is the same 40 ms wherever this end's
//! smoothed RTT is under 40 ms. A full-sized segment with PSH also sets
//! PUSHED in the kernel; here only short segments do. The "every second
//! segment" rule stays the profile's segment count (the kernel counts more
//! than one `rcv_mss` of unacknowledged bytes: the same for full segments).

use crate::engine::{Duration, Time};

/// `TCP_MAX_QUICKACKS` (include/net/tcp.h).
pub const TCP_MAX_QUICKACKS: u32 = 16;
/// `TCP_MSS_DEFAULT`: the first guess of the peer's MSS.
const TCP_MSS_DEFAULT: u64 = 536;
/// `TCP_MIN_MSS`.
const TCP_MIN_MSS: u64 = 88;
/// The TCP header without options.
const TCP_HEADER: u64 = 20;
/// `ICSK_ACK_PUSHED`, `ICSK_ACK_PUSHED2`.
const PUSHED: u8 = 1;
const PUSHED2: u8 = 2;

/// One receiver's `icsk_ack` state.
#[derive(Clone, Debug)]
pub struct LinuxAck {
    /// Quick ACKs left (`icsk_ack.quick`).
    quick: u32,
    /// Interactive mode (`inet_csk_in_pingpong_mode`).
    pingpong: bool,
    /// The last in-order data arrival (`lrcvtime`); None before the first
    /// (`ato` is still 0 then, so nothing counts as a reply).
    lrcvtime: Option<Time>,
    /// `icsk_ack.ato`, held at `TCP_ATO_MIN` (see the module text).
    ato: Duration,
    /// The estimate of the peer's MSS (`icsk_ack.rcv_mss`).
    rcv_mss: u64,
    /// This end's advertised MSS (`tp->advmss`).
    advmss: u64,
    /// `icsk_ack.last_seg_size`.
    last_seg_size: u64,
    /// The TCP header with the options every segment carries
    /// (`tp->tcp_header_len`).
    header_len: u64,
    /// `ICSK_ACK_PUSHED` / `ICSK_ACK_PUSHED2` of the pending ACK.
    pushed: u8,
}

impl LinuxAck {
    /// A connection whose first window is `rcv_wnd` (`tcp_initialize_rcv_mss`:
    /// rcv_mss = min(advmss, rcv_wnd/2, 536), at least 88).
    pub fn new(mss: u64, option_bytes: u64, rcv_wnd: u64, ato: Duration) -> Self {
        LinuxAck {
            quick: 0,
            pingpong: false,
            lrcvtime: None,
            ato,
            rcv_mss: mss.min(rcv_wnd / 2).clamp(TCP_MIN_MSS, TCP_MSS_DEFAULT),
            advmss: mss,
            last_seg_size: 0,
            header_len: TCP_HEADER + option_bytes,
            pushed: 0,
        }
    }

    /// An in-order data segment of `len` bytes (`push`: PSH) arrived at `now`;
    /// `rcv_wnd` is the window advertised, `rto` this end's RTO
    /// (`tcp_event_data_recv`).
    pub fn on_data(&mut self, now: Time, len: u64, push: bool, rcv_wnd: u64, rto: Duration) {
        self.measure_rcv_mss(len, push);
        match self.lrcvtime {
            None => self.incr_quickack(rcv_wnd),
            Some(last) if now - last > rto => self.incr_quickack(rcv_wnd),
            Some(_) => {}
        }
        self.lrcvtime = Some(now);
    }

    /// `tcp_measure_rcv_mss` for a segment of `len` payload bytes.
    fn measure_rcv_mss(&mut self, len: u64, push: bool) {
        let lss = std::mem::take(&mut self.last_seg_size);
        if len >= self.rcv_mss {
            self.rcv_mss = len.min(self.advmss);
            return;
        }
        let with_header = len + self.header_len;
        if with_header >= TCP_MSS_DEFAULT + TCP_HEADER
            || (with_header >= TCP_MIN_MSS + TCP_HEADER && !push)
        {
            self.last_seg_size = len;
            if len == lss {
                self.rcv_mss = len;
                return;
            }
        }
        if self.pushed & PUSHED != 0 {
            self.pushed |= PUSHED2;
        }
        self.pushed |= PUSHED;
    }

    /// `tcp_incr_quickack(sk, TCP_MAX_QUICKACKS)`.
    fn incr_quickack(&mut self, rcv_wnd: u64) {
        let n = (rcv_wnd / (2 * self.rcv_mss)).min(u64::from(TCP_MAX_QUICKACKS)) as u32;
        let n = if n == 0 { 2 } else { n };
        self.quick = self.quick.max(n);
    }

    /// A duplicate segment arrived (`tcp_enter_quickack_mode`).
    pub fn on_duplicate(&mut self, rcv_wnd: u64) {
        self.incr_quickack(rcv_wnd);
        self.pingpong = false;
    }

    /// Whether the pending ACK of in-order data goes out now: quick-ACK mode
    /// (`tcp_in_quickack_mode`), or the application's read of short data
    /// (`tcp_cleanup_rbuf`).
    pub fn ack_now(&self) -> bool {
        (self.quick > 0 && !self.pingpong)
            || self.pushed & PUSHED2 != 0
            || (self.pushed & PUSHED != 0 && !self.pingpong)
    }

    /// An ACK left; `scheduled`: it covers data not yet acknowledged
    /// (`tcp_event_ack_sent`: `tcp_dec_quickack_mode`, the pending flags
    /// cleared).
    pub fn on_ack_sent(&mut self, scheduled: bool) {
        if scheduled {
            self.quick = self.quick.saturating_sub(1);
        }
        self.pushed = 0;
    }

    /// The delayed-ACK timer fired (`tcp_delack_timer_handler`).
    pub fn on_delack_timer(&mut self) {
        self.pingpong = false;
    }

    /// This end sent a data segment at `now` (`tcp_event_data_sent`).
    pub fn on_data_sent(&mut self, now: Time) {
        if self.lrcvtime.is_some_and(|t| now - t < self.ato) {
            self.pingpong = true;
        }
    }

    /// `tcp_grow_window` raised the window: the next ACK goes at once
    /// (`icsk_ack.quick |= 1`).
    pub fn request_quick(&mut self) {
        self.quick |= 1;
    }
    /// `__tcp_select_window` found the free space under half the full
    /// space (`icsk_ack.quick = 0`).
    pub fn end_quick(&mut self) {
        self.quick = 0;
    }

    /// Quick ACKs left.
    pub fn quick(&self) -> u32 {
        self.quick
    }
    /// Whether the connection is interactive.
    pub fn pingpong(&self) -> bool {
        self.pingpong
    }
    /// The estimate of the peer's MSS.
    #[cfg(test)]
    pub fn rcv_mss(&self) -> u64 {
        self.rcv_mss
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    fn ms(t: u64) -> Time {
        Time(t * MS)
    }
    fn engine(rcv_wnd: u64) -> LinuxAck {
        // MSS 1460 with the 12-byte timestamp option, ato 40 ms.
        LinuxAck::new(1460, 12, rcv_wnd, Duration(40 * MS))
    }

    #[test]
    fn first_segment_gives_sixteen_quick_acks_on_a_large_window() {
        // rcv_mss starts at min(1460, 131072/2, 536) = 536; a 1448 B segment
        // raises it to min(1448, 1460) = 1448 before the count is taken:
        // 131072 / (2 * 1448) = 45, capped at 16.
        let mut a = engine(131_072);
        assert_eq!(a.rcv_mss(), 536);
        a.on_data(ms(0), 1448, false, 131_072, Duration(1000 * MS));
        assert_eq!(a.rcv_mss(), 1448);
        assert_eq!(a.quick(), 16);
        assert!(a.ack_now());
        for left in (0..16).rev() {
            a.on_ack_sent(true);
            assert_eq!(a.quick(), left);
        }
        assert!(!a.ack_now(), "a full segment leaves no PUSHED flag");
    }

    #[test]
    fn quick_count_follows_the_window_and_is_at_least_two() {
        // 14480 / (2 * 1448) = 5.
        let mut a = engine(14_480);
        a.on_data(ms(0), 1448, false, 14_480, Duration(1000 * MS));
        assert_eq!(a.quick(), 5);
        // A window under two segments gives 0, which the kernel makes 2:
        // rcv_mss = min(1460, 2000/2, 536) = 536; 1000 / 1072 = 0.
        let mut b = engine(2000);
        b.on_data(ms(0), 600, false, 1000, Duration(1000 * MS));
        assert_eq!(b.quick(), 2);
    }

    #[test]
    fn a_gap_longer_than_the_rto_restores_quick_acks() {
        let rto = Duration(204 * MS);
        let mut a = engine(131_072);
        a.on_data(ms(0), 1448, false, 131_072, rto);
        for _ in 0..16 {
            a.on_ack_sent(true);
        }
        // 204 ms later: not more than the RTO, no quick ACKs.
        a.on_data(ms(204), 1448, false, 131_072, rto);
        assert_eq!(a.quick(), 0);
        // 205 ms after that: a gap longer than the RTO.
        a.on_data(ms(409), 1448, false, 131_072, rto);
        assert_eq!(a.quick(), 16);
    }

    #[test]
    fn short_segments_are_acked_on_read_unless_interactive() {
        // The session regime: 100 B messages with PSH. 100 + 32 < 556 and
        // PSH is set, so rcv_mss stays 536 and each sets PUSHED.
        let rto = Duration(1000 * MS);
        let mut a = engine(64_240);
        a.on_data(ms(0), 100, true, 64_240, rto);
        assert_eq!(a.rcv_mss(), 536);
        // 64240 / 1072 = 59, capped at 16.
        assert_eq!(a.quick(), 16);
        for _ in 0..16 {
            a.on_ack_sent(true);
        }
        a.on_data(ms(220), 100, true, 64_240, rto);
        assert_eq!(a.quick(), 0);
        assert!(a.ack_now(), "PUSHED, not interactive");
        a.on_ack_sent(true);
        // This end answers 1 ms after the arrival (< ato 40 ms): interactive.
        a.on_data_sent(ms(221));
        assert!(a.pingpong());
        a.on_data(ms(440), 100, true, 64_240, rto);
        assert!(!a.ack_now(), "PUSHED alone waits in interactive mode");
        // A second short segment before the ACK sets PUSHED2.
        a.on_data(ms(441), 100, true, 64_240, rto);
        assert!(a.ack_now());
        a.on_ack_sent(true);
        // The delayed-ACK timer firing leaves interactive mode.
        a.on_data(ms(660), 100, true, 64_240, rto);
        assert!(!a.ack_now());
        a.on_delack_timer();
        assert!(!a.pingpong());
        assert!(a.ack_now());
    }

    #[test]
    fn a_reply_after_ato_is_not_interactive_and_none_before_data() {
        let mut a = engine(64_240);
        // No data received yet: ato is 0 in the kernel, nothing is a reply.
        a.on_data_sent(ms(0));
        assert!(!a.pingpong());
        a.on_data(ms(10), 100, true, 64_240, Duration(1000 * MS));
        a.on_data_sent(ms(50)); // 40 ms later: not less than ato
        assert!(!a.pingpong());
        a.on_data_sent(ms(49)); // 39 ms
        assert!(a.pingpong());
        // A duplicate leaves interactive mode and raises the count.
        for _ in 0..16 {
            a.on_ack_sent(true);
        }
        a.on_duplicate(64_240);
        assert!(!a.pingpong());
        assert_eq!(a.quick(), 16);
    }

    #[test]
    fn equal_segments_without_psh_teach_the_mss() {
        // 300 B segments without PSH: 300 + 32 = 332 >= 88 + 20, so the
        // first records last_seg_size (and sets PUSHED), the second equal
        // one sets rcv_mss = 300 and returns before PUSHED.
        let mut a = engine(131_072);
        a.on_data(ms(0), 300, false, 131_072, Duration(1000 * MS));
        assert_eq!(a.rcv_mss(), 536);
        a.on_ack_sent(true);
        a.on_data(ms(1), 300, false, 131_072, Duration(1000 * MS));
        assert_eq!(a.rcv_mss(), 300);
        for _ in 0..16 {
            a.on_ack_sent(true);
        }
        a.on_data(ms(2), 300, false, 131_072, Duration(1000 * MS));
        assert!(!a.ack_now());
    }
}
