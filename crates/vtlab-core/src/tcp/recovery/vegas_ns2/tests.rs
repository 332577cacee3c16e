//! ns-2 Vegas's loss handling, values derived by hand from
//! `VegasTcpAgent::recv`, `timeout` and `vegas_expire` (tcp-vegas.cc).
//! Packets numbered from 0 (ns-2's number less one).

use super::*;
use crate::engine::Duration;
use crate::tcp::behaviour::StackBehaviour;
use crate::tcp::recovery::test_support::{conn, sent, MSS, T};

fn ms(x: u64) -> Time {
    T + Duration::from_millis(x)
}

/// cwnd 10, packets 0..9 sent at T through the recovery, the handshake's
/// round trip 100 ms in the estimator.
fn ten_sent() -> (Conn, VegasNs2Recovery, Vec<Packet>) {
    let mut c = conn(0, 10);
    c.b = StackBehaviour::NS2;
    c.rtt.sample(Duration::from_millis(100));
    let mut s = VegasNs2Recovery::default();
    let mut out = vec![];
    s.send(&mut c, T, &mut out);
    assert_eq!(sent(&mut out), (0..10).collect::<Vec<_>>());
    (c, s, out)
}

/// A duplicate ACK as the sender handles it under this recovery (`enter`
/// from the threshold on, or earlier if the head expired).
fn dup(c: &mut Conn, s: &mut VegasNs2Recovery, now: Time, out: &mut Vec<Packet>) {
    s.on_ack_arrival(c, now, c.snd_una, &[], now);
    c.dupacks += 1;
    if c.dupacks >= c.cfg.dupack_threshold || s.head_lost() {
        s.enter(c, now, 0, out);
    }
    s.send(c, now, out);
}

/// A new ACK of everything below packet `upto` (the controller's window
/// rules left out).
fn new_ack(c: &mut Conn, s: &mut VegasNs2Recovery, now: Time, upto: u64, out: &mut Vec<Packet>) {
    s.on_ack_arrival(c, now, upto * MSS, &[], now);
    s.on_new_ack_outside_recovery(c);
    c.dupacks = 0;
    c.snd_una = upto * MSS;
    c.snd_nxt = c.snd_nxt.max(c.snd_una);
    s.send(c, now, out);
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn fine_grained_timeout_starts_from_the_syn_and_follows_samples() {
    let (mut c, mut s, mut out) = ten_sent();
    new_ack(&mut c, &mut s, ms(100), 1, &mut out);
    // firstrecv_ = 0.1 s: v_sa_ 0.8, v_sd_ 0.1. Packet 0's sample 0.1 s:
    // n = 0.1 − 0.8/8 = 0, v_sa_ 0.8; v_sd_ += |0| − 0.1/4 → 0.075;
    // v_timeout_ = (0.8/4 + 0.075)/2 = 0.1375, + 1/16 → 0.14609375.
    let (sa, sd, t) = s.fine.unwrap();
    assert!(close(sa, 0.8) && close(sd, 0.075) && close(t, 0.146_093_75));
}

#[test]
fn an_expired_head_is_resent_on_the_first_duplicate_and_the_window_cut_a_quarter() {
    let (mut c, mut s, mut out) = ten_sent();
    new_ack(&mut c, &mut s, ms(100), 1, &mut out);
    assert_eq!(sent(&mut out), vec![10]);
    // Nothing is sent on a first or second duplicate unless it expires:
    // at 200 ms packet 1 has been out 0.2 s ≥ v_timeout_ 0.146 s.
    let rto = c.rtt.rto();
    dup(&mut c, &mut s, ms(200), &mut out);
    // window() 10 > 3, sent once: v_newcwnd_ = 10 − 10>>2 = 8, cwnd_ =
    // 8 + dupacks_ 1 = 9; dupacks_ = numdupacks_ 3; v_worried_ 2;
    // v_timeout_ += 1/8; ssthresh_ untouched; the coarse timer backed off
    // and restarted (reset_rtx_timer(1)).
    assert_eq!(sent(&mut out), vec![1]);
    assert_eq!(
        (c.w.cwnd, c.dupacks, s.newcwnd, s.worried),
        (9 * MSS, 3, 8, 2)
    );
    assert_eq!(c.w.ssthresh, u64::MAX);
    assert!(close(s.fine.unwrap().2, 0.146_093_75 * 1.125));
    assert_eq!(c.timer, Some(ms(200) + Duration(2 * rto.as_nanos())));
    // The next duplicates: not expired (1 just resent), dupacks_ 4, 5 > 3:
    // cwnd_ + 1 each, 10 then 11; with 10 out, packet 11 goes at the second.
    dup(&mut c, &mut s, ms(210), &mut out);
    assert_eq!((c.w.cwnd, sent(&mut out)), (10 * MSS, vec![]));
    dup(&mut c, &mut s, ms(220), &mut out);
    assert_eq!((c.w.cwnd, sent(&mut out)), (11 * MSS, vec![11]));
    // A new ACK after more than 3 duplicates: cwnd_ = v_newcwnd_ 8,
    // ssthresh_ 2.
    new_ack(&mut c, &mut s, ms(300), 10, &mut out);
    assert_eq!((c.w.cwnd, c.w.ssthresh), (8 * MSS, 2 * MSS));
}

#[test]
fn worried_acks_resend_and_a_resent_loss_halves_once_per_change() {
    let (mut c, mut s, mut out) = ten_sent();
    new_ack(&mut c, &mut s, ms(100), 1, &mut out);
    assert_eq!(sent(&mut out), vec![10]);
    dup(&mut c, &mut s, ms(250), &mut out);
    assert_eq!(sent(&mut out), vec![1]);
    // The resent 1 is ACKed at 400 ms, 2 lost too. v_worried_ 2 → 1:
    // packet 2, out 0.4 s ≥ v_timeout_ 0.164 s, goes at once (dupacks_ =
    // 3), no cut; dupacks_ was 3, not > 3: cwnd_ stays 9, with 9 out.
    new_ack(&mut c, &mut s, ms(400), 2, &mut out);
    assert_eq!(sent(&mut out), vec![2]);
    assert_eq!((c.w.cwnd, c.dupacks), (9 * MSS, 3));
    // A duplicate at 600 ms: 2 (resent at 400 ms, after t_cwnd_changed_ =
    // 250 ms) expired: resent again, window() 9 halved (transmits 2) to 4,
    // cwnd_ = 4 + dupacks_ 4 = 8; v_timeout_ doubles; dupacks_ stays 4.
    let before = s.fine.unwrap().2;
    dup(&mut c, &mut s, ms(600), &mut out);
    assert_eq!(sent(&mut out), vec![2]);
    assert_eq!((s.newcwnd, c.w.cwnd, c.dupacks), (4, 8 * MSS, 4));
    assert!(close(s.fine.unwrap().2, 2.0 * before));
    // Expired again 0.4 s later: resent, but t_cwnd_changed_ (600 ms) is
    // not before its send time (600 ms): no cut, cwnd_ 8 with dupacks_ 5.
    dup(&mut c, &mut s, ms(1000), &mut out);
    assert_eq!(sent(&mut out), vec![2]);
    assert_eq!(c.w.cwnd, 8 * MSS);
}

#[test]
fn after_a_timeout_no_fast_retransmit_until_the_acks_pass_recover() {
    let mut c = conn(20, 10);
    c.b = StackBehaviour::NS2;
    let mut s = VegasNs2Recovery::default();
    let mut out = vec![];
    // The sender's timeout: recover = snd_max (20), then
    // VegasTcpAgent::timeout: last_cwnd_action_ TIMEOUT, go back N.
    c.recover = Some(20 * MSS);
    s.on_timeout(&mut c, T);
    assert_eq!(c.snd_nxt, 0);
    c.snd_una = 15 * MSS;
    c.snd_nxt = 20 * MSS;
    c.dupacks = 3;
    s.enter(&mut c, T, 0, &mut out);
    assert!(out.is_empty(), "highest_ack_ 15 ≤ recover_ 20");
    c.snd_una = 21 * MSS;
    c.snd_max = 25 * MSS;
    c.snd_nxt = 25 * MSS;
    s.enter(&mut c, T, 0, &mut out);
    assert_eq!(sent(&mut out), vec![21]);
    // No send record of 21: its send time reads −1 in ns-2, before
    // t_cwnd_changed_, so no cut; transmits 0, dupacks_ left at 3.
    assert_eq!((c.w.cwnd, c.dupacks), (10 * MSS, 3));
}

#[test]
fn nothing_goes_on_the_first_two_duplicates() {
    let (mut c, mut s, mut out) = ten_sent();
    c.w.cwnd = 20 * MSS;
    new_ack(&mut c, &mut s, ms(100), 1, &mut out);
    assert_eq!(sent(&mut out), (10..21).collect::<Vec<_>>());
    // send_much only when dupacks_ is 0 or ≥ 3 (no limited transmit):
    // cwnd raised to 25 leaves room for 5, yet nothing is sent.
    c.w.cwnd = 25 * MSS;
    dup(&mut c, &mut s, ms(110), &mut out);
    dup(&mut c, &mut s, ms(120), &mut out);
    assert!(out.is_empty());
}

#[test]
fn the_duplicate_count_is_numdupacks() {
    let (mut c, mut s, mut out) = ten_sent();
    new_ack(&mut c, &mut s, ms(100), 1, &mut out);
    assert_eq!(sent(&mut out), vec![10]);
    // numdupacks_ 5 (the study's DupAck axis): duplicates 1–4, none
    // expired (packet 1 under 0.146 s old), send nothing; the fifth
    // retransmits: v_newcwnd_ 8, cwnd_ = 8 + 5 = 13, dupacks_ = 5, so
    // send_much runs: 10 out of 13, packets 11–13.
    c.cfg.dupack_threshold = 5;
    for t in 101..=104 {
        dup(&mut c, &mut s, ms(t), &mut out);
        assert!(out.is_empty());
    }
    dup(&mut c, &mut s, ms(105), &mut out);
    assert_eq!(sent(&mut out), vec![1, 11, 12, 13]);
    assert_eq!((c.w.cwnd, c.dupacks), (13 * MSS, 5));
}
