//! Sack1's rules, each with values derived by hand from the ns-2.35
//! function named (tcp-sack1.cc, scoreboard-rq.cc, rq.cc). Packets are
//! numbered from 0 (ns-2's number less one, its 0 being the pseudo-SYN).

use super::*;
use crate::engine::Duration;
use crate::tcp::behaviour::StackBehaviour;
use crate::tcp::recovery::test_support::{conn, sent, MSS, T};
use crate::tcp::RttEstimator;

/// SACK blocks of packets, in bytes.
fn b(blocks: &[(u64, u64)]) -> Vec<(u64, u64)> {
    blocks.iter().map(|&(l, r)| (l * MSS, r * MSS)).collect()
}

/// Packets [0, 10) out, cwnd 10, ns2 behaviour.
fn ten_out() -> (Conn, Sack1Ns2, Vec<Packet>) {
    let mut c = conn(10, 10);
    c.b = StackBehaviour::NS2;
    (c, Sack1Ns2::default(), vec![])
}

/// A duplicate ACK of packet `ack` carrying `blocks`, as the sender sees
/// it: recorded by the recovery, then counted if it changed the scoreboard.
fn dup(c: &mut Conn, s: &mut Sack1Ns2, blocks: &[(u64, u64)]) -> bool {
    s.on_ack_arrival(c, T, c.snd_una, &b(blocks), T);
    let counts = s.counts_dupack();
    if counts {
        c.dupacks += 1;
        c.ca_state = CaState::Disorder;
    }
    counts
}

#[test]
fn scoreboard_merges_runs_and_offers_each_hole_below_the_highest_run_once() {
    // UpdateScoreBoard(0, [3,4) [6,8)): two runs, 3 packets new, changed_.
    let mut sb = RqScoreBoard::default();
    assert_eq!(sb.update(1, &[(3, 4), (6, 8)]), 3);
    assert!(sb.changed);
    // The same blocks again: total unchanged, sack_min already 1: no change
    // (CheckUpdate false).
    assert_eq!(sb.update(1, &[(3, 4), (6, 8)]), 0);
    assert!(!sb.changed);
    // GetNextRetran from h_seqno_ = sack_min = 1: nexthole(1) meets run
    // [3,4) starting above 1, so 1 is a hole; MarkRetran(1) → h_seqno_ 2;
    // then 2; then 3 lies in [3,4] (nexthole's right edge is inclusive) with
    // a run above: its end 4; then 5 (below [6,8)); then 6 lies in the
    // highest run: none (fcnt −1).
    let mut offered = vec![];
    while let Some(seq) = sb.next_retran() {
        offered.push(seq);
        sb.mark_retran(seq);
    }
    assert_eq!(offered, vec![1, 2, 4, 5]);
    // Without MarkRetran the same hole is offered again (h_seqno_ = seq).
    let mut sb2 = RqScoreBoard::default();
    sb2.update(0, &[(2, 3)]);
    assert_eq!((sb2.next_retran(), sb2.next_retran()), (Some(0), Some(0)));
    // ReassemblyQueue::add joins a touching block: [8,9) onto [6,8).
    sb.update(1, &[(8, 9)]);
    assert_eq!(sb.runs, vec![(3, 4), (6, 9)]);
    // A cumulative ACK to 5 (first unacknowledged 5): cleartonxt drops
    // [3,4) and counts as a change although no block is new.
    assert_eq!(sb.update(5, &[]), 0);
    assert!(sb.changed);
    assert_eq!(sb.runs, vec![(6, 9)]);
    // ClearScoreBoard: no runs, h_seqno_ −1, nothing to resend.
    sb.clear();
    assert_eq!(
        (sb.runs.len(), sb.h_seqno, sb.next_retran()),
        (0, None, None)
    );
}

#[test]
fn only_a_duplicate_that_changes_the_scoreboard_counts() {
    let (mut c, mut s, _) = ten_out();
    // Sack1TcpAgent::recv: `if (scb_->CheckUpdate()) ++dupacks_`. Packet 0
    // lost; 1 and 2 arrive: blocks [1,2) then [1,3), both new.
    assert!(dup(&mut c, &mut s, &[(1, 2)]));
    assert!(dup(&mut c, &mut s, &[(1, 3)]));
    // A duplicate repeating [1,3) (e.g. for a duplicated packet) changes
    // nothing and does not count.
    assert!(!dup(&mut c, &mut s, &[(1, 3)]));
    assert_eq!(c.dupacks, 2);
    // A new ACK outside recovery (recv's normal branch) clears the
    // scoreboard: nothing is offered for resending afterwards.
    s.on_ack_arrival(&c, T, 3 * MSS, &[], T);
    assert_eq!((s.sb.runs.len(), s.sb.next_retran()), (0, None));
}

#[test]
fn recovery_counts_pipe_and_resends_holes_in_order() {
    let (mut c, mut s, mut out) = ten_out();
    // Packets 0 and 4 lost of 0..9. Duplicates from 1, 2, 3.
    for top in 2..=4 {
        assert!(dup(&mut c, &mut s, &[(1, top)]));
    }
    s.enter(&mut c, T, 0, &mut out);
    // dupack_action: pipe_ = maxseq_ − highest_ack_ − numdupacks_ = 10 − 3
    // = 7 (ns-2: maxseq_ 10, highest_ack_ 0 with the SYN as 0); ssthresh =
    // cwnd = 10/2 = 5 packets; head resent outside pipe_; timer restarted,
    // nothing timed.
    assert_eq!(s.pipe, 7);
    assert_eq!((c.w.cwnd, c.w.ssthresh), (5 * MSS, 5 * MSS));
    assert_eq!(c.recover, Some(10 * MSS));
    assert_eq!(sent(&mut out), vec![0]);
    assert_eq!(c.timer, Some(T + c.rtt.rto()));
    assert_eq!(c.timed, None);
    assert_eq!(s.bytes_in_flight(&c), 7 * MSS);
    c.ca_state = CaState::Recovery;
    s.send(&mut c, T, &mut out);
    assert!(out.is_empty(), "pipe_ 7 ≥ cwnd_ 5");
    // Packets 5 and 6 arrive: each ACK --pipe_: 6, 5; still none sent.
    for top in [6, 7] {
        s.on_ack_arrival(&c, T, 0, &b(&[(5, top), (1, 4)]), T);
        s.on_dupack(&mut c, 0);
        s.send(&mut c, T, &mut out);
    }
    assert_eq!(s.pipe, 5);
    assert!(out.is_empty());
    // Packet 7: pipe_ 4 < 5. GetNextRetran from h_seqno_ 1 (MarkRetran(0)
    // at entry): 1 lies in [1,4] with [5,8) above, so the hole 4; pipe_ 5.
    s.on_ack_arrival(&c, T, 0, &b(&[(5, 8), (1, 4)]), T);
    s.send(&mut c, T, &mut out);
    assert_eq!(sent(&mut out), vec![4]);
    assert_eq!(s.pipe, 5);
    // Packet 8: pipe_ 4; h_seqno_ 5 lies in the highest run [5,9): no hole,
    // so a new packet (10), within highest_ack_ + wnd_; pipe_ 5.
    s.on_ack_arrival(&c, T, 0, &b(&[(5, 9), (1, 4)]), T);
    s.send(&mut c, T, &mut out);
    assert_eq!(sent(&mut out), vec![10]);
    // The resent 0 arrives: a partial ACK of 4 (1..3 were held). pipe_ −1
    // for the ACK, −1 for a partial ACK (partial_ack_ false): 3. The
    // scoreboard drops [1,4) below the ACK.
    s.on_ack_arrival(&c, T, 4 * MSS, &b(&[(5, 9)]), T);
    assert_eq!(s.pipe, 3);
    assert_eq!(s.sb.runs, vec![(5, 9)]);
    c.snd_una = 4 * MSS;
    assert!(!s.is_full_ack(&c, 4 * MSS));
    // pipe_ 3 < 5: no hole above h_seqno_ 5, so new packets 11 and 12.
    assert!(!s.on_partial_ack(&mut c, T, &partial(), &mut out));
    s.send(&mut c, T, &mut out);
    assert_eq!(sent(&mut out), vec![11, 12]);
    assert_eq!(s.pipe, 5);
    // recv: an ACK at or above recover_ ends recovery; ClearScoreBoard.
    assert!(s.is_full_ack(&c, 10 * MSS));
    s.on_exit();
    assert_eq!((s.sb.runs.len(), s.sb.h_seqno), (0, None));
}

fn partial() -> NewAck {
    NewAck {
        newly: 4 * MSS,
        delivered: 4 * MSS,
        newly_sacked: 0,
        segments: 4,
    }
}

#[test]
fn a_partial_ack_rearms_with_the_backoff_then_ends_it() {
    let (mut c, mut s, mut out) = ten_out();
    // ns-2's timer, rtxcur_init_ 3 s, backed off once: 6 s.
    c.rtt = RttEstimator::new(
        Duration::from_secs(3),
        Duration::from_millis(200),
        Duration::from_secs(60),
        Duration::from_millis(10),
    )
    .ns2_ticks();
    c.rtt.back_off();
    assert_eq!(c.rtt.rto(), Duration::from_secs(6));
    for top in 2..=4 {
        dup(&mut c, &mut s, &[(1, top)]);
    }
    s.enter(&mut c, T, 0, &mut out);
    c.ca_state = CaState::Recovery;
    // Sack1TcpAgent::recv, partial ACK: newtimer (6 s, the backoff still
    // 2), then t_backoff_ = 1: the next timer is 3 s. The sender is told
    // not to restart the timer again.
    let now = T + Duration::from_secs(1);
    s.on_ack_arrival(&c, now, 4 * MSS, &[], T);
    c.snd_una = 4 * MSS;
    assert!(!s.on_partial_ack(&mut c, now, &partial(), &mut out));
    assert_eq!(c.timer, Some(now + Duration::from_secs(6)));
    assert_eq!(c.rtt.rto(), Duration::from_secs(3));
}

#[test]
fn a_timeout_clears_the_scoreboard_and_ignores_duplicates_until_a_new_ack() {
    let (mut c, mut s, mut out) = ten_out();
    assert!(dup(&mut c, &mut s, &[(1, 2)]));
    assert!(dup(&mut c, &mut s, &[(1, 3)]));
    // The sender's timeout: Loss, cwnd 2 (to show the resends); then
    // Sack1TcpAgent::timeout: dupacks_ 0, ClearScoreBoard, timeout_, go
    // back N (the sender's `on_rto` zeroes the count before). ns-2
    // resends the SACKed 1 too (RFC 6675's SACK would skip it).
    c.ca_state = CaState::Loss;
    c.w.cwnd = 2 * MSS;
    c.dupacks = 0;
    s.on_timeout(&mut c, T);
    s.send(&mut c, T, &mut out);
    assert_eq!(sent(&mut out), vec![0, 1]);
    // With timeout_ set, a duplicate does not touch the scoreboard.
    assert!(!dup(&mut c, &mut s, &[(1, 3)]));
    assert!(s.sb.runs.is_empty());
    // A new ACK ends timeout_; the next duplicate counts again.
    s.on_ack_arrival(&c, T, MSS, &[], T);
    c.snd_una = MSS;
    assert!(dup(&mut c, &mut s, &[(2, 3)]));
}

#[test]
fn an_old_ack_in_recovery_only_lowers_pipe() {
    let (mut c, mut s, mut out) = ten_out();
    for top in 2..=4 {
        dup(&mut c, &mut s, &[(1, top)]);
    }
    s.enter(&mut c, T, 0, &mut out);
    c.ca_state = CaState::Recovery;
    c.snd_una = 2 * MSS;
    // recv in fast recovery: `--pipe_` before any test of the ACK; one
    // below highest_ack_ does nothing else (7 → 6, runs unchanged).
    s.on_ack_arrival(&c, T, MSS, &b(&[(5, 6)]), T);
    assert_eq!(s.pipe, 6);
    assert_eq!(s.sb.runs, vec![(1, 4)]);
}

#[test]
fn a_block_beyond_what_was_sent_offers_nothing_unsent() {
    // Not an ns-2 rule but a guard: a SACK block past snd_max (packet 10)
    // is cut there, so GetNextRetran never offers an unsent packet. [12,14)
    // becomes empty; [8,12) becomes [8,10), with holes 0..7 below it.
    let (c, mut s, _) = ten_out();
    s.on_ack_arrival(&c, T, 0, &b(&[(12, 14), (8, 12)]), T);
    assert_eq!(s.sb.runs, vec![(8, 10)]);
    assert_eq!(s.sb.next_retran(), Some(0));
}
