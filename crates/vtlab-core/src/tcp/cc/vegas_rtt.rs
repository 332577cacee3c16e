//! Vegas-style RTT bookkeeping shared by the delay-based window laws (Vegas,
//! Veno, YeAH): the minimum RTT ever (`baseRTT`), the minimum and number of
//! samples in the current round (`minRTT`, `cntRTT`), the right edge of the
//! round (`beg_snd_nxt`) and the on/off switch (`doing_vegas_now`).
//!
//! Sources: Brakmo & Peterson, "TCP Vegas", IEEE JSAC 13(8), 1995; Linux
//! `tcp_vegas.c` (`tcp_vegas_pkts_acked`, `vegas_enable`, `tcp_vegas_init`);
//! ns-3 `tcp-vegas.cc` / `tcp-yeah.cc` (`PktsAcked`, `EnableVegas`). Restated in
//! docs/congestion-control.md, '`vegas`', '`veno`' and '`yeah`'.
//!
//! Profiles differ in the samples and in the end-of-round test (the switches
//! of [`VegasRttBehaviour`]):
//! * Linux: each raw sample is taken in whole microseconds plus 1 µs ("never
//!   allow a zero RTT"); a round ends on an ACK strictly beyond `beg_snd_nxt`.
//! * ns-3: the sample is the SRTT as handed over (zero ignored), at full
//!   nanosecond resolution; a round ends when the ACK reaches `beg_snd_nxt`
//!   (`m_lastAckedSeq >= m_begSndNxt`).

use super::{ConnInfo, CwndEvent, Profile, ProfileBehaviour};
use crate::engine::Duration;
use crate::tcp::CaState;

/// Where the Vegas RTT bookkeeping follows ns-3 (`tcp-vegas.cc`,
/// `tcp-yeah.cc`) or Linux (`tcp_vegas.c`); see the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VegasRttBehaviour {
    /// Each raw sample is taken in whole microseconds plus 1 µs ("never allow
    /// a zero RTT", Linux `tcp_vegas_pkts_acked`); ns-3 `PktsAcked` takes the
    /// SRTT as handed over, at nanosecond resolution, and ignores zero.
    pub sample_us_plus_one: bool,
    /// A round ends when the ACK reaches `beg_snd_nxt` (ns-3
    /// `m_lastAckedSeq >= m_begSndNxt`); Linux needs one strictly beyond.
    pub round_end_inclusive: bool,
    /// TX_START re-initialises the state, baseRTT forgotten (Linux
    /// `tcp_vegas_cwnd_event` → `tcp_vegas_init`); ns-3 has no such event.
    pub init_on_tx_start: bool,
}

impl ProfileBehaviour for VegasRttBehaviour {
    const NS3: Self = VegasRttBehaviour {
        sample_us_plus_one: false,
        round_end_inclusive: true,
        init_on_tx_start: false,
    };
    const LINUX: Self = VegasRttBehaviour {
        sample_us_plus_one: true,
        round_end_inclusive: false,
        init_on_tx_start: true,
    };
}

#[derive(Clone, Debug)]
pub struct VegasRtt {
    b: VegasRttBehaviour,
    /// Minimum RTT ever seen (None = not yet, Linux 0x7fffffff / ns-3 Time::Max).
    pub base_rtt: Option<Duration>,
    /// Minimum RTT in the current round.
    pub min_rtt: Option<Duration>,
    /// Samples in the current round.
    pub cnt_rtt: u32,
    /// Right edge of the current round (sequence number, bytes).
    pub beg_snd_nxt: u64,
    /// `doing_vegas_now`.
    pub doing: bool,
}

impl VegasRtt {
    /// Fresh state: nothing measured, switched on, round edge at 0 (ns-3's
    /// constructor; Linux re-initialises at TX_START).
    pub fn new(profile: Profile) -> Self {
        VegasRtt {
            b: VegasRttBehaviour::of(profile),
            base_rtt: None,
            min_rtt: None,
            cnt_rtt: 0,
            beg_snd_nxt: 0,
            doing: true,
        }
    }

    /// Feed the RTT handed to `pkts_acked` (None: this ACK gave no sample).
    pub fn sample(&mut self, rtt: Option<Duration>) {
        let Some(r) = rtt else { return };
        let v = if self.b.sample_us_plus_one {
            Duration::from_micros(r.as_nanos() / 1_000 + 1)
        } else if r == Duration::ZERO {
            return;
        } else {
            r
        };
        self.base_rtt = Some(self.base_rtt.map_or(v, |b| b.min(v)));
        self.min_rtt = Some(self.min_rtt.map_or(v, |m| m.min(v)));
        self.cnt_rtt = self.cnt_rtt.saturating_add(1);
    }

    /// `vegas_enable`: start a fresh round at `snd_nxt`.
    pub fn enable(&mut self, snd_nxt: u64) {
        self.doing = true;
        self.next_round(snd_nxt);
    }

    /// `vegas_disable`.
    pub fn disable(&mut self) {
        self.doing = false;
    }

    /// `tcp_vegas_init`: forget baseRTT and enable.
    pub fn init(&mut self, snd_nxt: u64) {
        self.base_rtt = None;
        self.enable(snd_nxt);
    }

    /// `set_state` / `CongestionStateSet`: Open enables, anything else disables.
    /// Linux re-initialises the round on TX_START (`tcp_vegas_cwnd_event`).
    pub fn cwnd_event(&mut self, info: &ConnInfo, event: CwndEvent) {
        if self.b.init_on_tx_start && event == CwndEvent::TxStart {
            self.init(info.snd_nxt);
        }
    }

    pub fn set_state(&mut self, info: &ConnInfo, new: CaState) {
        if new == CaState::Open {
            self.enable(info.snd_nxt);
        } else {
            self.disable();
        }
    }

    /// Has the ACK `ack` closed the round?
    pub fn round_done(&self, ack: u64) -> bool {
        if self.b.round_end_inclusive {
            ack >= self.beg_snd_nxt
        } else {
            ack > self.beg_snd_nxt
        }
    }

    /// New round ending at `snd_nxt`; wipe the per-round minimum and count.
    pub fn next_round(&mut self, snd_nxt: u64) {
        self.beg_snd_nxt = snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt = None;
    }
}

/// Microseconds of a Linux-profile RTT (already +1 µs), 0x7fffffff if unset
/// (the kernel's "infinite" initial value).
pub fn linux_us(d: Option<Duration>) -> u64 {
    d.map_or(0x7fff_ffff, |d| d.as_nanos() / 1_000)
}

/// Seconds of an ns-3-profile RTT as ns-3's `Time::GetSeconds` gives them;
/// an unset minimum is `Time::Max()` (2^63 − 1 ns).
pub fn ns3_secs(d: Option<Duration>) -> f64 {
    d.map_or(i64::MAX as f64 / 1e9, |d| d.as_nanos() as f64 / 1e9)
}

/// The sample to hand over so that the stored value is exactly `us` µs in
/// either profile (Linux adds 1 µs to every sample).
#[cfg(test)]
pub(crate) fn stored_sample(p: Profile, us: u64) -> Option<Duration> {
    Some(match p {
        Profile::Linux => Duration::from_micros(us - 1),
        Profile::Ns3 | Profile::Ns2 => Duration::from_micros(us),
    })
}

#[cfg(test)]
mod tests {
    use super::super::reno::test_support::info;
    use super::*;

    #[test]
    fn linux_samples_are_whole_microseconds_plus_one() {
        let mut r = VegasRtt::new(Profile::Linux);
        // 100.0009 ms -> 100000 µs + 1 = 100001 µs.
        r.sample(Some(Duration::from_nanos(100_000_900)));
        r.sample(None);
        assert_eq!(r.base_rtt, Some(Duration::from_micros(100_001)));
        assert_eq!(r.cnt_rtt, 1);
        assert_eq!(linux_us(r.min_rtt), 100_001);
        assert_eq!(linux_us(None), 0x7fff_ffff);
    }

    #[test]
    fn ns3_samples_ignore_zero_and_keep_nanoseconds() {
        let mut r = VegasRtt::new(Profile::Ns3);
        r.sample(Some(Duration::ZERO));
        assert_eq!(r.cnt_rtt, 0);
        r.sample(Some(Duration::from_nanos(120_000_007)));
        r.sample(Some(Duration::from_millis(130)));
        assert_eq!(r.cnt_rtt, 2);
        assert_eq!(r.min_rtt, Some(Duration::from_nanos(120_000_007)));
        assert!((ns3_secs(r.min_rtt) - 0.120_000_007).abs() < 1e-15);
    }

    #[test]
    fn round_edge_per_profile_and_state_switch() {
        let mut r = VegasRtt::new(Profile::Ns3);
        r.beg_snd_nxt = 10_000;
        assert!(r.round_done(10_000), "ns-3: >=");
        let mut r = VegasRtt::new(Profile::Linux);
        r.beg_snd_nxt = 10_000;
        assert!(!r.round_done(10_000), "Linux: strictly after");
        assert!(r.round_done(10_001));

        let mut i = info(Profile::Linux);
        i.snd_nxt = 42_000;
        r.sample(Some(Duration::from_millis(50)));
        r.set_state(&i, CaState::Recovery);
        assert!(!r.doing);
        r.set_state(&i, CaState::Open);
        assert!(r.doing);
        assert_eq!((r.beg_snd_nxt, r.cnt_rtt, r.min_rtt), (42_000, 0, None));
        assert!(r.base_rtt.is_some(), "enable keeps baseRTT");
        r.init(0);
        assert_eq!(r.base_rtt, None, "init forgets baseRTT");
    }
}
