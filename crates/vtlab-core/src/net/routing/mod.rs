//! Routing protocols that run over a shared medium.
//!
//! Static routes (the default) are computed once by the plan. A medium with
//! `routing = "aodv"` runs [`aodv::Aodv`] at every station instead: the
//! simulation hands a packet to the station where it enters the medium with
//! the station where it leaves it, and the protocol finds the hops between
//! them with control packets that the medium carries like any frame.

pub mod aodv;
#[cfg(test)]
mod aodv_tests;

use serde::{Deserialize, Serialize};

/// How stations of a medium find their next hops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Routing {
    /// Fewest hops over the pairs in range at the start, fixed for the run.
    #[default]
    Static,
    /// Ad hoc on-demand distance vector routing (RFC 3561, ns-3's defaults).
    Aodv,
}

impl Routing {
    /// The names a scenario may give, in the order the error lists them.
    pub const NAMES: [&'static str; 2] = ["static", "aodv"];

    pub fn is_static(&self) -> bool {
        *self == Routing::Static
    }

    /// Parse a scenario's value; `Err` is the message with the allowed values.
    pub fn parse(name: &str) -> Result<Routing, String> {
        match name {
            "static" => Ok(Routing::Static),
            "aodv" => Ok(Routing::Aodv),
            other => Err(format!(
                "unknown routing {other:?} (allowed: {})",
                Routing::NAMES.join(", ")
            )),
        }
    }
}
