//! ns-3.44's SACK-less NewReno, rule by rule. Expected values are derived by
//! hand from ns-3.44's `TcpSocketBase` and `TcpTxBuffer` (named per test), in
//! segments of MSS = 1000 B; the sender's part (duplicate-ACK counting, state)
//! is played by the test as `Sender::on_ack` would.

use super::*;
use crate::tcp::recovery::test_support::{conn, sent, MSS, T};
use crate::tcp::state::CaState;

/// `n` segments sent through the recovery at cwnd `n` (so its list holds them).
fn sent_through(n: u64) -> (Conn, RenoSack) {
    let mut c = conn(0, n);
    let mut r = RenoSack::default();
    let mut out = vec![];
    r.send(&mut c, T, &mut out);
    assert_eq!(sent(&mut out), (0..n).collect::<Vec<_>>());
    (c, r)
}

/// A duplicate ACK of the head in Open or Disorder that does not start
/// recovery (`DupAck`, limited-transmit branch).
fn disorder_dupack(c: &mut Conn, r: &mut RenoSack) {
    c.dupacks += 1;
    c.ca_state = CaState::Disorder;
    r.on_ack_arrival(c, T, c.snd_una, &[], T);
    r.on_limited_transmit(c);
}

/// A cumulative ACK of `ack` segments, as the sender applies it.
fn new_ack(c: &mut Conn, r: &mut RenoSack, ack: u64) {
    r.on_ack_arrival(c, T, ack * MSS, &[], T);
    c.snd_una = ack * MSS;
    c.snd_nxt = c.snd_nxt.max(c.snd_una);
}

#[test]
fn r1_r2_dupacks_mark_segments_and_shrink_the_count_in_flight() {
    // 10 segments out, cwnd 10. ns-3 DupAck (Disorder, limitedTx):
    // AddRenoSack marks 1, then 2; BytesInFlight = 10 − 2 = 8, so
    // SendPendingData sends 2 new segments (10, 11): 12 − 2 = 10 in flight.
    let (mut c, mut r) = sent_through(10);
    let mut out = vec![];
    disorder_dupack(&mut c, &mut r);
    disorder_dupack(&mut c, &mut r);
    assert_eq!(r.bytes_in_flight(&c), 8 * MSS);
    r.send(&mut c, T, &mut out);
    assert_eq!(sent(&mut out), vec![10, 11]);
    assert_eq!(r.bytes_in_flight(&c), 10 * MSS);
    // Third duplicate ACK, EnterRecovery: AddRenoSack marks 3, MarkHeadAsLost:
    // 12 − 3 − 1 = 8 in flight; ssthresh = GetSsThresh(8 + 1 segments) =
    // 4 500 B (TcpNewReno: max(2·MSS, in flight / 2)); cwnd = ssthresh
    // (TcpClassicRecovery::EnterRecovery); the head goes out again and counts
    // (retransmitted): 9 segments in flight, nothing more to send.
    c.dupacks += 1;
    r.on_ack_arrival(&c, T, 0, &[], T);
    assert!(!r.head_lost(), "no lost mark yet: recovery by count only");
    r.enter(&mut c, T, 0, &mut out);
    assert_eq!(sent(&mut out), vec![0]);
    assert_eq!((c.w.ssthresh, c.w.cwnd), (4_500, 4_500));
    assert_eq!(c.recover, Some(12 * MSS));
    assert_eq!(r.bytes_in_flight(&c), 9 * MSS);
    // Duplicate ACKs in Recovery mark 4, 5, ... (DupAck → AddRenoSack), cwnd
    // unchanged (TcpClassicRecovery::DoRecovery inflates m_cWndInfl only).
    // After five (4..8): 9 − 5 = 4 in flight, 4 + 1 > 4.5 segments: silent.
    // The sixth (9): 3 in flight, one new segment (12).
    for _ in 0..5 {
        r.on_dupack(&mut c, 0);
    }
    r.send(&mut c, T, &mut out);
    assert!(sent(&mut out).is_empty());
    r.on_dupack(&mut c, 0);
    r.send(&mut c, T, &mut out);
    assert_eq!(sent(&mut out), vec![12]);
    assert_eq!(c.w.cwnd, 4_500);
}

#[test]
fn r3_r4_an_ack_landing_on_a_mark_resends_the_head_in_open() {
    // 10 out, two duplicate ACKs mark 1 and 2 and send 10, 11 (as above).
    let (mut c, mut r) = sent_through(10);
    let mut out = vec![];
    disorder_dupack(&mut c, &mut r);
    disorder_dupack(&mut c, &mut r);
    r.send(&mut c, T, &mut out);
    assert_eq!(sent(&mut out), vec![10, 11]);
    // The reordered segment 0 arrives: ACK of 1. DiscardUpTo(1) removes 0;
    // the new head 1 is marked, so the mark moves (AddRenoSack: the first
    // unmarked after the head is 3) and the head is marked lost. The sender
    // goes back to Open (a new ACK), the marks stay: 1..11 = 11 sent,
    // 2 marked (2, 3), 1 lost: 8 in flight at cwnd 10.
    new_ack(&mut c, &mut r, 1);
    c.ca_state = CaState::Open;
    c.dupacks = 0;
    assert_eq!(r.bytes_in_flight(&c), 8 * MSS);
    // SendPendingData → NextSeg rule 1: the lost head goes out again, in
    // Open, then one new segment: 9, then 10 in flight.
    r.send(&mut c, T, &mut out);
    assert_eq!(sent(&mut out), vec![1, 12]);
    assert_eq!(r.bytes_in_flight(&c), 10 * MSS);
    // A duplicate ACK of 1 now: IsLost(1) — from the head on, the first
    // segment that is lost or marked is the head, lost (a resend keeps
    // m_lost): recovery starts on the first duplicate ACK (DupAck step 2).
    assert!(r.head_lost());
}

#[test]
fn r4_is_lost_needs_a_mark_above_the_head() {
    // IsLost returns false at or above m_highestSack: with no mark at all
    // (a fresh list, or after ResetRenoSack) a lost head does not count.
    let (_c, mut r) = sent_through(4);
    r.mark_head_lost();
    assert!(!r.head_lost());
    // With a mark on 1 (AddRenoSack) it does.
    r.add_reno_sack();
    assert!(r.head_lost());
}

#[test]
fn r5_partial_acks_mark_the_head_lost_and_resend_it() {
    // Recovery entered on 10 out with 3 duplicate ACKs (marks 1, 2, 3 — here
    // without limited transmit: c.cfg.limited_transmit off, so only the
    // entering ACK marks: 1), head 0 resent. ssthresh = GetSsThresh(10 − 1
    // − 1 + 1 = 9 segments) = 4 500 B.
    let (mut c, mut r) = sent_through(10);
    c.cfg.limited_transmit = false;
    let mut out = vec![];
    disorder_dupack(&mut c, &mut r);
    disorder_dupack(&mut c, &mut r);
    c.dupacks += 1;
    r.enter(&mut c, T, 0, &mut out);
    assert_eq!(sent(&mut out), vec![0]);
    assert_eq!(c.w.ssthresh, 4_500);
    // Partial ACK of 3 (segment 3 is the next hole): DiscardUpTo removes 0..2
    // (1 was marked), head 3 unmarked; ProcessAck: MarkHeadAsLost, DoRetransmit
    // → NextSeg: 3. First partial ACK: the timer restarts (NewAck(ack, true)),
    // the second does not.
    new_ack(&mut c, &mut r, 3);
    c.ca_state = CaState::Recovery;
    let a = NewAck {
        newly: 3 * MSS,
        delivered: 3 * MSS,
        newly_sacked: 0,
        segments: 3,
    };
    assert!(r.on_partial_ack(&mut c, T, &a, &mut out));
    assert_eq!(sent(&mut out), vec![3]);
    // 3..9 = 7 sent, head lost and resent: 7 in flight; cwnd still 4 500.
    assert_eq!(r.bytes_in_flight(&c), 7 * MSS);
    assert_eq!(c.w.cwnd, 4_500);
    new_ack(&mut c, &mut r, 5);
    assert!(!r.on_partial_ack(&mut c, T, &a, &mut out));
    assert_eq!(sent(&mut out), vec![5]);
}

#[test]
fn r6_a_timeout_marks_every_segment_lost_and_goes_back_n() {
    // 6 out, two marks (1, 2). ReTxTimeout: ResetRenoSack, SetSentListLost:
    // 6 lost, nothing in flight, no mark, the head not resent.
    let (mut c, mut r) = sent_through(6);
    disorder_dupack(&mut c, &mut r);
    disorder_dupack(&mut c, &mut r);
    r.on_timeout(&mut c, T);
    assert_eq!(r.bytes_in_flight(&c), 0);
    assert!(!r.head_resent(&c) && !r.head_lost());
    // cwnd 1 (the sender sets it): NextSeg gives the head. R7: a second
    // timeout still cuts ssthresh — ReTxTimeout asks IsHeadRetransmitted
    // after SetSentListLost cleared the flag.
    c.w.cwnd = MSS;
    let mut out = vec![];
    r.send(&mut c, T, &mut out);
    assert_eq!(sent(&mut out), vec![0]);
    assert!(!r.head_resent(&c));
    // ACK of 3 (the receiver held 1 and 2), cwnd 2: go-back-N resends 3 and 4,
    // lost since the timeout, though they may have arrived.
    new_ack(&mut c, &mut r, 3);
    c.w.cwnd = 2 * MSS;
    r.send(&mut c, T, &mut out);
    assert_eq!(sent(&mut out), vec![3, 4]);
}

#[test]
fn the_receive_window_bounds_the_count_in_flight() {
    // AvailableWindow = min(rWnd, cWnd) − BytesInFlight: rwnd 4 segments,
    // cwnd 10, 4 out; two marks leave 2 in flight, so 2 more go out.
    let mut c = conn(0, 10);
    c.rwnd = 4 * MSS;
    let mut r = RenoSack::default();
    let mut out = vec![];
    r.send(&mut c, T, &mut out);
    assert_eq!(sent(&mut out), vec![0, 1, 2, 3]);
    disorder_dupack(&mut c, &mut r);
    disorder_dupack(&mut c, &mut r);
    r.send(&mut c, T, &mut out);
    assert_eq!(sent(&mut out), vec![4, 5]);
    assert_eq!(r.bytes_in_flight(&c), 4 * MSS);
}
