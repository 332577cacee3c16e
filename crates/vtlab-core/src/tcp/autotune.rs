//! Linux's receive-buffer autotuning ("dynamic right-sizing") and the window
//! it advertises: the `linux` profile's receiver. Followed from Linux 6.18
//! (`net/ipv4/tcp_input.c`, `tcp_output.c`, `tcp.c`, `include/net/tcp.h`):
//!
//! * **Buffer and window.** The buffer `sk_rcvbuf` counts memory (`truesize`),
//!   the window counts payload: window = buffer × `scaling_ratio` / 256
//!   (`tcp_win_from_space`), buffer = window × 256 / `scaling_ratio`
//!   (`tcp_space_from_win`). The ratio starts at 128
//!   (`TCP_DEFAULT_SCALING_RATIO`) and becomes payload × 256 / truesize of
//!   the first full-sized segment (`tcp_measure_rcv_mss`). A frame the
//!   emulator writes into a TAP device is one linear skb: 1514 B of frame +
//!   2 of `NET_IP_ALIGN` + the 320-byte `skb_shared_info`, aligned, fit
//!   kmalloc's 2048 B, plus the 256-byte `sk_buff`: truesize 2304, so a
//!   1448-byte segment gives ⌊1448 · 256 / 2304⌋ = 160 ([`TRUESIZE`]).
//! * **The first window** (`tcp_openreq_init_rwin`,
//!   `tcp_select_initial_window`): the buffer is `tcp_rmem[1]`
//!   (`tcp.recv_buffer`), the window its space at ratio 128 rounded down to
//!   whole segments (131072 → 65536 → 45 × 1448 = 65160), the window scale
//!   the one that can express max(window, `tcp_rmem[2]`, `rmem_max`).
//!   At the end of the handshake (`tcp_init_buffer_space`) `window_clamp`
//!   is the full space less one segment (`tcp_app_win`'s reservation),
//!   `rcv_ssthresh` at most that, and the first measure
//!   (`rcvq_space.space`) min(rcv_ssthresh, window, 10 segments).
//! * **rcv_ssthresh** (`tcp_grow_window`): each data segment of at least
//!   128 B raises it by max(2 · advmss, 2 · len) up to min(window_clamp,
//!   free space), when a segment's truesize fits its payload in window
//!   units (else `__tcp_grow_window`'s halving test), and asks for a quick
//!   ACK (`icsk_ack.quick |= 1`).
//! * **Per-RTT measurement** (`tcp_rcv_space_adjust`, at each read; the
//!   application reads at once): once per receiver RTT estimate, the bytes
//!   read since the last measure; if more than `rcvq_space.space`, that
//!   becomes the space and `tcp_rcvbuf_grow` sets the buffer to
//!   `tcp_space_from_win`(2 · space + the out-of-order span), at most
//!   `tcp_rmem[2]` (`tcp.recv_buffer_max`), and `window_clamp` to its window.
//!   An out-of-order segment also calls `tcp_rcvbuf_grow` (6.16).
//! * **The receiver's RTT** (`tcp_rcv_rtt_measure_ts`,
//!   `tcp_rcv_rtt_measure`, `tcp_rcv_rtt_update`): from the echo of this
//!   end's timestamp in a segment at least `rcv_mss` long (whole
//!   milliseconds, at least 1), smoothed by 1/8; and once per window of
//!   data, the time to receive it, kept only if it is smaller.
//! * **The window advertised** (`__tcp_select_window`, `tcp_select_window`):
//!   min(free space, rcv_ssthresh), rounded up to the window scale; 0 when
//!   the free space is under half the full space and under 1/16 of it or
//!   one segment; never less than the window already promised (no
//!   shrinking: `tcp_shrink_window` = 0).
//!
//! Not followed: memory pressure (`tcp_under_memory_pressure`), the window
//! update a read sends when it frees much space (`__tcp_cleanup_rbuf`: the
//! application here reads every segment as it arrives, so the free space
//! is the buffer less the out-of-order data), and the change of
//! `tcp_rcvbuf_grow` in 6.19 (net-next, October 2025: growth scaled by the
//! measure's own growth), which 6.18 does not have.

use crate::engine::{Duration, Time};

/// `TCP_RMEM_TO_WIN_SCALE`.
const WIN_SCALE: u32 = 8;
/// `TCP_DEFAULT_SCALING_RATIO`: half the buffer is window.
const DEFAULT_SCALING_RATIO: u64 = 1 << (WIN_SCALE - 1);
/// The truesize of a received frame of up to 1514 B from a TAP device
/// (module text).
pub const TRUESIZE: u64 = 2304;
/// `net.core.rmem_max`'s default (`SK_RMEM_MAX`), part of the window-scale
/// choice.
const RMEM_MAX: u64 = 212_992;
/// `TCP_MAX_WSCALE`.
const MAX_WSCALE: u32 = 14;
/// `TCP_INIT_CWND`.
const INIT_CWND: u64 = 10;
/// `SOCK_MIN_RCVBUF` / 2: the least window clamp (`tcp_set_window_clamp`).
const MIN_CLAMP: u64 = TRUESIZE;

/// One receiver's autotuning state (`tcp_sock` fields of the same names).
#[derive(Clone, Debug)]
pub struct RcvAutotune {
    /// `sk_rcvbuf`.
    rcvbuf: u64,
    /// `tcp_rmem[2]`.
    cap: u64,
    scaling_ratio: u64,
    window_clamp: u64,
    rcv_ssthresh: u64,
    /// `rx_opt.rcv_wscale`.
    wscale: u32,
    /// The window last advertised and `rcv_nxt` then (`rcv_wnd`, `rcv_wup`).
    rcv_wnd: u64,
    rcv_wup: u64,
    advmss: u64,
    /// `icsk_ack.rcv_mss` (as [`crate::tcp::delack`] keeps it).
    rcv_mss: u64,
    /// `rcvq_space`: the last measure, its start (bytes read) and time.
    space: u64,
    space_seq: u64,
    space_time: Option<Time>,
    /// `rcv_rtt_est.rtt_us` (µs × 8; 0: none yet), the window measure's
    /// end and start, and the last echo used.
    rtt_us8: u64,
    rtt_seq: u64,
    rtt_time: Option<Time>,
    last_tsecr: Option<Time>,
}

/// ⌊log2 x⌋ for x ≥ 1.
fn ilog2(x: u64) -> u32 {
    63 - x.max(1).leading_zeros()
}

impl RcvAutotune {
    /// A passive opener with buffer `rmem` (`tcp_rmem[1]`), maximum `cap`
    /// (`tcp_rmem[2]`) and MSS `advmss` (payload, options deducted).
    pub fn new(rmem: u64, cap: u64, advmss: u64) -> Self {
        let space = (rmem * DEFAULT_SCALING_RATIO) >> WIN_SCALE;
        let rcv_wnd = if space > advmss {
            space - space % advmss
        } else {
            space
        };
        let scale_space = rcv_wnd.max(cap).max(RMEM_MAX);
        let wscale = ilog2(scale_space).saturating_sub(15).min(MAX_WSCALE);
        RcvAutotune {
            rcvbuf: rmem,
            cap,
            scaling_ratio: DEFAULT_SCALING_RATIO,
            window_clamp: 65_535 << wscale,
            rcv_ssthresh: rcv_wnd,
            wscale,
            rcv_wnd,
            rcv_wup: 0,
            advmss,
            rcv_mss: advmss.min(rcv_wnd / 2).clamp(88, 536),
            space: 0,
            space_seq: 0,
            space_time: None,
            rtt_us8: 0,
            rtt_seq: 0,
            rtt_time: None,
            last_tsecr: None,
        }
    }

    fn win_from_space(&self, space: u64) -> u64 {
        (space * self.scaling_ratio) >> WIN_SCALE
    }
    fn space_from_win(&self, win: u64) -> u64 {
        (win << WIN_SCALE) / self.scaling_ratio
    }
    /// `tcp_space`: the free buffer in window units (`held`: out-of-order
    /// payload bytes, held at the segments' truesize).
    fn free_space(&self, held: u64) -> u64 {
        self.win_from_space(self.rcvbuf)
            .saturating_sub(held.div_ceil(self.advmss.max(1)) * self.win_from_space(TRUESIZE))
    }

    /// The window of the SYN-ACK (unscaled, at most 65535).
    pub fn syn_window(&self) -> u64 {
        self.rcv_wnd.min(65_535)
    }
    /// The window last advertised (`rcv_wnd`).
    pub fn rcv_wnd(&self) -> u64 {
        self.rcv_wnd
    }
    /// The window now promised beyond `rcv_nxt` (`tcp_receive_window`).
    pub fn current_window(&self, rcv_nxt: u64) -> u64 {
        (self.rcv_wup + self.rcv_wnd).saturating_sub(rcv_nxt)
    }
    /// `sk_rcvbuf`, `window_clamp`, `rcv_ssthresh`, `rcvq_space.space`,
    /// `scaling_ratio` and the receiver's RTT estimate (µs × 8).
    pub fn state(&self) -> (u64, u64, u64, u64, u64, u64) {
        (
            self.rcvbuf,
            self.window_clamp,
            self.rcv_ssthresh,
            self.space,
            self.scaling_ratio,
            self.rtt_us8,
        )
    }

    /// `tcp_init_buffer_space`, when the first data segment (carrying the
    /// handshake's ACK) arrives at `now`.
    fn init_buffer_space(&mut self, now: Time) {
        let maxwin = self.win_from_space(self.rcvbuf);
        self.window_clamp = self.window_clamp.min(maxwin);
        if self.window_clamp > 2 * self.advmss && self.window_clamp + self.advmss > maxwin {
            self.window_clamp = (2 * self.advmss).max(maxwin.saturating_sub(self.advmss));
        }
        self.rcv_ssthresh = self.rcv_ssthresh.min(self.window_clamp);
        self.space = self
            .rcv_ssthresh
            .min(self.rcv_wnd)
            .min(INIT_CWND * self.advmss);
        self.space_time = Some(now);
    }

    /// `tcp_rcv_rtt_update`: `sample` in µs; `win_dep`: a window measure.
    fn rtt_update(&mut self, sample: u64, win_dep: bool) {
        let m = sample << 3;
        if self.rtt_us8 == 0 || m < self.rtt_us8 {
            self.rtt_us8 = m;
        } else if !win_dep {
            self.rtt_us8 = self.rtt_us8 - (self.rtt_us8 >> 3) + sample;
        }
    }

    /// A data segment of `len` bytes arrived at `now` echoing `tsecr`
    /// (`tcp_rcv_rtt_measure_ts`; before the segment is queued).
    pub fn on_segment(&mut self, now: Time, len: u64, tsecr: Option<Time>) {
        let Some(ecr) = tsecr else { return };
        if self.last_tsecr == Some(ecr) {
            return;
        }
        self.last_tsecr = Some(ecr);
        if len >= self.rcv_mss {
            let ms = |t: Time| t.0 / 1_000_000;
            let delta = ms(now).saturating_sub(ms(ecr)).max(1);
            self.rtt_update(delta * 1000, false);
        }
    }

    /// In-order data of `len` bytes arrived at `now`, `rcv_nxt` is now
    /// `rcv_nxt` (`tcp_event_data_recv`); `held`: out-of-order bytes.
    /// Returns whether `tcp_grow_window` asks for a quick ACK.
    pub fn on_in_order(&mut self, now: Time, len: u64, rcv_nxt: u64, held: u64) -> bool {
        if self.space_time.is_none() {
            self.init_buffer_space(now);
        }
        self.measure_rcv_mss(len);
        self.rtt_measure_window(now, rcv_nxt);
        len >= 128 && self.grow_window(len, held)
    }

    /// An out-of-order segment of `len` bytes is held, the highest held byte
    /// ends `span` beyond `rcv_nxt` (`tcp_data_queue_ofo`). Returns whether
    /// `tcp_grow_window` asks for a quick ACK.
    pub fn on_out_of_order(&mut self, len: u64, span: u64, held: u64) -> bool {
        self.rcvbuf_grow(span);
        self.grow_window(len, held)
    }

    /// `tcp_measure_rcv_mss`'s update of `scaling_ratio` and `rcv_mss`.
    fn measure_rcv_mss(&mut self, len: u64) {
        if len < self.rcv_mss {
            return;
        }
        if len != self.rcv_mss {
            let old = self.scaling_ratio;
            self.scaling_ratio = ((len << WIN_SCALE) / TRUESIZE).max(1);
            if old != self.scaling_ratio {
                self.set_window_clamp(self.win_from_space(self.rcvbuf));
                self.space = self.space.min(self.window_clamp);
            }
        }
        self.rcv_mss = len.min(self.advmss);
    }

    /// `tcp_set_window_clamp`.
    fn set_window_clamp(&mut self, val: u64) {
        let new = val.max(MIN_CLAMP);
        if new < self.window_clamp {
            self.rcv_ssthresh = self.rcv_ssthresh.min(new);
        } else {
            self.rcv_ssthresh = self.rcv_ssthresh.max(self.rcv_wnd.min(new));
        }
        self.window_clamp = new;
    }

    /// `tcp_rcv_rtt_measure`: one sample per window of data.
    fn rtt_measure_window(&mut self, now: Time, rcv_nxt: u64) {
        if let Some(start) = self.rtt_time {
            if rcv_nxt < self.rtt_seq {
                return;
            }
            let us = ((now - start).0 / 1000).max(1);
            self.rtt_update(us, true);
        }
        self.rtt_seq = rcv_nxt + self.rcv_wnd;
        self.rtt_time = Some(now);
    }

    /// `tcp_grow_window` for a segment of `len` bytes.
    fn grow_window(&mut self, len: u64, held: u64) -> bool {
        let limit = self.window_clamp.min(self.free_space(held));
        if limit <= self.rcv_ssthresh {
            return false;
        }
        let incr = if self.win_from_space(TRUESIZE) <= len {
            2 * self.advmss
        } else {
            self.grow_window_small(len)
        };
        if incr == 0 {
            return false;
        }
        self.rcv_ssthresh += (limit - self.rcv_ssthresh).min(incr.max(2 * len));
        true
    }

    /// `__tcp_grow_window`: a segment whose truesize outweighs its payload
    /// grows the window only while rcv_ssthresh is small enough.
    fn grow_window_small(&self, len: u64) -> u64 {
        let mut truesize = self.win_from_space(TRUESIZE) >> 1;
        let mut window = self.win_from_space(self.cap) >> 1;
        while self.rcv_ssthresh <= window {
            if truesize <= len {
                return 2 * self.rcv_mss;
            }
            truesize >>= 1;
            window >>= 1;
        }
        0
    }

    /// `tcp_rcvbuf_grow`: the buffer for twice the last measure plus the
    /// out-of-order `span`.
    fn rcvbuf_grow(&mut self, span: u64) {
        let rcvwin = (self.space << 1) + span;
        let rcvbuf = self.space_from_win(rcvwin).min(self.cap);
        if rcvbuf > self.rcvbuf {
            self.rcvbuf = rcvbuf;
            self.window_clamp = self.win_from_space(rcvbuf);
        }
    }

    /// `tcp_rcv_space_adjust` after the application read up to `copied`
    /// (= `rcv_nxt`: it reads at once) at `now`; `span`: the out-of-order
    /// span beyond it.
    pub fn on_read(&mut self, now: Time, copied: u64, span: u64) {
        let Some(start) = self.space_time else { return };
        let rtt = Duration((self.rtt_us8 >> 3) * 1000);
        if self.rtt_us8 == 0 || now - start < rtt {
            return;
        }
        let bytes = copied - self.space_seq;
        if bytes > self.space {
            self.space = bytes;
            self.rcvbuf_grow(span);
        }
        self.space_seq = copied;
        self.space_time = Some(now);
    }

    /// `tcp_select_window`: the window to advertise with an ACK now, at
    /// `rcv_nxt` with `held` out-of-order bytes. Returns the window and
    /// whether quick-ACK mode ends (`icsk_ack.quick = 0`: the free space
    /// is under half the full space).
    pub fn select_window(&mut self, rcv_nxt: u64, held: u64) -> (u64, bool) {
        let unit = 1u64 << self.wscale;
        let allowed = self.win_from_space(self.rcvbuf);
        let full = self.window_clamp.min(allowed);
        let mss = self.rcv_mss.min(full);
        let mut free = self.free_space(held);
        let mut quick_off = false;
        let mut window = None;
        if free < full >> 1 {
            quick_off = true;
            free -= free % unit;
            if free < allowed >> 4 || free < mss {
                window = Some(0);
            }
        }
        let window = window.unwrap_or_else(|| free.min(self.rcv_ssthresh).div_ceil(unit) * unit);
        let cur = self.current_window(rcv_nxt);
        let window = if window < cur {
            cur.div_ceil(unit) * unit
        } else {
            window
        };
        let window = window.min(65_535 << self.wscale);
        self.rcv_wnd = window;
        self.rcv_wup = rcv_nxt;
        (window, quick_off)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    /// Linux's defaults here: tcp_rmem[1] = 131072, tcp_rmem[2] = 32 MiB,
    /// advmss 1448 (1460 less the timestamp option).
    fn linux() -> RcvAutotune {
        RcvAutotune::new(131_072, 33_554_432, 1448)
    }

    #[test]
    fn first_window_and_window_scale() {
        // 131072 * 128 / 256 = 65536, rounded down to 45 * 1448 = 65160;
        // the scale expresses max(65160, 32 MiB, 212992) = 2^25: 25 - 15 = 10.
        let mut a = linux();
        assert_eq!(a.syn_window(), 65_160);
        // The first ACK's window, min(free 65536, rcv_ssthresh 65160),
        // aligned up to 2^10: 64 * 1024 = 65536.
        assert_eq!(a.select_window(0, 0), (65_536, false));
        // tcp_rmem[2] = 131072: max(65160, 131072, 212992) < 2^18: scale 2,
        // and 65160 is a multiple of 4.
        let mut small = RcvAutotune::new(131_072, 131_072, 1448);
        assert_eq!(small.select_window(0, 0), (65_160, false));
    }

    #[test]
    fn the_first_full_segment_sets_the_ratio_and_the_clamp() {
        // tcp_init_buffer_space: window_clamp = 65536 - 1448 = 64088,
        // rcv_ssthresh = min(65160, 64088), space = min(64088, 65160,
        // 10 * 1448) = 14480. The segment: ratio = 1448 * 256 / 2304 =
        // 160 (160.9), window_clamp = 131072 * 160 / 256 = 81920,
        // rcv_ssthresh = max(64088, min(65160, 81920)) = 65160, then
        // tcp_grow_window: 1440 <= 1448, so + 2 * 1448 = 68056.
        let mut a = linux();
        assert!(a.on_in_order(Time(5 * MS), 1448, 1448, 0));
        assert_eq!(a.state(), (131_072, 81_920, 68_056, 14_480, 160, 0));
        // min(free 81920, 68056) aligned up to 1024: 67 * 1024 = 68608.
        assert_eq!(a.select_window(1448, 0), (68_608, false));
    }

    /// 30 segments at 5 ms and one at 10 ms, each read at once; the
    /// segments echo a timestamp of 1 ms: receiver RTT 4 ms.
    fn thirty_one_segments(a: &mut RcvAutotune) {
        for k in 0..31 {
            let at = Time(if k < 30 { 5 * MS } else { 10 * MS });
            a.on_segment(at, 1448, Some(Time(MS)));
            a.on_in_order(at, 1448, (k + 1) * 1448, 0);
            a.on_read(at, (k + 1) * 1448, 0);
        }
    }

    #[test]
    fn one_rtt_of_reads_grows_the_buffer_to_twice_its_bytes() {
        // RTT: 5 ms - 1 ms = 4 ms -> 4000 us, stored x 8 = 32000. Reads at
        // 5 ms are 0 ms after the measure began; at 10 ms, 5 ms >= 4 ms:
        // 31 * 1448 = 44888 bytes > 14480, so space = 44888 and the buffer
        // (2 * 44888) * 256 / 160 = 143641, the clamp 143641 * 160 / 256 =
        // 89775. rcv_ssthresh stopped at the old clamp, 81920 (65160 +
        // 6 steps of 2896, the sixth cut to 81920).
        let mut a = linux();
        thirty_one_segments(&mut a);
        assert_eq!(a.state(), (143_641, 89_775, 81_920, 44_888, 160, 32_000));
        // The next segment raises rcv_ssthresh by 2896 (now below the clamp).
        a.on_segment(Time(11 * MS), 1448, Some(Time(2 * MS)));
        assert!(a.on_in_order(Time(11 * MS), 1448, 32 * 1448, 0));
        assert_eq!(a.state().2, 84_816);
        // A second echo 9 ms old: 32000 - 4000 + 9000 = 37000.
        assert_eq!(a.state().5, 37_000);
    }

    #[test]
    fn tcp_rmem_max_caps_the_buffer() {
        // With tcp_rmem[2] = 131072 (the kernel run that lost nothing) the
        // buffer stays at 131072 and the window at 81920 (56.6 segments).
        let mut a = RcvAutotune::new(131_072, 131_072, 1448);
        thirty_one_segments(&mut a);
        assert_eq!(a.state(), (131_072, 81_920, 81_920, 44_888, 160, 32_000));
        assert!(!a.on_in_order(Time(11 * MS), 1448, 32 * 1448, 0));
    }

    #[test]
    fn a_full_buffer_does_not_shrink_the_promised_window() {
        // After the first segment the window is 68608 from 1448. With 40
        // segments held out of order, free = 81920 - 40 * 1440 = 24320 <
        // 81920 / 2: quick-ACK mode ends, free rounds down to 23552, but the
        // window promised (1448 + 68608 - 1448) stays.
        let mut a = linux();
        a.on_in_order(Time(5 * MS), 1448, 1448, 0);
        a.select_window(1448, 0);
        assert_eq!(a.select_window(1448, 40 * 1448), (68_608, true));
        // Out-of-order data grows the buffer for its span: 2 * 14480 +
        // 90000 = 118960 -> 118960 * 256 / 160 = 190336.
        assert!(!a.on_out_of_order(1448, 90_000, 40 * 1448));
        assert_eq!(a.state().0, 190_336);
    }
}
