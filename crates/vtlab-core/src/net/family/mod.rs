//! Link families: shared media behind one interface.
//!
//! A point-to-point direction ([`crate::net::LinkDir`], with a constant rate
//! or a cellular capacity schedule) needs one pending event, its head's
//! arrival. A shared medium cannot be a pair of FIFO directions: a
//! transmission reaches every attached node, and access to the medium needs
//! events of its own. Every such family implements [`LinkFamily`] and the
//! simulation drives all of them alike:
//!
//! - a medium has *sites* (its attached nodes, numbered from 0), and the
//!   simulation hands a packet to site `k` for neighbour `j`
//!   ([`LinkFamily::enqueue`]);
//! - it asks for two kinds of events, both keyed by site: the end of a
//!   transmission the site started (reported in [`Outbox::tx_end`], fired
//!   exactly once: [`LinkFamily::on_tx_end`]) and one timer per site
//!   ([`LinkFamily::deadline`], [`LinkFamily::on_timer`]). The timer is lazy,
//!   as the TCP timers are: the simulation schedules a new event only when the
//!   deadline moves earlier, and an event whose time no longer matches the
//!   armed time is stale (the site is re-armed at its current deadline);
//! - every call leaves what the simulation must act on in the [`Outbox`]:
//!   packets delivered to a site's node, drops with their cause,
//!   transmissions started, sites whose deadline may have changed;
//! - each site has a link row ([`SiteStats`]).
//!
//! The families are listed once, at the end of this file; the list generates
//! [`AnyFamily`] (enum dispatch: no virtual call per event) and [`FamilyConf`]
//! (what a plan holds for one medium).

#[cfg(test)]
pub(crate) mod bus;

use crate::engine::Time;
use crate::net::{NodeId, Packet};

/// Why a medium dropped a packet, as TCP's loss oracle and the counters see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropCause {
    /// The site's queue was full.
    Queue,
    /// The medium lost it (retry limit, error model).
    Link,
}

/// What the simulation must act on after a call into a medium.
#[derive(Default)]
pub struct Outbox {
    /// (site, packet) handed to the site's node.
    pub delivered: Vec<(usize, Packet)>,
    /// (site, packet, cause) dropped at that site.
    pub dropped: Vec<(usize, Packet, DropCause)>,
    /// (site, end) of transmissions started: each needs its end event.
    pub tx_end: Vec<(usize, Time)>,
    /// Sites whose [`LinkFamily::deadline`] may have changed.
    pub timers: Vec<usize>,
}

impl Outbox {
    pub fn is_empty(&self) -> bool {
        self.delivered.is_empty()
            && self.dropped.is_empty()
            && self.tx_end.is_empty()
            && self.timers.is_empty()
    }
}

/// Counters of one site: its link row. Families without a MAC leave the MAC
/// counters at 0.
#[derive(Clone, Debug, Default)]
pub struct SiteStats {
    /// Packets this site delivered to the next hop (duplicates not counted).
    pub packets_carried: u64,
    pub bytes_carried: u64,
    pub queue_drops: u64,
    /// Packets lost at this site (retry limit, error model).
    pub link_drops: u64,
    pub retry_drops: u64,
    /// Frames sent (data and control; retransmissions included).
    pub frames_sent: u64,
    /// Failed attempts.
    pub retries: u64,
    /// Frames this site received in error.
    pub rx_errors: u64,
}

/// A shared medium of one link family (see the module documentation).
pub trait LinkFamily: Sized {
    /// The resolved settings of one medium (what a plan holds).
    type Conf;

    /// Build the medium for a run with `seed`; site k is on node `nodes[k]`.
    fn build(conf: &Self::Conf, nodes: Vec<NodeId>, seed: u64) -> Self;
    /// The family's name in messages ("802.11").
    fn kind(conf: &Self::Conf) -> &'static str;
    /// The medium's name.
    fn conf_name(conf: &Self::Conf) -> &str;
    /// Largest IP packet a site sends unfragmented.
    fn mtu_bytes(conf: &Self::Conf) -> u32;

    /// The medium's name (the `link` of its rows).
    fn name(&self) -> &str;
    fn sites(&self) -> usize;
    /// The node of site `site`.
    fn node(&self, site: usize) -> NodeId;
    /// The name of site `site` (the `direction` of its row).
    fn site_name(&self, site: usize) -> &str;
    fn stats(&self, site: usize) -> &SiteStats;
    /// What the simulation must act on (it takes the contents and hands the
    /// emptied buffers back).
    fn outbox(&mut self) -> &mut Outbox;
    /// The site's earliest pending timer.
    fn deadline(&self, site: usize) -> Option<Time>;

    /// Offer an IP packet at site `site` for neighbour `next`.
    fn enqueue(&mut self, now: Time, site: usize, next: usize, packet: Packet);
    /// The transmission site `site` started ends at `now`.
    fn on_tx_end(&mut self, now: Time, site: usize);
    /// Site `site`'s timer fired at `now`.
    fn on_timer(&mut self, now: Time, site: usize);
}

/// Generates [`AnyFamily`] and [`FamilyConf`] over the listed families, with
/// [`LinkFamily`] for both by enum dispatch.
macro_rules! families {
    ($($(#[$attr:meta])* $variant:ident($ty:ty)),* $(,)?) => {
        /// A medium of any family. A run has a few, built once: they are not
        /// boxed, so that an event reaches its medium without an indirection.
        #[allow(clippy::large_enum_variant)]
        pub enum AnyFamily {
            $($(#[$attr])* $variant($ty)),*
        }

        /// The resolved settings of a medium of any family. Built once per
        /// medium; the small second variant (the test bus) exists in tests only.
        #[allow(clippy::large_enum_variant)]
        #[derive(Clone, Debug)]
        #[allow(clippy::large_enum_variant)]
        pub enum FamilyConf {
            $($(#[$attr])* $variant(<$ty as LinkFamily>::Conf)),*
        }

        impl LinkFamily for AnyFamily {
            type Conf = FamilyConf;

            fn build(conf: &FamilyConf, nodes: Vec<NodeId>, seed: u64) -> Self {
                match conf {
                    $($(#[$attr])* FamilyConf::$variant(c) => {
                        AnyFamily::$variant(<$ty as LinkFamily>::build(c, nodes, seed))
                    })*
                }
            }
            fn kind(conf: &FamilyConf) -> &'static str {
                match conf { $($(#[$attr])* FamilyConf::$variant(c) => <$ty as LinkFamily>::kind(c)),* }
            }
            fn conf_name(conf: &FamilyConf) -> &str {
                match conf { $($(#[$attr])* FamilyConf::$variant(c) => <$ty as LinkFamily>::conf_name(c)),* }
            }
            fn mtu_bytes(conf: &FamilyConf) -> u32 {
                match conf { $($(#[$attr])* FamilyConf::$variant(c) => <$ty as LinkFamily>::mtu_bytes(c)),* }
            }
            fn name(&self) -> &str {
                match self { $($(#[$attr])* AnyFamily::$variant(m) => m.name()),* }
            }
            fn sites(&self) -> usize {
                match self { $($(#[$attr])* AnyFamily::$variant(m) => m.sites()),* }
            }
            fn node(&self, site: usize) -> NodeId {
                match self { $($(#[$attr])* AnyFamily::$variant(m) => m.node(site)),* }
            }
            fn site_name(&self, site: usize) -> &str {
                match self { $($(#[$attr])* AnyFamily::$variant(m) => m.site_name(site)),* }
            }
            fn stats(&self, site: usize) -> &SiteStats {
                match self { $($(#[$attr])* AnyFamily::$variant(m) => m.stats(site)),* }
            }
            fn outbox(&mut self) -> &mut Outbox {
                match self { $($(#[$attr])* AnyFamily::$variant(m) => m.outbox()),* }
            }
            fn deadline(&self, site: usize) -> Option<Time> {
                match self { $($(#[$attr])* AnyFamily::$variant(m) => m.deadline(site)),* }
            }
            fn enqueue(&mut self, now: Time, site: usize, next: usize, packet: Packet) {
                match self {
                    $($(#[$attr])* AnyFamily::$variant(m) => m.enqueue(now, site, next, packet)),*
                }
            }
            fn on_tx_end(&mut self, now: Time, site: usize) {
                match self { $($(#[$attr])* AnyFamily::$variant(m) => m.on_tx_end(now, site)),* }
            }
            fn on_timer(&mut self, now: Time, site: usize) {
                match self { $($(#[$attr])* AnyFamily::$variant(m) => m.on_timer(now, site)),* }
            }
        }
    };
}

families! {
    Wifi(crate::net::wifi::Medium),
    #[cfg(test)]
    Bus(bus::Bus),
}
