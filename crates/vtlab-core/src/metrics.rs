//! Results as tables: one row per flow, one per link direction, and optional
//! traces stored column by column.
//!
//! Every column is declared once, here, with its unit and a one-line meaning
//! (the [`tables!`] macro). The row structs, the columnar stores, the schema
//! that the Python binding exposes (`vtlab._core.schema()`), the Python column
//! lists and the column table in docs/metrics.md are all generated from these
//! declarations.

use serde::Serialize;

/// The type of a column's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ColumnKind {
    Str,
    U64,
    F64,
    Bool,
}

/// One declared column.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Column {
    pub name: &'static str,
    pub kind: ColumnKind,
    /// Unit of the values ("" for names and flags).
    pub unit: &'static str,
    /// What the column means, in one line.
    pub doc: &'static str,
}

/// A column's values.
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnData {
    Str(Vec<String>),
    U64(Vec<u64>),
    F64(Vec<f64>),
    Bool(Vec<bool>),
}

/// A type a column may hold.
pub trait ColumnValue: Sized {
    const KIND: ColumnKind;
    fn into_data(values: Vec<Self>) -> ColumnData;
}

impl ColumnValue for String {
    const KIND: ColumnKind = ColumnKind::Str;
    fn into_data(values: Vec<Self>) -> ColumnData {
        ColumnData::Str(values)
    }
}
impl ColumnValue for &'static str {
    const KIND: ColumnKind = ColumnKind::Str;
    fn into_data(values: Vec<Self>) -> ColumnData {
        ColumnData::Str(values.into_iter().map(str::to_owned).collect())
    }
}
impl ColumnValue for u64 {
    const KIND: ColumnKind = ColumnKind::U64;
    fn into_data(values: Vec<Self>) -> ColumnData {
        ColumnData::U64(values)
    }
}
impl ColumnValue for f64 {
    const KIND: ColumnKind = ColumnKind::F64;
    fn into_data(values: Vec<Self>) -> ColumnData {
        ColumnData::F64(values)
    }
}
impl ColumnValue for bool {
    const KIND: ColumnKind = ColumnKind::Bool;
    fn into_data(values: Vec<Self>) -> ColumnData {
        ColumnData::Bool(values)
    }
}

/// Declares, for each table, a row struct with its `COLUMNS` schema and a
/// columnar store (`$store`) that rows are pushed into.
macro_rules! tables {
    ($(
        $(#[doc = $tdoc:literal])*
        $row:ident / $store:ident {
            $( $field:ident : $ty:ty, $unit:literal, $doc:literal; )*
        }
    )*) => {$(
        $(#[doc = $tdoc])*
        #[derive(Clone, Debug, Serialize, PartialEq)]
        pub struct $row {
            $( #[doc = $doc] pub $field: $ty, )*
        }

        impl $row {
            /// The table's columns, in order.
            pub const COLUMNS: &'static [Column] = &[$(Column {
                name: stringify!($field),
                kind: <$ty as ColumnValue>::KIND,
                unit: $unit,
                doc: $doc,
            }),*];
        }

        /// The same table stored column by column.
        #[derive(Clone, Debug, Default, Serialize, PartialEq)]
        pub struct $store {
            $( pub $field: Vec<$ty>, )*
        }

        impl $store {
            pub fn push(&mut self, row: $row) {
                $( self.$field.push(row.$field); )*
            }
            pub fn len(&self) -> usize {
                Self::first_len(&[$(self.$field.len()),*])
            }
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }
            fn first_len(lens: &[usize]) -> usize {
                lens.first().copied().unwrap_or(0)
            }
            /// (column name, values) in declaration order.
            pub fn into_columns(self) -> Vec<(&'static str, ColumnData)> {
                vec![$( (stringify!($field), ColumnValue::into_data(self.$field)) ),*]
            }
        }

        impl FromIterator<$row> for $store {
            fn from_iter<I: IntoIterator<Item = $row>>(rows: I) -> Self {
                let mut s = Self::default();
                for r in rows {
                    s.push(r);
                }
                s
            }
        }
    )*};
}

/// The identity columns every row of every table carries first, so a row can
/// always be traced to the run that produced it.
pub const ID_COLUMNS: &[Column] = &[
    Column {
        name: "scenario_hash",
        kind: ColumnKind::Str,
        unit: "",
        doc: "First 16 hex digits of the SHA-256 of the resolved scenario's canonical JSON",
    },
    Column {
        name: "seed",
        kind: ColumnKind::U64,
        unit: "",
        doc: "Seed of the run (unsigned 64-bit)",
    },
    Column {
        name: "version",
        kind: ColumnKind::Str,
        unit: "",
        doc: "vtlab version that produced the row",
    },
];

/// What a value of a result row counts against a run's output budget
/// (`max_output_bytes`) when the row is kept in memory: about what it takes
/// as a Python value in the result's column lists (a list slot and a number
/// object).
pub const OUTPUT_BYTES_PER_VALUE_IN_MEMORY: u64 = 32;
/// What a value counts when its row is streamed to a file: a number in the
/// file's columns before compression.
pub const OUTPUT_BYTES_PER_VALUE_IN_FILE: u64 = 8;

/// What one row of a table with `columns` (besides the identity columns)
/// counts against the output budget, kept in memory or streamed to a file.
pub const fn row_output_bytes(columns: &[Column], in_memory: bool) -> u64 {
    let per_value = if in_memory {
        OUTPUT_BYTES_PER_VALUE_IN_MEMORY
    } else {
        OUTPUT_BYTES_PER_VALUE_IN_FILE
    };
    (ID_COLUMNS.len() + columns.len()) as u64 * per_value
}

tables! {
    /// One flow's outcome.
    FlowResult / FlowColumns {
        flow: String, "", "Flow name";
        cc: String, "", "Congestion control (registry name)";
        profile: &'static str, "", "Implementation profile: ns3, linux or ns2";
        recovery: &'static str, "", "Loss recovery: tahoe, reno, newreno, sack or sack+prr";
        bytes: u64, "B", "Application bytes to transfer";
        completed: bool, "", "Whether every byte reached the receiver before the run ended";
        abort_reason: &'static str, "", "Why an incomplete flow ended: syn_retries (connection attempt failed), data_retries (too many timeouts in a row), stop_time (the scenario's stop), horizon (the default horizon), event_budget, output_budget (the run's output reached max_output_bytes), stalled (nothing left to simulate), deadline (a session's flows: their session ended at a missed response deadline; a session's two flows always carry their session's reason unless their own connection gave up); empty when completed";
        goodput_bps: f64, "bit/s", "Application bytes received in order × 8 / (last byte time − flow start)";
        completion_s: f64, "s", "From flow start to the last byte received; NaN if incomplete";
        segments_sent: u64, "", "Data segments transmitted, retransmissions included";
        retransmissions: u64, "", "Data segments retransmitted";
        rto_count: u64, "", "Retransmission-timer expiries (backoff repeats included)";
        fast_recoveries: u64, "", "Entries into fast recovery";
        slow_starts_after_loss: u64, "", "Entries into slow start after a loss (a timeout outside state Loss, or a Tahoe fast retransmit)";
        drops_link_error: u64, "", "Packets of this flow lost to link errors (either direction)";
        drops_queue: u64, "", "Packets of this flow dropped by full queues: a device queue or a queue disc's limit (either direction)";
        drops_aqm: u64, "", "Packets of this flow dropped by a queue disc's active queue management: CoDel's control law, RED's or PIE's early drop (either direction)";
        rtt_min_s: f64, "s", "Smallest RTT sample; NaN without samples";
        rtt_mean_s: f64, "s", "Mean of the RTT samples; NaN without samples";
        rtt_max_s: f64, "s", "Largest RTT sample; NaN without samples";
        rtt_p50_s: f64, "s", "Median RTT sample (within ±0.5 %: 1 % log bins, clamped into [rtt_min_s, rtt_max_s]); NaN without samples";
        rtt_p95_s: f64, "s", "95th percentile of the RTT samples (within ±0.5 %, clamped into [rtt_min_s, rtt_max_s]); NaN without samples";
        rtt_p99_s: f64, "s", "99th percentile of the RTT samples (within ±0.5 %, clamped into [rtt_min_s, rtt_max_s]); NaN without samples";
        loss_events: u64, "", "Loss events: fast retransmits and first timeouts of a window";
        true_link_losses: u64, "", "Loss events whose first unacknowledged segment was dropped by a link error";
        true_congestion_losses: u64, "", "Loss events whose first unacknowledged segment was dropped by a full queue";
        predicted_link_losses: u64, "", "Loss events a loss-classifying controller ascribed to link errors (0 for others)";
        predicted_congestion_losses: u64, "", "Loss events a loss-classifying controller ascribed to congestion (0 for others)";
        correct_predictions: u64, "", "Verdicts of a loss-classifying controller that matched the true cause";
        tlp_probes: u64, "", "Tail loss probes sent (RFC 8985 §7, tcp.tlp; Linux TCPLossProbes)";
        tlp_recoveries: u64, "", "Probe episodes whose probe repaired a loss, with a cwnd reduction (Linux TCPLossProbeRecovery); also counted in loss_events";
        rack_losses: u64, "", "Segments RACK marked lost (RFC 8985 §6, tcp.rack), a retransmission marked again counted again";
        reorder_timeouts: u64, "", "Expiries of RACK's reorder timer";
        early_retransmits: u64, "", "Fast retransmits that only RFC 5827's lowered duplicate-ACK threshold allowed (tcp.early_retransmit)";
    }

    /// One link direction's counters.
    LinkResult / LinkColumns {
        link: String, "", "Link name";
        direction: String, "", "Direction as from->to";
        packets_carried: u64, "", "Packets that reached the far end (not lost to link errors)";
        bytes_carried: u64, "B", "IP bytes of those packets";
        drops_queue: u64, "", "Packets dropped because a queue was full: the device queue, or the queue disc's limit (qdisc_drops_limit)";
        qdisc: &'static str, "", "Root queue disc in front of the device queue: none, pfifo_fast, fq_codel, codel, red or pie";
        qdisc_enqueued: u64, "", "Packets the queue disc accepted (every packet of the direction passes through it)";
        qdisc_drops_limit: u64, "", "Packets the queue disc dropped over its size limit (also in drops_queue)";
        qdisc_drops_aqm: u64, "", "Packets the queue disc dropped by active queue management: CoDel's control law (target exceeded), RED's or PIE's early drop";
        drops_link_error: u64, "", "Packets lost to link errors at the receiving end (cellular HARQ losses included)";
        drops_harq: u64, "", "Of those, packets lost in a cellular transport block that failed every HARQ attempt (channel model only)";
        mac_frames_sent: u64, "", "802.11 frames this station sent: data, RTS, CTS and ACK, retransmissions included (0 on other links)";
        mac_retries: u64, "", "802.11 attempts that failed: an RTS without CTS or a data frame without ACK";
        mac_retry_drops: u64, "", "Packets the 802.11 MAC dropped at the retry limit (also in drops_link_error)";
        mac_rx_errors: u64, "", "Frames this station locked onto whose reception failed: collision, interference, the error model at the MAC";
    }

    /// Per-flow sender state over time (one row per flow per sample).
    TraceRow / Trace {
        time_s: f64, "s", "Simulated time of the sample";
        flow: String, "", "Flow name";
        cwnd_bytes: u64, "B", "Congestion window";
        ssthresh_bytes: f64, "B", "Slow-start threshold; infinity while unset";
        snd_una: u64, "B", "First unacknowledged byte (offset in the transfer)";
        snd_max: u64, "B", "Highest byte sent so far, exclusive";
        srtt_s: f64, "s", "Smoothed RTT; NaN before the first sample";
        flight_size_bytes: u64, "B", "RFC 5681 FlightSize: snd_max − snd_una";
        pipe_bytes: u64, "B", "Bytes the sender believes are in the network: RFC 6675 pipe with SACK, FlightSize otherwise";
        ca_state: &'static str, "", "Congestion state: open, disorder, recovery or loss";
    }

    /// One request/response session's outcome (ISO 15118 and custom sessions).
    SessionResult / SessionColumns {
        session: String, "", "Session name (its flows are <session>/requests and <session>/responses)";
        profile: String, "", "Message profile: iso15118-2-dc, iso15118-2-ac, din70121-dc, iso15118-2-dc-ecog or custom";
        cc: String, "", "Congestion control of the session's connection";
        tcp_profile: &'static str, "", "TCP implementation profile: ns3, linux or ns2";
        completed: bool, "", "Whether every exchange of the session was answered (in time, when misses abort)";
        abort_reason: String, "", "Why an unfinished session ended: deadline (a response missed its timeout), syn_retries or data_retries (the connection failed), stop_time, horizon, event_budget, output_budget, stalled; empty when completed";
        failed_message: String, "", "The message whose exchange was under way when the session ended early; empty when completed";
        messages: u64, "", "Exchanges recorded (answered, or missed at the deadline)";
        deadline_misses: u64, "", "Responses later than their deadline (or never, when the session gave up)";
        response_p50_s: f64, "s", "Median response time over the answered exchanges (nearest rank); NaN without any";
        response_p99_s: f64, "s", "99th percentile of the response times (nearest rank)";
        response_p999_s: f64, "s", "99.9th percentile of the response times (nearest rank)";
        response_max_s: f64, "s", "Longest response time";
        loop_p99_s: f64, "s", "99th percentile of the charging loop's response times (CurrentDemand or ChargingStatus); NaN without a loop";
        loop_p999_s: f64, "s", "99.9th percentile of the charging loop's response times";
        time_to_energy_s: f64, "s", "From the session start to the first request of the charging loop (energy transfer begins); NaN if never reached";
        energy_s: f64, "s", "Time spent in the charging loop and after it until the session ended";
        session_s: f64, "s", "From the session start to its end (completion, abort or the end of the run)";
    }

    /// One request/response exchange of a session, in order.
    MessageRow / MessageLog {
        session: String, "", "Session name";
        index: u64, "", "Exchange number within the session, from 0";
        message: String, "", "Message name (the step), e.g. CurrentDemand";
        request_s: f64, "s", "When the request was written, from the session start";
        response_s: f64, "s", "When the whole response was in, from the session start; NaN if it never was";
        response_time_s: f64, "s", "response_s − request_s; NaN if the response never came";
        deadline_s: f64, "s", "The response timeout (infinity: none)";
        missed: bool, "", "The response came later than its deadline, or never";
    }

    /// Typed events of senders and links (`--events`), in time order.
    EventRow / EventLog {
        time_s: f64, "s", "Simulated time of the event";
        time_ns: u64, "ns", "The same time in integer nanoseconds (exact)";
        flow: String, "", "Flow the event belongs to";
        event: &'static str, "", "state (congestion-state change), window (cwnd or ssthresh change), rto (timer expiry), spurious_rto (Eifel detection), tlp (tail loss probe sent), retransmit, drop";
        ca_state: &'static str, "", "Sender's congestion state after the event: open, disorder, recovery or loss";
        cwnd_bytes: u64, "B", "Congestion window after the event";
        ssthresh_bytes: f64, "B", "Slow-start threshold after the event; infinity while unset";
        seq: u64, "B", "Byte offset concerned: the segment retransmitted or dropped (the ACK number for a dropped ACK), else snd_una";
        detail: String, "", "state: the previous state; drop: cause (queue, aqm or link), packet kind and link direction; spurious_rto: the timeout's time";
    }
}

/// Everything one run produces.
/// The files a packet capture wrote, and its first error if writing failed
/// (then the files have been removed: no partial capture is left behind).
#[derive(Clone, Debug, Default)]
pub struct CaptureReport {
    /// (path, packets written), in file order.
    pub files: Vec<(std::path::PathBuf, u64)>,
    pub error: Option<String>,
    /// The file and OS error code (errno) of the I/O failure behind `error`.
    pub os_error: Option<(std::path::PathBuf, i32)>,
}

#[derive(Clone, Debug, Serialize)]
pub struct RunResult {
    pub scenario_hash: String,
    pub seed: u64,
    pub version: &'static str,
    pub flows: Vec<FlowResult>,
    pub links: Vec<LinkResult>,
    /// Request/response sessions (empty without any).
    pub sessions: Vec<SessionResult>,
    /// Their exchanges, in session order then time order.
    pub messages: MessageLog,
    pub trace: Option<Trace>,
    /// Typed events, when asked for.
    pub events: Option<EventLog>,
    /// The capture files written, when captures were asked for.
    #[serde(skip)]
    pub capture: Option<CaptureReport>,
    /// Events processed by the scheduler, plus the queue discs' own work
    /// (PIE's updates): what the event budget counts.
    pub events_processed: u64,
    /// Packet transmissions over links (one per hop).
    pub packets: u64,
    pub sim_time_s: f64,
    pub wall_s: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_names_are_unique_per_table() {
        for cols in [
            FlowResult::COLUMNS,
            LinkResult::COLUMNS,
            TraceRow::COLUMNS,
            EventRow::COLUMNS,
            SessionResult::COLUMNS,
            MessageRow::COLUMNS,
        ] {
            let mut names: Vec<&str> = ID_COLUMNS.iter().chain(cols).map(|c| c.name).collect();
            let n = names.len();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), n);
        }
    }

    #[test]
    fn every_column_is_documented_and_quantities_carry_units() {
        for c in FlowResult::COLUMNS
            .iter()
            .chain(LinkResult::COLUMNS)
            .chain(TraceRow::COLUMNS)
            .chain(SessionResult::COLUMNS)
            .chain(MessageRow::COLUMNS)
        {
            assert!(!c.doc.is_empty(), "{}", c.name);
            // A name that ends in a unit suffix must declare that unit.
            for (suffix, unit) in [
                ("_s", "s"),
                ("_ns", "ns"),
                ("_bps", "bit/s"),
                ("_bytes", "B"),
            ] {
                if c.name.ends_with(suffix) {
                    assert_eq!(c.unit, unit, "{}", c.name);
                }
            }
        }
    }

    #[test]
    fn columns_come_out_in_declaration_order_with_their_values() {
        let mut t = Trace::default();
        for i in 0..2u64 {
            t.push(TraceRow {
                time_s: i as f64,
                flow: format!("f{i}"),
                cwnd_bytes: 10 + i,
                ssthresh_bytes: f64::INFINITY,
                snd_una: 0,
                snd_max: 0,
                srtt_s: f64::NAN,
                flight_size_bytes: 0,
                pipe_bytes: 0,
                ca_state: "open",
            });
        }
        assert_eq!(t.len(), 2);
        let cols = t.into_columns();
        let names: Vec<&str> = cols.iter().map(|(n, _)| *n).collect();
        let declared: Vec<&str> = TraceRow::COLUMNS.iter().map(|c| c.name).collect();
        assert_eq!(names, declared);
        assert_eq!(cols[2].1, ColumnData::U64(vec![10, 11]));
        assert_eq!(
            cols[9].1,
            ColumnData::Str(vec!["open".into(), "open".into()])
        );
    }
}
