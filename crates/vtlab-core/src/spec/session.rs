//! Request/response sessions over one TCP connection: the ISO 15118-2 and
//! DIN SPEC 70121 message sequences between a vehicle (EVCC, the client) and
//! its charger (SECC, the server), or a custom list of steps.
//!
//! A session is resolved into [`SessionConf`]: the client and server nodes,
//! the TCP settings, and an ordered list of [`StepConf`] (request bytes,
//! response bytes, deadline, repeats, period). TLS is resolved here too: its
//! handshake becomes two steps without a deadline and every message grows by
//! the record overhead. The engine (`sim::session`) sees only steps.
//!
//! Message sizes and timeouts: docs/iso15118.md, with the source of each.

use serde::{Deserialize, Serialize};

pub use crate::sim::plan::StepConf;

use super::scenario::{check_range, MAX_TIME_NS};
use super::units::{Bytes, Dur};
use super::{SpecError, TcpSpec, Validate};
use crate::tcp::TcpConfig;

/// A resolved session.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SessionConf {
    pub name: String,
    /// The message profile it was built from (`custom` for explicit steps).
    pub profile: String,
    /// The vehicle (connects, sends requests).
    pub client: String,
    /// The charger (accepts, answers).
    pub server: String,
    pub start_ns: u64,
    pub tcp: TcpConfig,
    pub steps: Vec<StepConf>,
    /// A missed deadline ends the session (ISO 15118-2 [V2G2-536]: the EVCC
    /// stops the session when V2G_EVCC_Msg_Timeout expires).
    pub abort_on_miss: bool,
    /// Application-level retries: at a missed deadline the vehicle writes the
    /// request again and waits another timeout, this many times per exchange,
    /// before it gives up (0, the default: ISO 15118-2 and -20 have no such retry).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retries: u32,
    /// The server's processing time per request, before it writes the response.
    pub processing_ns: u64,
    /// Energy flows from the first request of this step on (time to energy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_step: Option<u32>,
}

/// The user's view of a session (`session = { ... }` in a preset).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionSpec {
    /// Message profile: `iso15118-2-dc` (default), `iso15118-2-ac`,
    /// `din70121-dc`, `iso15118-2-dc-ecog` (the `iso15118` package's DC
    /// sequence and timers), or `custom` (then `steps` is required).
    pub profile: Option<String>,
    /// Payment: `eim` (external identification, default) or `pnc`
    /// (Plug & Charge: PaymentDetails with the contract certificate chain; needs TLS).
    pub payment: Option<String>,
    /// TLS 1.2 (ISO 15118-2 only; default: on with `pnc`, off otherwise).
    pub tls: Option<bool>,
    /// Length of the charging loop (CurrentDemand / ChargingStatus), default 30 min.
    pub duration: Option<Dur>,
    /// Cycle of the charging loop: the next request no earlier than this after
    /// the previous one (default: 220 ms for DC, typical of captured vehicles;
    /// 1 s for AC).
    pub period: Option<Dur>,
    /// How long CableCheck and PreCharge keep answering "ongoing" (polled every
    /// `poll`); default 0: one exchange each.
    pub cable_check: Option<Dur>,
    pub pre_charge: Option<Dur>,
    /// Polling cycle of the ongoing loops (default 250 ms).
    pub poll: Option<Dur>,
    /// A missed deadline ends the session (default true).
    pub abort_on_miss: Option<bool>,
    /// Application-level retries per exchange (0–100, default 0; needs
    /// `abort_on_miss`).
    pub retries: Option<u32>,
    /// The charger's processing time per request (default 0).
    pub processing: Option<Dur>,
    /// Session start (connection request), default 0.
    pub start: Option<Dur>,
    /// Explicit steps (profile `custom`).
    pub steps: Option<Vec<StepSpec>>,
    /// TCP settings of the session's connection, over the preset's `tcp`.
    pub tcp: Option<TcpSpec>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepSpec {
    pub name: String,
    pub request: Bytes,
    pub response: Bytes,
    /// Deadline of each response (unset: none).
    pub timeout: Option<Dur>,
    pub repeats: Option<u32>,
    pub period: Option<Dur>,
}

/// Largest message the application may write (10 MB).
const MAX_MESSAGE_BYTES: u64 = 10_000_000;
/// Most exchanges one session may hold (a day of 10 ms cycles).
const MAX_EXCHANGES: u64 = 10_000_000;
/// Longest session loop, timeout or start accepted (one day).
const MAX_SESSION_NS: u64 = 86_400_000_000_000;
/// At most this many steps.
const MAX_STEPS: usize = 1000;
/// At most this many application-level retries per exchange.
const MAX_RETRIES: u32 = 100;

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// V2GTP header (ISO 15118-2 §7.8.3): version, inverse version, payload type, length.
pub const V2GTP_HEADER_BYTES: u64 = 8;

/// One message pair of a built-in profile: EXI body sizes (without the V2GTP
/// header) and the response timeout V2G_EVCC_Msg_Timeout.
#[derive(Clone, Copy, Debug)]
pub struct MessageDef {
    pub name: &'static str,
    pub request_exi: u64,
    pub response_exi: u64,
    pub timeout_ms: u64,
}

const fn m(name: &'static str, request_exi: u64, response_exi: u64, timeout_ms: u64) -> MessageDef {
    MessageDef {
        name,
        request_exi,
        response_exi,
        timeout_ms,
    }
}

/// The ISO 15118-2 messages: EXI body sizes as measured in captures of real
/// vehicles (docs/iso15118.md, "Message sizes", gives the source of each), and
/// V2G_EVCC_Msg_Timeout.
pub mod iso {
    use super::{m, MessageDef};
    pub const SUPPORTED_APP_PROTOCOL: MessageDef = m("SupportedAppProtocol", 68, 4, 2000);
    pub const SESSION_SETUP: MessageDef = m("SessionSetup", 14, 31, 2000);
    pub const SERVICE_DISCOVERY: MessageDef = m("ServiceDiscovery", 13, 20, 2000);
    pub const PAYMENT_SERVICE_SELECTION: MessageDef = m("PaymentServiceSelection", 16, 14, 2000);
    /// Plug & Charge only: the contract certificate chain (estimated).
    pub const PAYMENT_DETAILS: MessageDef = m("PaymentDetails", 1800, 40, 5000);
    pub const AUTHORIZATION: MessageDef = m("Authorization", 13, 15, 2000);
    /// Plug & Charge: signed (estimated).
    pub const AUTHORIZATION_PNC: MessageDef = m("Authorization", 300, 15, 2000);
    pub const CHARGE_PARAMETER_DISCOVERY_DC: MessageDef =
        m("ChargeParameterDiscovery", 33, 62, 2000);
    pub const CHARGE_PARAMETER_DISCOVERY_AC: MessageDef =
        m("ChargeParameterDiscovery", 32, 39, 2000);
    pub const CABLE_CHECK: MessageDef = m("CableCheck", 16, 19, 2000);
    pub const PRE_CHARGE: MessageDef = m("PreCharge", 24, 23, 2000);
    pub const POWER_DELIVERY: MessageDef = m("PowerDelivery", 21, 18, 5000);
    pub const CURRENT_DEMAND: MessageDef = m("CurrentDemand", 39, 58, 250);
    pub const CHARGING_STATUS: MessageDef = m("ChargingStatus", 13, 40, 2000);
    pub const WELDING_DETECTION: MessageDef = m("WeldingDetection", 16, 23, 2000);
    pub const SESSION_STOP: MessageDef = m("SessionStop", 14, 14, 2000);
}

/// DIN SPEC 70121 where it differs from ISO 15118-2 (sizes from captures;
/// PowerDelivery's timeout is 2 s there).
pub mod din {
    use super::{m, MessageDef};
    pub const SERVICE_PAYMENT_SELECTION: MessageDef = m("ServicePaymentSelection", 16, 14, 2000);
    pub const CONTRACT_AUTHENTICATION: MessageDef = m("ContractAuthentication", 13, 15, 2000);
    pub const CHARGE_PARAMETER_DISCOVERY: MessageDef = m("ChargeParameterDiscovery", 36, 64, 2000);
    pub const POWER_DELIVERY: MessageDef = m("PowerDelivery", 21, 18, 2000);
    pub const CURRENT_DEMAND: MessageDef = m("CurrentDemand", 38, 42, 250);
}

/// The `iso15118` package 0.31.2 (EcoG-io), as `vtlab study iso15118 --real`
/// captured it over the emulated cable (docs/study-iso15118.md, "The real
/// stack"): the EXI sizes of its ISO 15118-2 DC messages where they differ from
/// [`iso`], the repeats its EVCC and SECC simulators make, and its EVCC's timers.
/// Plug & Charge runs over TLS, so its sizes are bounded by the records
/// (5 + 16 + 16·⌈(EXI + 8 + 33)/16⌉ B): a 1973 B PaymentDetailsReq record holds
/// 1896–1911 B of EXI, its 101 B response 24–39 B.
pub mod ecog {
    use super::{m, MessageDef};
    /// The EVCC offers one protocol.
    pub const SUPPORTED_APP_PROTOCOL: MessageDef = m("SupportedAppProtocol", 36, 4, 2000);
    pub const SERVICE_DISCOVERY: MessageDef = m("ServiceDiscovery", 13, 36, 2000);
    pub const PAYMENT_DETAILS: MessageDef = m("PaymentDetails", 1904, 32, 5000);
    pub const CHARGE_PARAMETER_DISCOVERY: MessageDef = m("ChargeParameterDiscovery", 44, 53, 2000);
    pub const PRE_CHARGE: MessageDef = m("PreCharge", 23, 22, 2000);
    pub const POWER_DELIVERY: MessageDef = m("PowerDelivery", 20, 18, 5000);
    /// The first CurrentDemandReq: the EVCC's PowerDelivery state creates it with
    /// CHARGING_STATUS_REQ, 2 s (`evcc/states/iso15118_2_states.py`).
    pub const CURRENT_DEMAND_FIRST: MessageDef = m("CurrentDemand", 40, 53, 2000);
    /// Every later one: the CurrentDemand state uses POWER_DELIVERY_REQ, 5 s.
    pub const CURRENT_DEMAND: MessageDef = m("CurrentDemand", 40, 53, 5000);
    pub const WELDING_DETECTION: MessageDef = m("WeldingDetection", 16, 22, 2000);
    /// The SECC simulator answers the first CableCheck "ongoing"; the EVCC
    /// simulator repeats PreCharge until its counter reaches 5 and
    /// WeldingDetection until 3. All go back to back, without a polling period.
    pub const CABLE_CHECKS: u32 = 2;
    pub const PRE_CHARGES: u32 = 6;
    pub const WELDING_DETECTIONS: u32 = 4;
}

/// TLS 1.2 as ISO 15118-2 uses it (TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256,
/// P-256, server authentication only): the full handshake's four flights and
/// the record overhead (docs/iso15118.md, "TLS").
pub mod tls {
    /// ClientHello (captured).
    pub const CLIENT_HELLO: u64 = 135;
    /// ServerHello, Certificate (a three-certificate chain), ServerKeyExchange,
    /// ServerHelloDone (captured, less the CertificateRequest of -20).
    pub const SERVER_FLIGHT: u64 = 1727;
    /// ClientKeyExchange 75, ChangeCipherSpec 6, Finished 85 (computed).
    pub const CLIENT_FINISHED: u64 = 166;
    /// ChangeCipherSpec 6, Finished 85 (computed).
    pub const SERVER_FINISHED: u64 = 91;
    /// AES block size: the plaintext, its 32 B HMAC-SHA256 and at least one
    /// padding-length byte fill whole blocks.
    pub const BLOCK: u64 = 16;

    /// The handshake: two round trips, no message deadline (the ISO 15118-2
    /// sequence timers are not modelled).
    pub fn handshake() -> Vec<super::StepConf> {
        let exchange = |name: &str, request_bytes, response_bytes| super::StepConf {
            name: name.into(),
            request_bytes,
            response_bytes,
            timeout_ns: 0,
            repeats: 1,
            period_ns: 0,
        };
        vec![
            exchange("TlsHello", CLIENT_HELLO, SERVER_FLIGHT),
            exchange("TlsFinished", CLIENT_FINISHED, SERVER_FINISHED),
        ]
    }

    /// Bytes on the wire of `plaintext` bytes in one record: header 5,
    /// explicit IV 16, then the padded plaintext + MAC (RFC 5246 §6.2.3.2).
    pub fn record(plaintext: u64) -> u64 {
        5 + 16 + (plaintext + 32 + 1).div_ceil(BLOCK) * BLOCK
    }
}

impl SessionSpec {
    /// Resolve for `client` ↔ `server`, with the preset's TCP settings `base`.
    pub fn resolve(
        &self,
        path: &str,
        name: &str,
        client: &str,
        server: &str,
        base: Option<&TcpSpec>,
    ) -> Result<SessionConf, SpecError> {
        let f = |field: &str| format!("{path}.{field}");
        let tcp = super::tcp::resolve_over(base, self.tcp.as_ref(), &f("tcp"), "tcp")?;
        let seq = self.sequence(path)?;
        let processing = check_ns(&f("processing"), self.processing, 0, 0)?;
        let start = check_ns(&f("start"), self.start, 0, 0)?;
        if self.steps.is_some() && seq.profile != "custom" {
            return Err(SpecError::new(
                f("steps"),
                format!(
                    "explicit steps need profile = \"custom\" (profile is '{}')",
                    seq.profile
                ),
            ));
        }
        let mut steps = if seq.tls {
            tls::handshake()
        } else {
            Vec::new()
        };
        let energy_step = match seq.profile {
            "iso15118-2-dc" | "din70121-dc" => Some(seq.dc(&mut steps, path)?),
            "iso15118-2-dc-ecog" => Some(seq.ecog_dc(&mut steps, path)?),
            "iso15118-2-ac" => Some(seq.ac(&mut steps, path)?),
            "custom" => {
                let Some(list) = self.steps.as_ref() else {
                    return Err(SpecError::new(
                        f("steps"),
                        "profile = \"custom\" needs a list of steps".into(),
                    ));
                };
                let record = |b: u64| seq.record(b);
                for (i, s) in list.iter().enumerate() {
                    steps.push(custom_step(&format!("{path}.steps[{i}]"), s, &record)?);
                }
                None
            }
            other => {
                return Err(SpecError::new(
                    f("profile"),
                    format!(
                        "unknown session profile '{other}' (allowed: iso15118-2-dc, \
                         iso15118-2-ac, din70121-dc, iso15118-2-dc-ecog, custom)"
                    ),
                ))
            }
        };
        let conf = SessionConf {
            name: name.into(),
            profile: seq.profile.into(),
            client: client.into(),
            server: server.into(),
            start_ns: start,
            tcp,
            steps,
            abort_on_miss: self.abort_on_miss.unwrap_or(true),
            retries: self.retries(path)?,
            processing_ns: processing,
            energy_step,
        };
        conf.validate(path)?;
        Ok(conf)
    }

    /// The application-level retries, checked: at most [`MAX_RETRIES`], and only
    /// where a missed deadline would end the session.
    fn retries(&self, path: &str) -> Result<u32, SpecError> {
        let n = self.retries.unwrap_or(0);
        let field = format!("{path}.retries");
        check_range(field.clone(), u64::from(n), (0, u64::from(MAX_RETRIES)), "")?;
        if n > 0 && self.abort_on_miss == Some(false) {
            return Err(SpecError::new(
                field,
                "retries act only when a missed deadline ends the session \
                 (abort_on_miss = true)"
                    .into(),
            ));
        }
        Ok(n)
    }

    /// The profile, payment and TLS, and the timing of the loops.
    fn sequence(&self, path: &str) -> Result<Sequence<'_>, SpecError> {
        let f = |field: &str| format!("{path}.{field}");
        let profile = self.profile.as_deref().unwrap_or("iso15118-2-dc");
        let payment = self.payment.as_deref().unwrap_or("eim");
        if !matches!(payment, "eim" | "pnc") {
            return Err(SpecError::new(
                f("payment"),
                format!("unknown payment '{payment}' (allowed: eim, pnc)"),
            ));
        }
        let pnc = payment == "pnc";
        let iso = profile.starts_with("iso15118");
        let tls = self.tls.unwrap_or(pnc);
        if tls && !iso && profile != "custom" {
            return Err(SpecError::new(
                f("tls"),
                format!("{profile} has no TLS (DIN SPEC 70121 runs over plain TCP)"),
            ));
        }
        if pnc && !tls {
            return Err(SpecError::new(
                f("tls"),
                "Plug & Charge (payment = pnc) requires TLS".into(),
            ));
        }
        if pnc && !iso {
            return Err(SpecError::new(
                f("payment"),
                format!("{profile} has no Plug & Charge (allowed there: eim)"),
            ));
        }
        let ac = profile == "iso15118-2-ac";
        let default_period = if ac { 1_000_000_000 } else { 220_000_000 };
        Ok(Sequence {
            profile,
            pnc,
            tls,
            duration: check_ns(&f("duration"), self.duration, 1_800_000_000_000, 0)?,
            period: check_ns(&f("period"), self.period, default_period, 0)?,
            poll: check_ns(&f("poll"), self.poll, 250_000_000, 1_000_000)?,
            cable_check: check_ns(&f("cable_check"), self.cable_check, 0, 0)?,
            pre_charge: check_ns(&f("pre_charge"), self.pre_charge, 0, 0)?,
        })
    }
}

/// A built-in profile's settings: what its message sequence depends on.
struct Sequence<'a> {
    profile: &'a str,
    /// Plug & Charge.
    pnc: bool,
    tls: bool,
    /// Length and cycle of the charging loop, ns.
    duration: u64,
    period: u64,
    /// Polling cycle and length of CableCheck and PreCharge, ns.
    poll: u64,
    cable_check: u64,
    pre_charge: u64,
}

impl Sequence<'_> {
    /// Bytes on the wire of a message of `b` bytes (in a TLS record with TLS).
    fn record(&self, b: u64) -> u64 {
        if self.tls {
            tls::record(b)
        } else {
            b
        }
    }

    fn step(&self, d: MessageDef, repeats: u32, period_ns: u64) -> StepConf {
        StepConf {
            name: d.name.into(),
            request_bytes: self.record(V2GTP_HEADER_BYTES + d.request_exi),
            response_bytes: self.record(V2GTP_HEADER_BYTES + d.response_exi),
            timeout_ns: d.timeout_ms * 1_000_000,
            repeats,
            period_ns,
        }
    }

    /// Exchanges of the charging loop: `duration` at one per `cycle`.
    fn loop_count(&self, cycle: u64, path: &str) -> Result<u32, SpecError> {
        let n = if cycle == 0 {
            1
        } else {
            self.duration.div_ceil(cycle).max(1)
        };
        if n > MAX_EXCHANGES {
            return Err(SpecError::new(
                format!("{path}.duration"),
                format!("{n} exchanges (duration / period) is above the limit of {MAX_EXCHANGES}"),
            ));
        }
        Ok(n as u32)
    }

    /// Exchanges of a phase answered "ongoing" for `d` ns, polled every `poll`.
    fn ongoing(&self, d: u64) -> u32 {
        (d / self.poll) as u32 + 1
    }

    /// Identification and authorization, ISO 15118-2 (the first four
    /// messages, then payment).
    fn iso_opening(&self, steps: &mut Vec<StepConf>) {
        steps.push(self.step(iso::PAYMENT_SERVICE_SELECTION, 1, 0));
        if self.pnc {
            steps.push(self.step(iso::PAYMENT_DETAILS, 1, 0));
            steps.push(self.step(iso::AUTHORIZATION_PNC, 1, 0));
        } else {
            steps.push(self.step(iso::AUTHORIZATION, 1, 0));
        }
    }

    /// The DC sequence (ISO 15118-2 or DIN SPEC 70121); returns the index of
    /// the charging loop.
    fn dc(&self, steps: &mut Vec<StepConf>, path: &str) -> Result<u32, SpecError> {
        steps.push(self.step(iso::SUPPORTED_APP_PROTOCOL, 1, 0));
        steps.push(self.step(iso::SESSION_SETUP, 1, 0));
        steps.push(self.step(iso::SERVICE_DISCOVERY, 1, 0));
        let (power_delivery, current_demand) = if self.profile == "din70121-dc" {
            steps.push(self.step(din::SERVICE_PAYMENT_SELECTION, 1, 0));
            steps.push(self.step(din::CONTRACT_AUTHENTICATION, 1, 0));
            steps.push(self.step(din::CHARGE_PARAMETER_DISCOVERY, 1, 0));
            (din::POWER_DELIVERY, din::CURRENT_DEMAND)
        } else {
            self.iso_opening(steps);
            steps.push(self.step(iso::CHARGE_PARAMETER_DISCOVERY_DC, 1, 0));
            (iso::POWER_DELIVERY, iso::CURRENT_DEMAND)
        };
        let poll = self.poll;
        steps.push(self.step(iso::CABLE_CHECK, self.ongoing(self.cable_check), poll));
        steps.push(self.step(iso::PRE_CHARGE, self.ongoing(self.pre_charge), poll));
        steps.push(self.step(power_delivery, 1, 0));
        let energy_step = steps.len() as u32;
        let n = self.loop_count(self.period, path)?;
        steps.push(self.step(current_demand, n, self.period));
        steps.push(self.step(power_delivery, 1, 0));
        steps.push(self.step(iso::WELDING_DETECTION, 1, 0));
        steps.push(self.step(iso::SESSION_STOP, 1, 0));
        Ok(energy_step)
    }

    /// The DC sequence of the `iso15118` package's simulators ([`ecog`]);
    /// returns the index of the charging loop.
    fn ecog_dc(&self, steps: &mut Vec<StepConf>, path: &str) -> Result<u32, SpecError> {
        steps.push(self.step(ecog::SUPPORTED_APP_PROTOCOL, 1, 0));
        steps.push(self.step(iso::SESSION_SETUP, 1, 0));
        steps.push(self.step(ecog::SERVICE_DISCOVERY, 1, 0));
        steps.push(self.step(iso::PAYMENT_SERVICE_SELECTION, 1, 0));
        if self.pnc {
            steps.push(self.step(ecog::PAYMENT_DETAILS, 1, 0));
            steps.push(self.step(iso::AUTHORIZATION_PNC, 1, 0));
        } else {
            steps.push(self.step(iso::AUTHORIZATION, 1, 0));
        }
        steps.push(self.step(ecog::CHARGE_PARAMETER_DISCOVERY, 1, 0));
        let cable_checks = ecog::CABLE_CHECKS.max(self.ongoing(self.cable_check));
        steps.push(self.step(iso::CABLE_CHECK, cable_checks, 0));
        let pre_charges = ecog::PRE_CHARGES.max(self.ongoing(self.pre_charge));
        steps.push(self.step(ecog::PRE_CHARGE, pre_charges, 0));
        steps.push(self.step(ecog::POWER_DELIVERY, 1, 0));
        let energy_step = steps.len() as u32;
        let n = self.loop_count(self.period, path)?;
        steps.push(self.step(ecog::CURRENT_DEMAND_FIRST, 1, self.period));
        if n > 1 {
            steps.push(self.step(ecog::CURRENT_DEMAND, n - 1, self.period));
        }
        steps.push(self.step(ecog::POWER_DELIVERY, 1, 0));
        steps.push(self.step(ecog::WELDING_DETECTION, ecog::WELDING_DETECTIONS, 0));
        steps.push(self.step(iso::SESSION_STOP, 1, 0));
        Ok(energy_step)
    }

    /// The AC sequence of ISO 15118-2; returns the index of the charging loop.
    fn ac(&self, steps: &mut Vec<StepConf>, path: &str) -> Result<u32, SpecError> {
        steps.push(self.step(iso::SUPPORTED_APP_PROTOCOL, 1, 0));
        steps.push(self.step(iso::SESSION_SETUP, 1, 0));
        steps.push(self.step(iso::SERVICE_DISCOVERY, 1, 0));
        self.iso_opening(steps);
        steps.push(self.step(iso::CHARGE_PARAMETER_DISCOVERY_AC, 1, 0));
        steps.push(self.step(iso::POWER_DELIVERY, 1, 0));
        let energy_step = steps.len() as u32;
        let n = self.loop_count(self.period, path)?;
        steps.push(self.step(iso::CHARGING_STATUS, n, self.period));
        steps.push(self.step(iso::POWER_DELIVERY, 1, 0));
        steps.push(self.step(iso::SESSION_STOP, 1, 0));
        Ok(energy_step)
    }
}

impl Validate for SessionConf {
    /// The start, the TCP settings, and the number of steps and exchanges.
    fn validate(&self, path: &str) -> Result<(), SpecError> {
        check_range(
            format!("{path}.start_ns"),
            self.start_ns,
            (0, MAX_TIME_NS),
            " ns",
        )?;
        self.tcp.validate(&format!("{path}.tcp"))?;
        check_range(
            format!("{path}.retries"),
            u64::from(self.retries),
            (0, u64::from(MAX_RETRIES)),
            "",
        )?;
        if self.steps.is_empty() || self.steps.len() > MAX_STEPS {
            return Err(SpecError::new(
                format!("{path}.steps"),
                format!("{} steps is outside [1, {MAX_STEPS}]", self.steps.len()),
            ));
        }
        let exchanges: u64 = self.steps.iter().map(|s| u64::from(s.repeats)).sum();
        if exchanges > MAX_EXCHANGES {
            return Err(SpecError::new(
                format!("{path}.steps"),
                format!("{exchanges} exchanges in all is above the limit of {MAX_EXCHANGES}"),
            ));
        }
        Ok(())
    }
}

fn custom_step(
    path: &str,
    s: &StepSpec,
    record: &dyn Fn(u64) -> u64,
) -> Result<StepConf, SpecError> {
    if s.name.is_empty() {
        return Err(SpecError::new(
            format!("{path}.name"),
            "must not be empty".into(),
        ));
    }
    for (field, v) in [("request", s.request.0), ("response", s.response.0)] {
        if !(1..=MAX_MESSAGE_BYTES).contains(&v) {
            return Err(SpecError::new(
                format!("{path}.{field}"),
                format!("{v} bytes is outside [1, {MAX_MESSAGE_BYTES}]"),
            ));
        }
    }
    let repeats = s.repeats.unwrap_or(1);
    if !(1..=MAX_EXCHANGES as u32).contains(&repeats) {
        return Err(SpecError::new(
            format!("{path}.repeats"),
            format!("{repeats} is outside [1, {MAX_EXCHANGES}]"),
        ));
    }
    Ok(StepConf {
        name: s.name.clone(),
        request_bytes: record(s.request.0),
        response_bytes: record(s.response.0),
        timeout_ns: check_ns(&format!("{path}.timeout"), s.timeout, 0, 1_000_000)?,
        repeats,
        period_ns: check_ns(&format!("{path}.period"), s.period, 0, 0)?,
    })
}

/// A duration setting with its default, within [lo, one day] (0 always allowed
/// when it is the default).
fn check_ns(path: &str, v: Option<Dur>, default: u64, lo: u64) -> Result<u64, SpecError> {
    let Some(Dur(x)) = v else {
        return Ok(default);
    };
    if x < lo || x > MAX_SESSION_NS {
        return Err(SpecError::new(
            path,
            format!("{x} ns is outside [{lo}, {MAX_SESSION_NS}] ns (at most one day)"),
        ));
    }
    Ok(x)
}

#[cfg(test)]
mod tests {
    use super::super::resolve_value;
    use super::*;
    use serde_json::json;

    fn session(s: serde_json::Value) -> Result<SessionConf, SpecError> {
        resolve_value(json!({"preset": "v2g", "session": s})).map(|mut sc| sc.sessions.remove(0))
    }

    #[test]
    fn tls_record_overhead_by_hand() {
        // A 47 B CurrentDemandReq (39 EXI + 8 V2GTP): 47 + 32 MAC + 1 = 80 B,
        // already 5 blocks; + 5 header + 16 IV = 101 B.
        assert_eq!(tls::record(47), 101);
        // 48 B: 81 B round up to 96; 117 B.
        assert_eq!(tls::record(48), 117);
    }

    #[test]
    fn ecog_profile_has_the_captured_sequence_sizes_and_timers() {
        let c = session(json!({"profile": "iso15118-2-dc-ecog", "duration": "2s"})).unwrap();
        let rows: Vec<(&str, u32, u64, u64, u64)> = c
            .steps
            .iter()
            .map(|s| {
                let timeout_ms = s.timeout_ns / 1_000_000;
                (
                    s.name.as_str(),
                    s.repeats,
                    s.request_bytes,
                    s.response_bytes,
                    timeout_ms,
                )
            })
            .collect();
        // Wire sizes as captured (docs/study-iso15118.md, "Message sizes"); the
        // loop: ⌈2 s / 220 ms⌉ = 10 exchanges, the first with the EVCC's 2 s timer,
        // the other 9 with its 5 s one.
        assert_eq!(
            rows,
            [
                ("SupportedAppProtocol", 1, 44, 12, 2000),
                ("SessionSetup", 1, 22, 39, 2000),
                ("ServiceDiscovery", 1, 21, 44, 2000),
                ("PaymentServiceSelection", 1, 24, 22, 2000),
                ("Authorization", 1, 21, 23, 2000),
                ("ChargeParameterDiscovery", 1, 52, 61, 2000),
                ("CableCheck", 2, 24, 27, 2000),
                ("PreCharge", 6, 31, 30, 2000),
                ("PowerDelivery", 1, 28, 26, 5000),
                ("CurrentDemand", 1, 48, 61, 2000),
                ("CurrentDemand", 9, 48, 61, 5000),
                ("PowerDelivery", 1, 28, 26, 5000),
                ("WeldingDetection", 4, 24, 30, 2000),
                ("SessionStop", 1, 22, 22, 2000),
            ]
        );
        assert_eq!(c.energy_step, Some(9));
        // Over TLS the PaymentDetailsReq takes one 1973 B record, as captured:
        // 5 + 16 + 16·⌈(1904 + 8 + 33)/16⌉ = 1973.
        let p = session(json!({"profile": "iso15118-2-dc-ecog", "payment": "pnc"})).unwrap();
        let pd = p.steps.iter().find(|s| s.name == "PaymentDetails").unwrap();
        assert_eq!((pd.request_bytes, pd.response_bytes), (1973, 101));
    }

    #[test]
    fn dc_profile_sequence_and_loop_length() {
        let c = session(json!({})).unwrap();
        let names: Vec<&str> = c.steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "SupportedAppProtocol",
                "SessionSetup",
                "ServiceDiscovery",
                "PaymentServiceSelection",
                "Authorization",
                "ChargeParameterDiscovery",
                "CableCheck",
                "PreCharge",
                "PowerDelivery",
                "CurrentDemand",
                "PowerDelivery",
                "WeldingDetection",
                "SessionStop"
            ]
        );
        let cd = &c.steps[9];
        // 30 min at the 220 ms default period: ⌈1800 / 0.22⌉ = 8182 exchanges.
        assert_eq!(
            (cd.repeats, cd.period_ns, cd.timeout_ns),
            (8182, 220_000_000, 250_000_000)
        );
        // 39 B EXI + 8 B V2GTP, no TLS.
        assert_eq!((cd.request_bytes, cd.response_bytes), (47, 66));
        assert_eq!(c.energy_step, Some(9));
        assert!(c.abort_on_miss);
    }

    #[test]
    fn tls_adds_the_handshake_and_record_overhead() {
        let c = session(json!({"payment": "pnc"})).unwrap();
        assert_eq!(c.steps[0].name, "TlsHello");
        assert_eq!(
            (c.steps[0].request_bytes, c.steps[0].response_bytes),
            (135, 1727)
        );
        assert_eq!(c.steps[1].timeout_ns, 0);
        let cd = c.steps.iter().find(|s| s.name == "CurrentDemand").unwrap();
        assert_eq!(cd.request_bytes, 101);
        assert!(c.steps.iter().any(|s| s.name == "PaymentDetails"));
    }

    #[test]
    fn bad_settings_name_the_field() {
        let e = session(json!({"profile": "din70121-dc", "tls": true})).unwrap_err();
        assert_eq!(e.path, "session.tls");
        let e = session(json!({"payment": "pnc", "tls": false})).unwrap_err();
        assert_eq!(e.path, "session.tls");
        let e = session(json!({"profile": "iso15118-20"})).unwrap_err();
        assert!(
            e.message.contains("allowed: iso15118-2-dc"),
            "{}",
            e.message
        );
        let e = session(json!({"profile": "custom"})).unwrap_err();
        assert_eq!(e.path, "session.steps");
        let e = session(json!({"duration": "2d"})).unwrap_err();
        assert_eq!(e.path, "session.duration");
        let e = session(json!({"profile": "custom", "steps": [
            {"name": "A", "request": 0, "response": 10}]}))
        .unwrap_err();
        assert_eq!(e.path, "session.steps[0].request");
        let e = session(json!({"retries": 101})).unwrap_err();
        assert_eq!(e.path, "session.retries");
        let e = session(json!({"retries": 1, "abort_on_miss": false})).unwrap_err();
        assert_eq!(e.path, "session.retries");
        assert_eq!(session(json!({"retries": 2})).unwrap().retries, 2);
    }
}
