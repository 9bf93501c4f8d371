//! Sampled time series, in preallocated columns.
//!
//! Sampling happens on one timer for the whole run (every
//! `sample_interval`), so tracing costs nothing per packet: when it is off no
//! sample event is ever scheduled.

/// Per-flow samples, one row per (time, flow).
#[derive(Debug, Default, Clone)]
pub struct FlowSeries {
    pub time: Vec<f64>,
    pub flow: Vec<u32>,
    pub cwnd: Vec<f64>,
    pub ssthresh: Vec<f64>,
    pub srtt: Vec<f64>,
    pub in_flight: Vec<u64>,
    pub delivered_bytes: Vec<u64>,
}

/// Per-queue samples, one row per (time, link).
#[derive(Debug, Default, Clone)]
pub struct QueueSeries {
    pub time: Vec<f64>,
    pub link: Vec<u32>,
    pub packets: Vec<u64>,
    pub bytes: Vec<u64>,
}

impl FlowSeries {
    pub fn with_capacity(n: usize) -> Self {
        FlowSeries {
            time: Vec::with_capacity(n),
            flow: Vec::with_capacity(n),
            cwnd: Vec::with_capacity(n),
            ssthresh: Vec::with_capacity(n),
            srtt: Vec::with_capacity(n),
            in_flight: Vec::with_capacity(n),
            delivered_bytes: Vec::with_capacity(n),
        }
    }
}

impl QueueSeries {
    pub fn with_capacity(n: usize) -> Self {
        QueueSeries {
            time: Vec::with_capacity(n),
            link: Vec::with_capacity(n),
            packets: Vec::with_capacity(n),
            bytes: Vec::with_capacity(n),
        }
    }
}

/// Sampled internal variables of the congestion controls (long format: one
/// row per (time, flow, variable)); `names[variable]` is the variable's name.
#[derive(Debug, Default, Clone)]
pub struct CcSeries {
    pub time: Vec<f64>,
    pub flow: Vec<u32>,
    pub variable: Vec<u16>,
    pub value: Vec<f64>,
    pub names: Vec<&'static str>,
}

impl CcSeries {
    /// Index of `name` in `names`, adding it on first use.
    pub fn intern(&mut self, name: &'static str) -> u16 {
        match self.names.iter().position(|n| *n == name) {
            Some(i) => i as u16,
            None => {
                self.names.push(name);
                (self.names.len() - 1) as u16
            }
        }
    }
}
