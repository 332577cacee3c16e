//! BBR's windowed max filter of the delivery rate.

/// Windowed maximum over round counts: Kathleen Nichols' three-sample
/// algorithm (Linux `lib/win_minmax.c`, ns-3 `WindowedFilter`).
#[derive(Clone, Copy, Debug)]
pub(super) struct MaxFilter {
    s: [(f64, u64); 3],
    /// ns-3: a value that means empty (the first update resets).
    zero: f64,
    ns3: bool,
}

impl MaxFilter {
    pub(super) fn new(value: f64, t: u64, ns3: bool) -> Self {
        MaxFilter {
            s: [(value, t); 3],
            zero: value,
            ns3,
        }
    }

    pub(super) fn best(&self) -> f64 {
        self.s[0].0
    }

    pub(super) fn update(&mut self, v: f64, t: u64, win: u64) {
        let reset = if self.ns3 {
            self.s[0].0 == self.zero || v >= self.s[0].0
        } else {
            v >= self.s[0].0
        };
        if reset || t - self.s[2].1 > win {
            self.s = [(v, t); 3];
            return;
        }
        if v >= self.s[1].0 {
            self.s[1] = (v, t);
            self.s[2] = (v, t);
        } else if v >= self.s[2].0 {
            self.s[2] = (v, t);
        }
        let dt = t - self.s[0].1;
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = (v, t);
            if t - self.s[0].1 > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                if !self.ns3 {
                    self.s[2] = (v, t);
                }
            }
        } else if self.ns3 {
            if self.s[1].0 == self.s[0].0 && t - self.s[1].1 > win / 4 {
                self.s[1] = (v, t);
                self.s[2] = (v, t);
            } else if self.s[2].0 == self.s[1].0 && t - self.s[2].1 > win / 2 {
                self.s[2] = (v, t);
            }
        } else if self.s[1].1 == self.s[0].1 && dt > win / 4 {
            self.s[1] = (v, t);
            self.s[2] = (v, t);
        } else if self.s[2].1 == self.s[1].1 && dt > win / 2 {
            self.s[2] = (v, t);
        }
    }
}
