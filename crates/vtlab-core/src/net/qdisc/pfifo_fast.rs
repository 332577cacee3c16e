//! pfifo_fast: three strict-priority FIFO bands sharing one packet limit.
//!
//! ns-3.44 `src/traffic-control/model/pfifo-fast-queue-disc.cc`
//! (`PfifoFastQueueDisc`), after Linux's default qdisc of old:
//! * the band is `prio2band[priority & 0x0f]` with Linux's table
//!   `{1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1}`, the priority being the
//!   packet's `SocketPriorityTag` (0 if it has none; `DoEnqueue`);
//! * band 0 is always served before band 1, band 1 before band 2 (`DoDequeue`);
//! * `MaxSize` (default 1000 packets, Linux's txqueuelen) bounds the three bands
//!   together: a packet that finds `GetCurrentSize() >= GetMaxSize()` is dropped
//!   ("Queue disc limit exceeded"), whatever its band (`DoEnqueue`).
//!
//! A TCP socket tags its packets only if a priority or TOS was set on it, so
//! by default every packet has priority 0 and goes to band 1: pfifo_fast is
//! then a 1000-packet drop-tail FIFO.

use super::{DropReason, Dropped, Fifo, Item, QueueDisc, Stats};
use crate::engine::Time;

/// ns-3 `PfifoFastQueueDisc::prio2band`.
const PRIO2BAND: [usize; 16] = [1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1];

/// The priority ns-3 gives a socket whose IP TOS is `tos`
/// (`Socket::IpTos2Priority`, src/network/model/socket.cc): the four TOS bits
/// `(tos & 0x1e) >> 1` select best effort (0), bulk (2), interactive (6) or
/// interactive bulk (4).
pub fn priority_from_tos(tos: u8) -> u8 {
    match (tos & 0x1e) >> 1 {
        0..=3 => 0,
        4..=7 => 2,
        8..=11 => 6,
        _ => 4,
    }
}

/// Attributes of `ns3::PfifoFastQueueDisc`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PfifoFastParams {
    /// `MaxSize`, packets only (the constructor fixes the unit). Default 1000.
    pub limit_packets: u32,
}

impl Default for PfifoFastParams {
    fn default() -> Self {
        PfifoFastParams {
            limit_packets: 1000,
        }
    }
}

pub struct PfifoFast<T> {
    params: PfifoFastParams,
    bands: [Fifo<T>; 3],
    stats: Stats,
}

impl<T> PfifoFast<T> {
    pub fn new(params: PfifoFastParams) -> Self {
        PfifoFast {
            params,
            bands: Default::default(),
            stats: Stats::default(),
        }
    }

    /// The band a packet of this priority goes to.
    pub fn band(priority: u8) -> usize {
        PRIO2BAND[usize::from(priority & 0x0f)]
    }

    /// Packets waiting in `band`.
    pub fn band_len(&self, band: usize) -> usize {
        self.bands[band].len()
    }
}

impl<T> QueueDisc<T> for PfifoFast<T> {
    fn enqueue(&mut self, now: Time, mut item: Item<T>) -> Result<(), Dropped<T>> {
        self.stats.received(item.bytes);
        // DoEnqueue: GetCurrentSize() >= GetMaxSize() → LIMIT_EXCEEDED_DROP.
        if self.len_packets() >= self.params.limit_packets as usize {
            self.stats
                .dropped_before(DropReason::LimitExceeded, item.bytes);
            return Err(Dropped {
                item,
                reason: DropReason::LimitExceeded,
                at: now,
            });
        }
        // Each band's DropTail queue holds MaxSize packets (CheckConfig), so
        // it cannot overflow once the check above passed.
        item.enqueued_at = now;
        self.stats.enqueued(item.bytes);
        self.bands[Self::band(item.priority)].push(item);
        Ok(())
    }

    fn dequeue(&mut self, _now: Time) -> Option<Item<T>> {
        // DoDequeue: the first non-empty band, in order 0, 1, 2.
        let item = self.bands.iter_mut().find_map(|b| b.pop())?;
        self.stats.dequeued(item.bytes);
        Some(item)
    }

    fn len_packets(&self) -> usize {
        self.bands.iter().map(|b| b.len()).sum()
    }

    fn len_bytes(&self) -> u64 {
        self.bands.iter().map(|b| b.bytes()).sum()
    }

    fn stats(&self) -> &Stats {
        &self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tos_maps_to_priority_as_ns3_socket() {
        // (tos & 0x1e) >> 1: 0x00 → 0 (best effort), 0x08 → 4 (bulk → 2),
        // 0x10 → 8 (interactive → 6), 0x18 → 12 (interactive bulk → 4).
        assert_eq!(priority_from_tos(0x00), 0);
        assert_eq!(priority_from_tos(0x08), 2);
        assert_eq!(priority_from_tos(0x10), 6);
        assert_eq!(priority_from_tos(0x18), 4);
        // The ECN bits (0x03) and the top three bits do not matter.
        assert_eq!(priority_from_tos(0xE3), 0);
        // Bands of those priorities: 0 → 1, 2 → 2, 6 → 0, 4 → 1.
        let bands: Vec<usize> = [0u8, 2, 6, 4]
            .iter()
            .map(|p| PfifoFast::<()>::band(*p))
            .collect();
        assert_eq!(bands, vec![1, 2, 0, 1]);
    }

    #[test]
    fn pfifo_fast_serves_bands_in_priority_order() {
        let mut q = PfifoFast::new(PfifoFastParams::default());
        // (id, priority) → band by prio2band: 0→1, 6→0, 1→2, 7→0, 4→1, 2→2, 9→1 (9&15=9 → 1),
        // 22→0 (22 & 15 = 6 → 0).
        let offered = [
            (0u32, 0u8),
            (1, 6),
            (2, 1),
            (3, 7),
            (4, 4),
            (5, 2),
            (6, 9),
            (7, 22),
        ];
        for (id, prio) in offered {
            q.enqueue(Time(id as u64), Item::new(id, 100).with_priority(prio))
                .unwrap();
        }
        assert_eq!((q.band_len(0), q.band_len(1), q.band_len(2)), (3, 3, 2));
        // Band 0 in arrival order (1, 3, 7), then band 1 (0, 4, 6), then band 2 (2, 5).
        let order: Vec<u32> =
            std::iter::from_fn(|| q.dequeue(Time(100)).map(|i| i.payload)).collect();
        assert_eq!(order, vec![1, 3, 7, 0, 4, 6, 2, 5]);
        // A band-0 packet arriving behind band-1 packets still goes first.
        q.enqueue(Time(200), Item::new(10, 100)).unwrap();
        q.enqueue(Time(200), Item::new(11, 100).with_priority(6))
            .unwrap();
        assert_eq!(q.dequeue(Time(201)).map(|i| i.payload), Some(11));
        assert_eq!(q.dequeue(Time(201)).map(|i| i.payload), Some(10));
    }

    #[test]
    fn pfifo_fast_limit_counts_all_bands() {
        let mut q = PfifoFast::new(PfifoFastParams { limit_packets: 3 });
        q.enqueue(Time(0), Item::new(0, 1500).with_priority(6))
            .unwrap();
        q.enqueue(Time(0), Item::new(1, 1500)).unwrap();
        q.enqueue(Time(0), Item::new(2, 1500).with_priority(1))
            .unwrap();
        // 3 >= 3: dropped even though it would go to the highest band.
        let d = q
            .enqueue(Time(0), Item::new(3, 1500).with_priority(6))
            .unwrap_err();
        assert_eq!((d.item.payload, d.reason), (3, DropReason::LimitExceeded));
        assert_eq!(q.stats().dropped(DropReason::LimitExceeded), (1, 1500));
        assert_eq!(q.len_bytes(), 4500);
        // Default MaxSize is 1000 packets (the MaxSize attribute).
        assert_eq!(PfifoFastParams::default().limit_packets, 1000);
    }
}
