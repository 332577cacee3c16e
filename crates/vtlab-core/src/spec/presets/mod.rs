//! The presets: each turns its spec (the fields a scenario file gives after
//! `preset = "..."`) into a resolved [`Scenario`]. `custom` takes explicit
//! nodes, links, media and flows; the others build a study's topology.
//! The fields they share are handled once, in [`common`].

mod common;
mod custom;
mod lte_cabin;
mod station;
mod v2g;
mod vanet_chain;
mod wired_wireless;

pub use common::{
    DEFAULT_FRAMING_BYTES, DEFAULT_MTU_BYTES, DEFAULT_QUEUE_PACKETS, DEFAULT_TRACE_INTERVAL_NS,
};
pub use lte_cabin::LteCabinSpec;
pub use station::StationSpec;
pub use v2g::V2gSpec;
pub use vanet_chain::VanetChainSpec;
pub use wired_wireless::{FlowGroup, WiredWirelessSpec};

use super::{from_value, Scenario, SpecError};

/// Every preset, by name.
pub const PRESETS: &[&str] = &[
    "custom",
    "lte-cabin",
    "station",
    "v2g",
    "vanet-chain",
    "wired-wireless",
];

/// Build the scenario of preset `preset` from the rest of the spec.
pub(crate) fn resolve(preset: &str, rest: serde_json::Value) -> Result<Scenario, SpecError> {
    match preset {
        "custom" => from_value::<custom::CustomSpec>(rest, "")?.resolve(),
        "v2g" => from_value::<V2gSpec>(rest, "")?.resolve(),
        "station" => from_value::<StationSpec>(rest, "")?.resolve(),
        "lte-cabin" => from_value::<LteCabinSpec>(rest, "")?.resolve(),
        "wired-wireless" => from_value::<WiredWirelessSpec>(rest, "")?.resolve(),
        "vanet-chain" => from_value::<VanetChainSpec>(rest, "")?.resolve(),
        other => Err(SpecError::new(
            "preset",
            format!("unknown preset '{other}' (allowed: {})", PRESETS.join(", ")),
        )),
    }
}
