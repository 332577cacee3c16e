//! The application of a request/response session (ISO 15118-style): the
//! vehicle writes a request, the charger answers once the whole request is
//! in, the vehicle times the response against its deadline and writes the
//! next request. Byte counting on each direction's in-order stream finds the
//! message boundaries, as an application reading a TCP socket does.
//!
//! Timing rules (docs/iso15118.md): the first request is written when the
//! connection is established at the vehicle; a response is written
//! `processing` after its request is whole at the charger; the next request
//! is written at max(response arrival, previous request + the step's period);
//! a response later than its deadline is a miss, which ends the session when
//! `abort_on_miss` (the vehicle gives up at the deadline) unless the vehicle
//! still has `retries` for the exchange: then it writes the request again at
//! the deadline and waits another timeout for the first response to arrive
//! (the charger answers both copies; the vehicle discards the second answer).

use std::collections::VecDeque;

use crate::engine::Time;
use crate::metrics::{MessageRow, SessionResult};
use crate::sim::plan::PlannedSession;

/// What the session asks the simulation to do.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum AppAction {
    /// Write this many bytes on the request direction (client).
    Request(u64),
    /// Write this many bytes on the response direction (server).
    Response(u64),
}

pub(crate) struct SessionApp {
    pub(crate) plan: PlannedSession,
    // ---- the vehicle (client)
    connected: bool,
    /// The request outstanding or next to write: step and repeat.
    step: usize,
    repeat: u32,
    /// Messages written so far (the index of the next).
    index: u64,
    /// When the outstanding request was last written (a retry writes it again).
    sent_at: Option<Time>,
    /// When the outstanding request was first written (response time, period).
    first_sent: Option<Time>,
    /// Retries spent on the outstanding exchange.
    retried: u32,
    /// Response bytes to discard once the outstanding exchange is answered:
    /// the answers to its retried copies.
    discard: u64,
    /// The response is whole when this many response bytes are in.
    response_end: u64,
    next_request_at: Option<Time>,
    // ---- the charger (server)
    /// The requests written and not yet answered, in stream order: where each
    /// ends in the request stream and the bytes of its response.
    srv_queue: VecDeque<(u64, u64)>,
    /// Request bytes written so far.
    written: u64,
    /// Responses being prepared: (write time, bytes).
    preparing: VecDeque<(Time, u64)>,
    // ---- outcome
    pub(crate) messages: Vec<MessageRow>,
    /// When and why it ended (an empty reason: completed).
    ended: Option<(Time, &'static str)>,
    failed_message: String,
    energy_at: Option<Time>,
}

impl SessionApp {
    pub(crate) fn new(plan: PlannedSession) -> Self {
        SessionApp {
            connected: false,
            step: 0,
            repeat: 0,
            index: 0,
            sent_at: None,
            first_sent: None,
            retried: 0,
            discard: 0,
            response_end: 0,
            next_request_at: None,
            srv_queue: VecDeque::new(),
            written: 0,
            preparing: VecDeque::new(),
            messages: Vec::new(),
            ended: None,
            failed_message: String::new(),
            energy_at: None,
            plan,
        }
    }

    pub(crate) fn is_ended(&self) -> bool {
        self.ended.is_some()
    }

    /// When the session completed (every exchange answered), if it did.
    pub(crate) fn completed_at(&self) -> Option<Time> {
        match self.ended {
            Some((t, "")) => Some(t),
            _ => None,
        }
    }

    /// Why the session ended before completing, if it did (`deadline`, or
    /// the TCP give-up of one of its directions).
    pub(crate) fn abort_reason(&self) -> Option<&'static str> {
        self.ended.and_then(|(_, r)| (!r.is_empty()).then_some(r))
    }

    /// The next time the session must act (a request to write, a deadline, a
    /// response prepared).
    pub(crate) fn deadline(&self) -> Option<Time> {
        if self.ended.is_some() {
            return None;
        }
        let due = self.due();
        [
            self.next_request_at,
            due,
            self.preparing.front().map(|p| p.0),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// When the outstanding request's response is due, if the session gives up then.
    fn due(&self) -> Option<Time> {
        let s = &self.plan.steps[self.step.min(self.plan.steps.len() - 1)];
        match self.sent_at {
            Some(t) if self.plan.abort_on_miss && s.timeout_ns > 0 => {
                Some(t + crate::engine::Duration(s.timeout_ns))
            }
            _ => None,
        }
    }

    /// The connection is established at the vehicle: write the first request.
    pub(crate) fn on_connected(&mut self, now: Time, out: &mut Vec<AppAction>) {
        if self.connected || self.ended.is_some() {
            return;
        }
        self.connected = true;
        self.write_request(now, out);
    }

    fn write_request(&mut self, now: Time, out: &mut Vec<AppAction>) {
        let s = &self.plan.steps[self.step];
        if self.plan.energy_step == Some(self.step as u32) && self.energy_at.is_none() {
            self.energy_at = Some(now);
        }
        self.sent_at = Some(now);
        self.first_sent = Some(now);
        self.response_end += s.response_bytes;
        self.next_request_at = None;
        let (request, response) = (s.request_bytes, s.response_bytes);
        self.send(request, response, out);
    }

    /// Write a request of `request` bytes whose answer is `response` bytes.
    fn send(&mut self, request: u64, response: u64, out: &mut Vec<AppAction>) {
        self.written += request;
        self.srv_queue.push_back((self.written, response));
        out.push(AppAction::Request(request));
    }

    /// The vehicle's timer expired with retries left: write the outstanding
    /// request again; its answer (after the first one) will be discarded.
    fn retry(&mut self, now: Time, out: &mut Vec<AppAction>) {
        let s = &self.plan.steps[self.step];
        let (request, response) = (s.request_bytes, s.response_bytes);
        self.retried += 1;
        self.sent_at = Some(now);
        self.discard += response;
        self.send(request, response, out);
    }

    /// In-order request bytes at the charger are now `received`.
    pub(crate) fn on_requests(&mut self, now: Time, received: u64, out: &mut Vec<AppAction>) {
        while self.ended.is_none() {
            let Some(&(end, bytes)) = self.srv_queue.front() else {
                break;
            };
            if received < end {
                break;
            }
            self.srv_queue.pop_front();
            if self.plan.processing.0 == 0 && self.preparing.is_empty() {
                out.push(AppAction::Response(bytes));
            } else {
                self.preparing
                    .push_back((now + self.plan.processing, bytes));
            }
        }
    }

    /// In-order response bytes at the vehicle are now `received`.
    pub(crate) fn on_responses(&mut self, now: Time, received: u64, out: &mut Vec<AppAction>) {
        let (Some(sent), Some(first)) = (self.sent_at, self.first_sent) else {
            return;
        };
        if self.ended.is_some() || received < self.response_end {
            return;
        }
        let s = &self.plan.steps[self.step];
        let (name, timeout, period, repeats) =
            (s.name.clone(), s.timeout_ns, s.period_ns, s.repeats);
        // A miss: later than the first copy's deadline; late: later than the
        // last copy's (the only miss that ends a session with retries).
        let missed = timeout > 0 && (now - first).0 > timeout;
        let late = timeout > 0 && (now - sent).0 > timeout;
        self.record(first, Some(now), &name, timeout, missed);
        self.sent_at = None;
        self.first_sent = None;
        self.retried = 0;
        self.response_end += std::mem::take(&mut self.discard);
        if late && self.plan.abort_on_miss {
            // A response exactly at its deadline is on time; later ones were
            // given up at the deadline by `on_timer`, so this is unreachable
            // unless the timer and the arrival coincide.
            self.end(now, "deadline", &name);
            return;
        }
        self.repeat += 1;
        if self.repeat == repeats {
            self.repeat = 0;
            self.step += 1;
        }
        if self.step == self.plan.steps.len() {
            self.end(now, "", "");
            return;
        }
        let at = (first + crate::engine::Duration(period)).max(now);
        if at <= now {
            self.write_request(now, out);
        } else {
            self.next_request_at = Some(at);
        }
    }

    /// The session's timer: write a request, give up on a late response, or
    /// write a prepared response.
    pub(crate) fn on_timer(&mut self, now: Time, out: &mut Vec<AppAction>) {
        if self.ended.is_some() {
            return;
        }
        if let Some(due) = self.due() {
            if now >= due && self.retried < self.plan.retries {
                self.retry(now, out);
            } else if now >= due {
                let s = &self.plan.steps[self.step];
                let (name, timeout) = (s.name.clone(), s.timeout_ns);
                let sent = self.first_sent.unwrap_or(now);
                self.record(sent, None, &name, timeout, true);
                self.end(now, "deadline", &name);
                return;
            }
        }
        while let Some(&(t, bytes)) = self.preparing.front() {
            if t > now {
                break;
            }
            self.preparing.pop_front();
            out.push(AppAction::Response(bytes));
        }
        if self.next_request_at.is_some_and(|t| t <= now) {
            self.write_request(now, out);
        }
    }

    /// The connection failed (`reason`: the TCP give-up) or the run ended.
    pub(crate) fn end(&mut self, now: Time, reason: &'static str, message: &str) {
        if self.ended.is_none() {
            self.ended = Some((now, reason));
            self.failed_message = message.to_owned();
            self.next_request_at = None;
            self.preparing.clear();
        }
    }

    /// The name of the step whose request is outstanding or next.
    pub(crate) fn current_step(&self) -> &str {
        self.plan
            .steps
            .get(self.step)
            .map_or("", |s| s.name.as_str())
    }

    fn record(&mut self, sent: Time, at: Option<Time>, name: &str, timeout: u64, missed: bool) {
        let start = self.plan.start;
        self.messages.push(MessageRow {
            session: self.plan.name.clone(),
            index: self.index,
            message: name.to_owned(),
            request_s: (sent - start).as_secs_f64(),
            response_s: at.map_or(f64::NAN, |t| (t - start).as_secs_f64()),
            response_time_s: at.map_or(f64::NAN, |t| (t - sent).as_secs_f64()),
            deadline_s: if timeout > 0 {
                timeout as f64 * 1e-9
            } else {
                f64::INFINITY
            },
            missed,
        });
        self.index += 1;
    }

    /// The session's row; `end` is when the run stopped, `reason` why, for a
    /// session still running then.
    pub(crate) fn result(&self, end: Time, reason: &str) -> SessionResult {
        let (ended_at, abort) = match self.ended {
            Some((t, r)) => (t, r.to_owned()),
            None => (end, reason.to_owned()),
        };
        let completed = self.ended.as_ref().is_some_and(|(_, r)| r.is_empty());
        let start = self.plan.start;
        let times = |filter: &dyn Fn(&MessageRow) -> bool| -> Vec<f64> {
            let mut v: Vec<f64> = self
                .messages
                .iter()
                .filter(|m| filter(m) && !m.response_time_s.is_nan())
                .map(|m| m.response_time_s)
                .collect();
            v.sort_by(f64::total_cmp);
            v
        };
        let all = times(&|_| true);
        let energy_name = self
            .plan
            .energy_step
            .and_then(|k| self.plan.steps.get(k as usize))
            .map(|s| s.name.clone());
        let looped = times(&|m| Some(&m.message) == energy_name.as_ref());
        let energy_s = self
            .energy_at
            .map_or(0.0, |t| (ended_at.max(t) - t).as_secs_f64());
        SessionResult {
            session: self.plan.name.clone(),
            profile: self.plan.profile.clone(),
            cc: self.plan.cc.clone(),
            tcp_profile: self.plan.tcp_profile,
            completed,
            abort_reason: if completed { String::new() } else { abort },
            failed_message: if completed {
                String::new()
            } else if self.failed_message.is_empty() {
                self.current_step().to_owned()
            } else {
                self.failed_message.clone()
            },
            messages: self.messages.len() as u64,
            deadline_misses: self.messages.iter().filter(|m| m.missed).count() as u64,
            response_p50_s: quantile(&all, 0.5),
            response_p99_s: quantile(&all, 0.99),
            response_p999_s: quantile(&all, 0.999),
            response_max_s: all.last().copied().unwrap_or(f64::NAN),
            loop_p99_s: quantile(&looped, 0.99),
            loop_p999_s: quantile(&looped, 0.999),
            time_to_energy_s: self
                .energy_at
                .map_or(f64::NAN, |t| (t - start).as_secs_f64()),
            energy_s,
            session_s: (ended_at.max(start) - start).as_secs_f64(),
        }
    }
}

/// The nearest-rank `q`-quantile of sorted values: the smallest value with at
/// least a fraction `q` of the values at or below it; NaN when empty.
pub(crate) fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Duration;
    use crate::spec::StepConf;

    fn step(
        name: &str,
        req: u64,
        resp: u64,
        timeout_ms: u64,
        repeats: u32,
        period_ms: u64,
    ) -> StepConf {
        StepConf {
            name: name.into(),
            request_bytes: req,
            response_bytes: resp,
            timeout_ns: timeout_ms * 1_000_000,
            repeats,
            period_ns: period_ms * 1_000_000,
        }
    }

    fn app(steps: Vec<StepConf>, abort: bool, processing_ms: u64) -> SessionApp {
        retrying(steps, abort, processing_ms, 0)
    }

    fn retrying(steps: Vec<StepConf>, abort: bool, processing_ms: u64, retries: u32) -> SessionApp {
        SessionApp::new(PlannedSession {
            name: "s".into(),
            profile: "custom".into(),
            cc: "newreno".into(),
            tcp_profile: "ns3",
            steps,
            abort_on_miss: abort,
            retries,
            processing: Duration(processing_ms * 1_000_000),
            energy_step: Some(1),
            start: Time::ZERO,
            requests: 0,
            responses: 1,
        })
    }

    const MS: u64 = 1_000_000;

    #[test]
    fn requests_follow_responses_and_periods_in_order() {
        let mut a = app(
            vec![step("A", 10, 20, 2000, 1, 0), step("B", 5, 7, 250, 3, 100)],
            true,
            0,
        );
        let mut out = vec![];
        a.on_connected(Time(MS), &mut out);
        assert_eq!(out, vec![AppAction::Request(10)]);
        out.clear();
        // The charger answers only a whole request: 9 of 10 bytes are not enough.
        a.on_requests(Time(2 * MS), 9, &mut out);
        assert!(out.is_empty());
        a.on_requests(Time(2 * MS), 10, &mut out);
        assert_eq!(out, vec![AppAction::Response(20)]);
        out.clear();
        // Response whole at 3 ms: A took 2 ms; B (no period before it) follows at once.
        a.on_responses(Time(3 * MS), 20, &mut out);
        assert_eq!(out, vec![AppAction::Request(5)]);
        out.clear();
        // B's response after 1 ms; the next B waits for its 100 ms period: 3 + 100 = 103 ms.
        a.on_requests(Time(3 * MS), 15, &mut out);
        a.on_responses(Time(4 * MS), 27, &mut out);
        assert_eq!(out, vec![AppAction::Response(7)]);
        out.clear();
        assert_eq!(a.deadline(), Some(Time(103 * MS)));
        a.on_timer(Time(103 * MS), &mut out);
        assert_eq!(out, vec![AppAction::Request(5)]);
        let r = a.result(Time(200 * MS), "stop_time");
        assert!(!r.completed);
        assert_eq!(r.abort_reason, "stop_time");
        assert_eq!(r.messages, 2);
        // Energy flows from the first B request, written at 3 ms.
        assert_eq!(r.time_to_energy_s, 0.003);
        let times: Vec<f64> = a.messages.iter().map(|m| m.response_time_s).collect();
        assert_eq!(times, vec![0.002, 0.001]);
    }

    #[test]
    fn a_late_response_ends_the_session_at_its_deadline() {
        let mut a = app(vec![step("CD", 10, 10, 250, 5, 0)], true, 0);
        let mut out = vec![];
        a.on_connected(Time(0), &mut out);
        // Written at 0: due at 250 ms; the session gives up then.
        assert_eq!(a.deadline(), Some(Time(250 * MS)));
        out.clear();
        a.on_timer(Time(250 * MS), &mut out);
        assert!(out.is_empty() && a.is_ended());
        let r = a.result(Time(999 * MS), "horizon");
        assert_eq!(
            (r.abort_reason.as_str(), r.failed_message.as_str()),
            ("deadline", "CD")
        );
        assert_eq!(r.deadline_misses, 1);
        assert_eq!(r.session_s, 0.25);
        // A response arriving afterwards changes nothing.
        a.on_responses(Time(300 * MS), 10, &mut out);
        assert!(out.is_empty());
        assert_eq!(a.messages.len(), 1);
    }

    #[test]
    fn without_abort_a_late_response_is_counted_and_the_session_goes_on() {
        let mut a = app(vec![step("CD", 10, 10, 250, 2, 0)], false, 0);
        let mut out = vec![];
        a.on_connected(Time(0), &mut out);
        assert_eq!(a.deadline(), None);
        out.clear();
        a.on_responses(Time(1250 * MS), 10, &mut out);
        assert_eq!(out, vec![AppAction::Request(10)]);
        a.on_responses(Time(1260 * MS), 20, &mut out);
        let r = a.result(Time(2000 * MS), "");
        assert!(r.completed);
        assert_eq!(r.deadline_misses, 1);
        // Nearest rank: p50 of {0.01, 1.25} is the first.
        assert_eq!(r.response_p50_s, 0.01);
        assert_eq!(r.response_max_s, 1.25);
    }

    #[test]
    fn a_retry_waits_another_timeout_and_the_first_answer_counts() {
        let mut a = retrying(vec![step("CD", 10, 10, 250, 2, 0)], true, 0, 1);
        let mut out = vec![];
        a.on_connected(Time(0), &mut out);
        out.clear();
        // No answer by 250 ms: the request is written again, due 250 ms later.
        a.on_timer(Time(250 * MS), &mut out);
        assert_eq!(out, vec![AppAction::Request(10)]);
        assert!(!a.is_ended());
        assert_eq!(a.deadline(), Some(Time(500 * MS)));
        out.clear();
        // Both copies reach the charger (20 bytes): it answers each.
        a.on_requests(Time(260 * MS), 20, &mut out);
        assert_eq!(out, vec![AppAction::Response(10), AppAction::Response(10)]);
        out.clear();
        // The first answer (10 bytes) completes the exchange 270 ms after the
        // first copy: a miss of the first deadline, within the retry's. The next
        // request follows at once (period 0).
        a.on_responses(Time(270 * MS), 10, &mut out);
        assert_eq!(out, vec![AppAction::Request(10)]);
        out.clear();
        // The second answer is discarded: 20 bytes do not complete the next exchange.
        a.on_responses(Time(271 * MS), 20, &mut out);
        assert!(out.is_empty());
        // The charger sees the third request at 30 bytes; its answer ends at 30.
        a.on_requests(Time(272 * MS), 30, &mut out);
        assert_eq!(out, vec![AppAction::Response(10)]);
        a.on_responses(Time(273 * MS), 30, &mut out);
        let r = a.result(Time(999 * MS), "horizon");
        assert!(r.completed);
        assert_eq!((r.messages, r.deadline_misses), (2, 1));
        let times: Vec<f64> = a.messages.iter().map(|m| m.response_time_s).collect();
        assert_eq!(times, vec![0.27, 0.003]);
    }

    #[test]
    fn the_session_ends_when_the_retries_are_spent() {
        let mut a = retrying(vec![step("CD", 10, 10, 250, 1, 0)], true, 0, 1);
        let mut out = vec![];
        a.on_connected(Time(0), &mut out);
        a.on_timer(Time(250 * MS), &mut out);
        assert!(!a.is_ended());
        // The retry's deadline, 500 ms: given up; the row counts from the first copy.
        a.on_timer(Time(500 * MS), &mut out);
        assert!(a.is_ended());
        let r = a.result(Time(999 * MS), "horizon");
        assert_eq!(r.abort_reason, "deadline");
        assert_eq!(r.session_s, 0.5);
        assert_eq!(a.messages[0].request_s, 0.0);
        assert!(a.messages[0].missed);
    }

    #[test]
    fn processing_delays_the_response() {
        let mut a = app(vec![step("A", 10, 20, 2000, 1, 0)], true, 5);
        let mut out = vec![];
        a.on_connected(Time(0), &mut out);
        out.clear();
        a.on_requests(Time(MS), 10, &mut out);
        assert!(out.is_empty());
        assert_eq!(a.deadline(), Some(Time(6 * MS)));
        a.on_timer(Time(6 * MS), &mut out);
        assert_eq!(out, vec![AppAction::Response(20)]);
    }

    #[test]
    fn nearest_rank_quantiles() {
        let v: Vec<f64> = (1..=1000).map(f64::from).collect();
        // ceil(0.99 · 1000) = 990th value; ceil(0.999 · 1000) = 999th.
        assert_eq!(quantile(&v, 0.99), 990.0);
        assert_eq!(quantile(&v, 0.999), 999.0);
        assert_eq!(quantile(&v, 0.5), 500.0);
        assert!(quantile(&[], 0.5).is_nan());
    }
}
