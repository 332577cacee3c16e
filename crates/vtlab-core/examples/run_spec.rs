//! Run a scenario spec given as JSON on the command line and print the result
//! as JSON: `cargo run --release --example run_spec -- '{"preset":"v2g"}' 1`.

fn main() {
    let mut args = std::env::args().skip(1);
    let spec = args
        .next()
        .unwrap_or_else(|| r#"{"preset": "v2g"}"#.to_string());
    let seed = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    match vtlab_core::run_spec_json(&spec, seed, vtlab_core::RunOptions::default()) {
        Ok(r) => println!("{}", serde_json::to_string_pretty(&r).unwrap_or_default()),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
