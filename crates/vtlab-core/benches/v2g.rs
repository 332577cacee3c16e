//! Criterion benchmark: the V2G single-flow scenario, NewReno, 5 % mean loss.
//! The `vtlab bench` command reports the same run with events/s and packets/s.

use criterion::{criterion_group, criterion_main, Criterion};
use vtlab_core::{run_spec_json, RunOptions};

fn v2g(c: &mut Criterion) {
    let mut group = c.benchmark_group("v2g");
    group.sample_size(10);
    let spec = r#"{"preset": "v2g", "bytes": "10MB", "loss": {"mean_loss": "5%"}}"#;
    group.bench_function("newreno_10MB_5pct", |b| {
        b.iter(|| run_spec_json(spec, 1, RunOptions::default()).map(|r| r.events_processed))
    });
    group.finish();
}

criterion_group!(benches, v2g);
criterion_main!(benches);
