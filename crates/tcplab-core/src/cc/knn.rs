//! Loss classifiers, and the k-NN packet-drop guesser of Jena & Mishra
//! (docs/papers/jm-knn.md).
//!
//! A loss classifier is consulted by the sender on every loss event (three
//! duplicate ACKs / SACK recovery entry, or a retransmission timeout). When
//! it answers "not congestion", the sender retransmits but neither cwnd nor
//! ssthresh is reduced and the congestion control is not told, so it can be
//! attached to any loss-based algorithm.
//!
//! k-NN, as the paper describes it: a bounded history of events (time, cwnd,
//! kind ACK/drop, flag). An ACK is recorded flagged non-congestion. On a drop:
//! while the history holds fewer than `MAX_SIZE / 3` events the answer is
//! "not congestion"; otherwise the events within `RANGE` of the drop in the
//! (time, cwnd) plane vote, and the answer is "congestion" unless the
//! non-congestion neighbours outnumber the congestion ones. The drop is then
//! recorded.
//!
//! Where the paper is silent (parameters, all exposed):
//! - `max_size` (default 500) and `range` (default 0.1);
//! - the distance: Euclidean after normalizing time by the span of the
//!   history (oldest event to the drop) and cwnd by the largest cwnd in the
//!   history, so `range` is a fraction of both axes;
//! - `ack_every` (default 1): record one of every k ACKs of new data (the
//!   paper records every ACK);
//! - `drop_flag`: `answer` (default; a drop is flagged with the answer given
//!   for it) or `congestion` (every drop flagged congestion);
//! - `timeouts`: `classify` (default; a timeout is a drop event like three
//!   duplicate ACKs, as the paper says) or `congestion` (always congestion,
//!   not recorded as a vote).
//!
//! Cost: recording is O(1); a vote is O(max_size), once per loss event.

use std::collections::VecDeque;

use super::Params;
use crate::error::SpecError;
use crate::spec::LossClassifierSpec;

/// A classifier's judgement of a loss event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LossVerdict {
    Congestion,
    NotCongestion,
}

pub trait LossClassifier: Send {
    fn name(&self) -> &'static str;
    /// An ACK of new data at `now` (seconds) with the window `cwnd` (segments).
    fn on_ack(&mut self, now: f64, cwnd: f64);
    /// A loss event (`timeout`: a retransmission timeout rather than
    /// duplicate ACKs): congestion or not?
    fn on_loss(&mut self, now: f64, cwnd: f64, timeout: bool) -> LossVerdict;
}

#[derive(Debug, Clone, Copy)]
struct Event {
    time: f64,
    cwnd: f64,
    congestion: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropFlag {
    Answer,
    Congestion,
}

#[derive(Debug, Clone)]
pub struct KnnConfig {
    pub max_size: usize,
    pub range: f64,
    pub ack_every: u32,
    pub drop_flag: DropFlag,
    pub classify_timeouts: bool,
}

impl Default for KnnConfig {
    fn default() -> Self {
        KnnConfig { max_size: 500, range: 0.1, ack_every: 1, drop_flag: DropFlag::Answer, classify_timeouts: true }
    }
}

#[derive(Debug, Clone)]
pub struct Knn {
    pub cfg: KnnConfig,
    history: VecDeque<Event>,
    acks_seen: u64,
}

impl Knn {
    pub fn new(cfg: KnnConfig) -> Self {
        Knn { history: VecDeque::with_capacity(cfg.max_size + 1), cfg, acks_seen: 0 }
    }

    pub fn len(&self) -> usize {
        self.history.len()
    }

    pub fn is_empty(&self) -> bool {
        self.history.is_empty()
    }

    fn record(&mut self, e: Event) {
        if self.history.len() == self.cfg.max_size {
            self.history.pop_front();
        }
        self.history.push_back(e);
    }

    /// The vote for a drop at (now, cwnd): (congestion neighbours, non-congestion neighbours).
    pub fn neighbours(&self, now: f64, cwnd: f64) -> (usize, usize) {
        let oldest = self.history.front().map_or(now, |e| e.time);
        let span = (now - oldest).max(f64::MIN_POSITIVE);
        let cmax = self.history.iter().fold(cwnd, |m, e| m.max(e.cwnd)).max(f64::MIN_POSITIVE);
        let r2 = self.cfg.range * self.cfg.range;
        let (mut cong, mut non) = (0, 0);
        for e in &self.history {
            let dt = (e.time - now) / span;
            let dc = (e.cwnd - cwnd) / cmax;
            if dt * dt + dc * dc <= r2 {
                if e.congestion {
                    cong += 1;
                } else {
                    non += 1;
                }
            }
        }
        (cong, non)
    }
}

impl LossClassifier for Knn {
    fn name(&self) -> &'static str {
        "knn"
    }

    fn on_ack(&mut self, now: f64, cwnd: f64) {
        self.acks_seen += 1;
        if self.acks_seen.is_multiple_of(self.cfg.ack_every as u64) {
            self.record(Event { time: now, cwnd, congestion: false });
        }
    }

    fn on_loss(&mut self, now: f64, cwnd: f64, timeout: bool) -> LossVerdict {
        if timeout && !self.cfg.classify_timeouts {
            return LossVerdict::Congestion;
        }
        let verdict = if self.history.len() < self.cfg.max_size / 3 {
            LossVerdict::NotCongestion
        } else {
            let (cong, non) = self.neighbours(now, cwnd);
            if non > cong {
                LossVerdict::NotCongestion
            } else {
                LossVerdict::Congestion
            }
        };
        let congestion = match self.cfg.drop_flag {
            DropFlag::Answer => verdict == LossVerdict::Congestion,
            DropFlag::Congestion => true,
        };
        self.record(Event { time: now, cwnd, congestion });
        verdict
    }
}

/// Builds the classifier of a flow; `field` is the spec path (`flows[0].loss_classifier`).
pub fn build(spec: &LossClassifierSpec, field: &str) -> Result<Box<dyn LossClassifier>, SpecError> {
    match spec.kind.as_str() {
        "knn" => {
            let p = Params::new(&spec.params, field, &["max_size", "range", "ack_every", "drop_flag", "timeouts"])?;
            let d = KnnConfig::default();
            let cfg = KnnConfig {
                max_size: p.u64(
                    "max_size",
                    d.max_size as u64,
                    |x| (3..=10_000_000).contains(&x),
                    "an integer from 3 to 1e7",
                )? as usize,
                range: p.f64("range", d.range, |x| x > 0.0, "a positive distance (normalized units)")?,
                ack_every: p.u64("ack_every", 1, |x| (1..=u32::MAX as u64).contains(&x), "an integer >= 1")? as u32,
                drop_flag: match p.choice("drop_flag", "answer", &["answer", "congestion"])? {
                    "answer" => DropFlag::Answer,
                    _ => DropFlag::Congestion,
                },
                classify_timeouts: p.choice("timeouts", "classify", &["classify", "congestion"])? == "classify",
            };
            Ok(Box::new(Knn::new(cfg)))
        }
        other => Err(SpecError::new(format!("{field}.kind"), format!("unknown loss classifier {other:?}; known: knn"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn knn(max_size: usize, range: f64) -> Knn {
        Knn::new(KnnConfig { max_size, range, ..KnnConfig::default() })
    }

    #[test]
    fn warm_up_answers_not_congestion_below_a_third_of_max_size() {
        // "if the history holds fewer than MAX_SIZE / 3 events, answer not congestion"
        let mut k = knn(30, 0.1);
        for i in 0..8 {
            k.on_ack(i as f64, 10.0);
        }
        assert_eq!(k.on_loss(8.0, 10.0, false), LossVerdict::NotCongestion); // 8 < 10
        assert_eq!(k.len(), 9);
    }

    #[test]
    fn a_drop_among_many_acks_is_not_congestion() {
        // Random drops are scattered among ACK events (all non-congestion).
        let mut k = knn(300, 0.1);
        for i in 0..300 {
            k.on_ack(i as f64 * 0.01, 100.0 + (i % 5) as f64);
        }
        assert_eq!(k.on_loss(3.0, 101.0, false), LossVerdict::NotCongestion);
    }

    #[test]
    fn drops_recurring_at_the_same_window_are_congestion() {
        // Congestion drops recur at a similar cwnd: the neighbourhood of a new
        // drop at that cwnd holds earlier drops (flagged congestion) and few ACKs.
        let mut k =
            Knn::new(KnnConfig { max_size: 90, range: 0.05, drop_flag: DropFlag::Congestion, ..KnnConfig::default() });
        let mut t = 0.0;
        for _cycle in 0..30 {
            // ACKs while the window climbs far from the loss point, then a drop at cwnd 200.
            for w in [100.0, 120.0] {
                t += 0.1;
                k.on_ack(t, w);
            }
            t += 0.01;
            k.on_loss(t, 200.0, false);
        }
        let (cong, non) = k.neighbours(t + 0.01, 200.0);
        assert!(cong > non, "{cong} congestion vs {non} non-congestion neighbours");
        assert_eq!(k.on_loss(t + 0.01, 200.0, false), LossVerdict::Congestion);
    }

    #[test]
    fn ties_answer_congestion_and_the_history_is_bounded() {
        // "answer congestion unless the non-congestion count is larger"
        let mut k =
            Knn::new(KnnConfig { max_size: 6, range: 10.0, drop_flag: DropFlag::Congestion, ..KnnConfig::default() });
        k.on_loss(0.0, 10.0, false); // warm-up, flagged congestion
        k.on_ack(1.0, 10.0);
        assert_eq!(k.on_loss(2.0, 10.0, false), LossVerdict::Congestion); // 1 vs 1
        for i in 0..20 {
            k.on_ack(3.0 + i as f64, 10.0);
        }
        assert_eq!(k.len(), 6);
        assert_eq!(k.on_loss(30.0, 10.0, false), LossVerdict::NotCongestion); // only ACKs left
    }

    #[test]
    fn timeouts_can_be_left_to_congestion_control() {
        let mut k = Knn::new(KnnConfig { classify_timeouts: false, ..KnnConfig::default() });
        assert_eq!(k.on_loss(0.0, 10.0, true), LossVerdict::Congestion);
        assert_eq!(k.len(), 0);
        assert_eq!(k.on_loss(0.0, 10.0, false), LossVerdict::NotCongestion); // warm-up
    }

    #[test]
    fn ack_every_samples_the_acks() {
        let mut k = Knn::new(KnnConfig { ack_every: 4, ..KnnConfig::default() });
        for i in 0..40 {
            k.on_ack(i as f64, 10.0);
        }
        assert_eq!(k.len(), 10);
    }

    #[test]
    fn parameters_are_checked_by_name() {
        let mut params = serde_json::Map::new();
        params.insert("rnage".into(), serde_json::json!(0.1));
        let e = build(&LossClassifierSpec { kind: "knn".into(), params }, "flows[0].loss_classifier").err().unwrap();
        assert_eq!(e.field, "flows[0].loss_classifier.params.rnage");
        let e =
            build(&LossClassifierSpec { kind: "svm".into(), params: Default::default() }, "flows[0].loss_classifier")
                .err()
                .unwrap();
        assert_eq!(e.field, "flows[0].loss_classifier.kind");
    }
}
