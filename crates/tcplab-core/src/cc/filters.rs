//! Small reusable estimators for congestion-control algorithms: running
//! minimum/maximum, EWMA low-pass filters (single, Linux Westwood's two
//! cascaded stages, Tustin), an interval sampler that closes a measurement
//! window once per RTT, and a tracker of the sender's congestion-avoidance
//! state (Open / Disorder / Recovery / Loss) inferred from the hooks.
//!
//! Everything here is unit-free: callers decide whether amounts are segments
//! and times seconds. Algorithms that need Linux's integer arithmetic apply it
//! themselves around these helpers.
//!
//! Sources: Linux `net/ipv4/tcp_westwood.c` (`westwood_do_filter`,
//! `westwood_filter`, `westwood_update_window`, `update_rtt_min`), ns-3
//! `tcp-westwood-plus.cc` (Tustin form), Linux `include/net/tcp.h` (CA states).

/// Running minimum. `request_reset` makes the next sample replace the value
/// (Linux Westwood's `reset_rtt_min`, used after an RTO).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunningMin {
    value: f64,
    reset: bool,
}

impl RunningMin {
    /// Starts at `initial` (e.g. `f64::INFINITY`, or Westwood's 20 s).
    pub fn new(initial: f64) -> Self {
        RunningMin { value: initial, reset: false }
    }

    /// Starts at `initial` with the first sample replacing it whatever its
    /// value (Linux Westwood initialises `reset_rtt_min = 1`).
    pub fn new_resetting(initial: f64) -> Self {
        RunningMin { value: initial, reset: true }
    }

    pub fn update(&mut self, x: f64) {
        if self.reset {
            self.value = x;
            self.reset = false;
        } else if x < self.value {
            self.value = x;
        }
    }

    /// The next sample replaces the current value.
    pub fn request_reset(&mut self) {
        self.reset = true;
    }

    pub fn get(&self) -> f64 {
        self.value
    }
}

/// Running maximum.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunningMax {
    value: f64,
}

impl RunningMax {
    pub fn new(initial: f64) -> Self {
        RunningMax { value: initial }
    }

    pub fn update(&mut self, x: f64) {
        if x > self.value {
            self.value = x;
        }
    }

    pub fn set(&mut self, x: f64) {
        self.value = x;
    }

    pub fn get(&self) -> f64 {
        self.value
    }
}

/// Exponentially weighted moving average `v <- (1 - gain) v + gain x`; the
/// first sample initialises it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ewma {
    pub gain: f64,
    value: Option<f64>,
}

impl Ewma {
    pub fn new(gain: f64) -> Self {
        Ewma { gain, value: None }
    }

    pub fn update(&mut self, x: f64) -> f64 {
        let v = match self.value {
            None => x,
            Some(v) => (1.0 - self.gain) * v + self.gain * x,
        };
        self.value = Some(v);
        v
    }

    /// Current value (0 before the first sample).
    pub fn get(&self) -> f64 {
        self.value.unwrap_or(0.0)
    }

    pub fn is_empty(&self) -> bool {
        self.value.is_none()
    }
}

/// Two cascaded EWMAs as Linux `westwood_filter`: `first <- (1-g) first + g x`
/// then `second <- (1-g) second + g first`, with g = 1/8 in Linux
/// (`westwood_do_filter(a, b) = (7a + b) >> 3`). "If the filter is empty fill
/// it with the first sample": when both stages are exactly 0 both take the
/// sample (so Linux also refills after the estimate has decayed to 0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CascadedEwma {
    pub gain: f64,
    first: f64,
    second: f64,
}

impl CascadedEwma {
    pub fn new(gain: f64) -> Self {
        CascadedEwma { gain, first: 0.0, second: 0.0 }
    }

    /// Feeds a sample; returns the second (output) stage.
    pub fn update(&mut self, x: f64) -> f64 {
        if self.first == 0.0 && self.second == 0.0 {
            self.first = x;
            self.second = x;
        } else {
            self.first = (1.0 - self.gain) * self.first + self.gain * x;
            self.second = (1.0 - self.gain) * self.second + self.gain * self.first;
        }
        self.second
    }

    /// First stage (Linux `bw_ns_est`, "not too smoothed").
    pub fn first(&self) -> f64 {
        self.first
    }

    /// Output stage (Linux `bw_est`).
    pub fn get(&self) -> f64 {
        self.second
    }
}

/// Discretised first-order low-pass with the Tustin (bilinear) approximation
/// and constant coefficient `a`: `v <- a v + (1 - a) (x + x_prev) / 2`
/// (ns-3 `TcpWestwoodPlus`, a = 0.9; the original Westwood paper's filter with
/// a fixed sampling step). The first sample initialises both `v` and `x_prev`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TustinFilter {
    pub a: f64,
    value: Option<f64>,
    prev: f64,
}

impl TustinFilter {
    pub fn new(a: f64) -> Self {
        TustinFilter { a, value: None, prev: 0.0 }
    }

    pub fn update(&mut self, x: f64) -> f64 {
        let v = match self.value {
            None => x,
            Some(v) => self.a * v + (1.0 - self.a) * (x + self.prev) / 2.0,
        };
        self.prev = x;
        self.value = Some(v);
        v
    }

    pub fn get(&self) -> f64 {
        self.value.unwrap_or(0.0)
    }
}

/// Which low-pass filter a rate estimator uses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LowPass {
    /// Linux Westwood+: two cascaded EWMAs with gain `g` (1/8).
    Cascaded(CascadedEwma),
    /// One EWMA (Westwood+ paper: gain 0.1).
    Ewma(Ewma),
    /// Tustin filter (ns-3 Westwood+: a = 0.9).
    Tustin(TustinFilter),
}

impl LowPass {
    pub fn update(&mut self, x: f64) -> f64 {
        match self {
            LowPass::Cascaded(f) => f.update(x),
            LowPass::Ewma(f) => f.update(x),
            LowPass::Tustin(f) => f.update(x),
        }
    }

    /// Filtered output.
    pub fn get(&self) -> f64 {
        match self {
            LowPass::Cascaded(f) => f.get(),
            LowPass::Ewma(f) => f.get(),
            LowPass::Tustin(f) => f.get(),
        }
    }

    /// Less smoothed intermediate value where the filter has one (the first
    /// cascaded stage), else the output.
    pub fn raw(&self) -> f64 {
        match self {
            LowPass::Cascaded(f) => f.first(),
            _ => self.get(),
        }
    }
}

/// One closed measurement interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IntervalSample {
    /// Amount accumulated during the interval.
    pub amount: f64,
    /// Interval length (time units of the caller).
    pub duration: f64,
}

impl IntervalSample {
    pub fn rate(&self) -> f64 {
        self.amount / self.duration
    }
}

/// Accumulates an amount over a window that is closed once strictly more than
/// `max(rtt, min_interval)` has elapsed since it opened (Linux
/// `westwood_update_window`: `delta > max(rtt, TCP_WESTWOOD_RTT_MIN)` and only
/// while `rtt` is non-zero). Poll before adding the current ACK's amount, as
/// Linux does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IntervalSampler {
    pub min_interval: f64,
    start: Option<f64>,
    amount: f64,
}

impl IntervalSampler {
    pub fn new(min_interval: f64) -> Self {
        IntervalSampler { min_interval, start: None, amount: 0.0 }
    }

    /// Opens the first window at `now` (no-op once started).
    pub fn start(&mut self, now: f64) {
        if self.start.is_none() {
            self.start = Some(now);
        }
    }

    pub fn started(&self) -> bool {
        self.start.is_some()
    }

    /// Closes the window and returns its sample if it is long enough.
    pub fn poll(&mut self, now: f64, rtt: f64) -> Option<IntervalSample> {
        let start = self.start?;
        let delta = now - start;
        if rtt > 0.0 && delta > rtt.max(self.min_interval) {
            let s = IntervalSample { amount: self.amount, duration: delta };
            self.amount = 0.0;
            self.start = Some(now);
            Some(s)
        } else {
            None
        }
    }

    pub fn add(&mut self, amount: f64) {
        self.amount += amount;
    }

    /// Amount accumulated in the open window.
    pub fn pending(&self) -> f64 {
        self.amount
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_min_resets_on_request() {
        // Linux update_rtt_min: rtt_min = rtt if reset_rtt_min, else min(rtt, rtt_min).
        let mut m = RunningMin::new_resetting(20.0);
        m.update(0.3);
        assert_eq!(m.get(), 0.3);
        m.update(0.5);
        assert_eq!(m.get(), 0.3);
        m.update(0.1);
        assert_eq!(m.get(), 0.1);
        m.request_reset();
        m.update(0.4);
        assert_eq!(m.get(), 0.4);
        let mut x = RunningMax::new(0.0);
        x.update(2.0);
        x.update(1.0);
        assert_eq!(x.get(), 2.0);
    }

    #[test]
    fn cascaded_filter_is_two_seven_eighths_stages() {
        // bw_ns_est = (7 bw_ns_est + s)/8; bw_est = (7 bw_est + bw_ns_est)/8.
        let mut f = CascadedEwma::new(1.0 / 8.0);
        assert_eq!(f.update(800.0), 800.0);
        assert_eq!(f.first(), 800.0);
        f.update(0.0);
        assert_eq!(f.first(), 700.0);
        assert_eq!(f.get(), (7.0 * 800.0 + 700.0) / 8.0);
        // Step response of the cascade from 0 toward c: the output after n
        // samples is c (1 - (7/8)^n - n/8 (7/8)^n) (two identical poles at 7/8).
        let mut g = CascadedEwma::new(1.0 / 8.0);
        g.update(1e-300); // leave the "empty" state with a negligible value
        let c = 1000.0;
        for n in 1..=40 {
            let out = g.update(c);
            let q: f64 = 7.0 / 8.0;
            let expect = c * (1.0 - q.powi(n) - n as f64 / 8.0 * q.powi(n));
            assert!((out - expect).abs() < 1e-9 * c, "n={n}: {out} vs {expect}");
        }
    }

    #[test]
    fn tustin_and_ewma() {
        let mut t = TustinFilter::new(0.9);
        assert_eq!(t.update(10.0), 10.0);
        // 0.9*10 + 0.1*(20+10)/2 = 10.5
        assert!((t.update(20.0) - 10.5).abs() < 1e-12);
        let mut e = Ewma::new(0.1);
        e.update(10.0);
        assert!((e.update(20.0) - 11.0).abs() < 1e-12);
    }

    #[test]
    fn interval_sampler_needs_more_than_max_rtt_and_floor() {
        let mut s = IntervalSampler::new(0.05);
        s.start(0.0);
        s.add(5.0);
        // rtt = 0.02 < floor 0.05: nothing at 0.05 (not strictly greater), a sample just after.
        assert_eq!(s.poll(0.05, 0.02), None);
        let x = s.poll(0.0500001, 0.02).unwrap();
        assert_eq!(x.amount, 5.0);
        assert!((x.duration - 0.0500001).abs() < 1e-15);
        assert_eq!(s.pending(), 0.0);
        // rtt = 0 (no sample yet): never closes.
        assert_eq!(s.poll(10.0, 0.0), None);
    }
}
