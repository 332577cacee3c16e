//! Every registered congestion control, in both profiles, completes a V2G
//! transfer at 0, 1 % and 5 % mean loss and delivers every byte; variant
//! settings behave as documented.

use serde_json::json;
use vtlab_core::spec::resolve_value;
use vtlab_core::tcp::cc::REGISTRY;
use vtlab_core::{run, RunOptions};

#[test]
fn every_algorithm_completes_in_both_profiles() {
    for desc in REGISTRY {
        for profile in ["ns3", "linux"] {
            for loss in [0.0, 0.01, 0.05] {
                let spec = json!({"preset": "v2g", "bytes": "2MB", "loss": {"mean_loss": loss},
                                  "tcp": {"cc": desc.name, "profile": profile}});
                let r = run(&resolve_value(spec).unwrap(), 3, RunOptions::default()).unwrap();
                let f = &r.flows[0];
                assert!(f.completed, "{} {profile} {loss}: not completed", desc.name);
                assert_eq!(f.bytes, 2_000_000);
                assert!(
                    f.goodput_bps > 0.0 && f.goodput_bps < 10e6,
                    "{} {profile} {loss}",
                    desc.name
                );
                if loss == 0.0 {
                    assert_eq!(f.drops_link_error, 0);
                    assert!(
                        f.goodput_bps > 5e6,
                        "{} {profile}: {}",
                        desc.name,
                        f.goodput_bps
                    );
                }
            }
        }
    }
}

#[test]
fn newreno_nd_turns_delayed_acks_off() {
    let s = resolve_value(json!({"preset": "v2g", "tcp": {"cc": "newreno-nd"}})).unwrap();
    assert!(!s.flows[0].tcp.delayed_ack);
    let e =
        resolve_value(json!({"preset": "v2g", "tcp": {"cc": "newreno-nd", "delayed_ack": true}}))
            .unwrap_err();
    assert_eq!(e.path, "tcp.delayed_ack");
    // Every segment is acknowledged: about twice the ACKs of NewReno.
    let acks = |cc: &str| {
        let s = resolve_value(json!({"preset": "v2g", "bytes": "2MB", "tcp": {"cc": cc}})).unwrap();
        let r = run(&s, 1, RunOptions::default()).unwrap();
        r.links
            .iter()
            .find(|l| l.direction == "evcc->secc")
            .unwrap()
            .packets_carried as f64
    };
    let ratio = acks("newreno-nd") / acks("newreno");
    assert!((1.8..2.2).contains(&ratio), "{ratio}");
}

#[test]
fn westwood_nr_uses_newreno_recovery() {
    let s = resolve_value(json!({"preset": "v2g", "tcp": {"cc": "westwood-nr"}})).unwrap();
    assert_eq!(s.flows[0].tcp.recovery, vtlab_core::tcp::Recovery::NewReno);
    assert!(!s.flows[0].tcp.prr);
    let plus = resolve_value(json!({"preset": "v2g", "tcp": {"cc": "westwood-plus"}})).unwrap();
    assert_eq!(plus.flows[0].tcp.recovery, vtlab_core::tcp::Recovery::Sack);
    let e =
        resolve_value(json!({"preset": "v2g", "tcp": {"cc": "westwood-nr", "recovery": "sack"}}))
            .unwrap_err();
    assert_eq!(e.to_string(), "tcp.recovery: 'westwood-nr' means recovery = newreno; drop this setting or choose another cc");
}

#[test]
fn parameters_reach_the_algorithm() {
    // NewReno-SC's floor k: a larger floor keeps cwnd higher after losses.
    let goodput = |k: f64| {
        let s = resolve_value(
            json!({"preset": "v2g", "bytes": "5MB", "loss": {"mean_loss": "5%"},
                                     "tcp": {"cc": "newreno-sc", "cc_params": {"k": k}}}),
        )
        .unwrap();
        run(&s, 2, RunOptions::default()).unwrap().flows[0].goodput_bps
    };
    assert_ne!(goodput(2.0), goodput(40.0));
}
