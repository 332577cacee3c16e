//! The relay on a made-up clock: timing and losses are the links' own.

use super::relay::{Decision, Fate, Relay};
use super::Path;
use crate::engine::{RngStream, Time};
use crate::net::{LossConf, LossModel};
use crate::spec::{plan, resolve_json};

fn relay(spec: &str, seed: u64) -> Relay {
    let plan = plan(&resolve_json(spec).unwrap()).unwrap();
    let path = Path::of(&plan).unwrap();
    Relay::new(&plan, path, seed, true)
}

/// An Ethernet frame of `len` bytes (an IPv4/UDP header where it fits, for
/// the queue disc's hash).
fn frame(len: usize, tag: u8) -> Vec<u8> {
    let mut f = vec![tag; len];
    f[12..14].copy_from_slice(&[0x08, 0x00]);
    f[14] = 0x45;
    f[23] = 17;
    f
}

#[test]
fn a_frame_takes_each_links_transmission_and_propagation_time() {
    // v2g: wan 500 Mbit/s then plc 10 Mbit/s, 0.9 ms each, 2 B framing. A
    // 1000 B Ethernet frame is a 986 B packet, 988 B on each link:
    // wan 988·8/500e6 = 15 808 ns, plc 988·8/10e6 = 790 400 ns, so it reaches
    // the EVCC at 15 808 + 900 000 + 790 400 + 900 000 = 2 606 208 ns.
    let mut r = relay(r#"{"preset": "v2g"}"#, 1);
    let sent = frame(1000, 7);
    r.offer(Time(0), 0, sent.clone());
    r.advance(Time(2_606_207));
    assert_eq!(r.take_delivered().count(), 0);
    r.advance(Time(2_606_208));
    let got: Vec<_> = r.take_delivered().collect();
    assert_eq!(got, vec![(0, Time(2_606_208), sent)]);
    let times: Vec<u64> = r.take_decisions().map(|d| d.time.0).collect();
    assert_eq!(times, vec![915_808, 2_606_208]);
}

#[test]
fn losses_are_the_simulations_stream_for_the_seed() {
    // Bernoulli 30 % on the cable toward the EVCC. The expected fates come
    // from the loss model driven directly with the simulation's stream label
    // for that direction, not from the relay.
    let spec = r#"{"preset": "v2g", "loss": {"model": "bernoulli", "mean_loss": "30%"}}"#;
    let (seed, n) = (7, 300);
    let mut model = LossModel::new(
        &LossConf::Bernoulli { mean_loss: 0.3 },
        RngStream::for_component(seed, "loss/plc/secc->evcc"),
    );
    let want: Vec<u64> = (0..n).filter(|_| model.drops(Time::ZERO)).collect();
    let mut r = relay(spec, seed);
    // One frame every 5 ms: no queueing, frames keep their order.
    let mut got = Vec::new();
    for k in 0..n {
        let t = Time(k * 5_000_000);
        r.advance(t);
        r.offer(t, 0, frame(200, 1));
        got.extend(r.take_decisions());
    }
    r.advance(Time(n * 5_000_000 + 10_000_000));
    got.extend(r.take_decisions());
    let plc: Vec<&Decision> = got
        .iter()
        .filter(|d| r.dir_name(d.dir).0 == "plc")
        .collect();
    assert_eq!(plc.len() as u64, n);
    let lost: Vec<u64> = plc
        .iter()
        .filter(|d| d.fate == Fate::Lost)
        .map(|d| d.frame)
        .collect();
    assert_eq!(lost, want);
    assert!(lost.len() > 60 && lost.len() < 120, "{}", lost.len());
}

#[test]
fn shared_media_are_refused() {
    let plan = plan(&resolve_json(r#"{"preset": "vanet-chain"}"#).unwrap()).unwrap();
    let e = Path::of(&plan).unwrap_err();
    assert_eq!(e.path, "media");
    assert!(e.message.contains("802.11"), "{}", e.message);
}
