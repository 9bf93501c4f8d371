//! Random loss on a link: packets that were transmitted but never arrive
//! (channel errors), as opposed to queue drops. Each link draws from its own
//! random stream, so adding a lossy link changes no other component's draws.

use rand::Rng;

use crate::sim::rng::Stream;
use crate::spec::LossSpec;

#[derive(Debug, Clone)]
pub struct LossModel {
    spec: LossSpec,
    /// Gilbert-Elliott: in the Bad state.
    bad: bool,
    rng: Stream,
}

impl LossModel {
    pub fn new(spec: LossSpec, rng: Stream) -> Self {
        LossModel { spec, bad: false, rng }
    }

    /// Whether the next packet is lost (advances the model by one packet).
    #[inline]
    pub fn lose(&mut self) -> bool {
        match self.spec {
            LossSpec::Bernoulli { p } => p > 0.0 && self.rng.gen::<f64>() < p,
            LossSpec::GilbertElliott { p_gb, p_bg, loss_good, loss_bad } => {
                // Step the chain, then lose with the new state's probability.
                let u: f64 = self.rng.gen();
                self.bad = if self.bad { u >= p_bg } else { u < p_gb };
                let q = if self.bad { loss_bad } else { loss_good };
                q > 0.0 && self.rng.gen::<f64>() < q
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::rng::{stream, StreamKind};

    #[test]
    fn bernoulli_loss_rate_matches_p() {
        // 1e6 packets: the binomial standard deviation at p = 0.01 is ~1e-4,
        // so 4 sigma is 4e-4.
        for (i, p) in [0.1, 0.01, 0.001].into_iter().enumerate() {
            let mut m = LossModel::new(LossSpec::Bernoulli { p }, stream(1, StreamKind::Link, i as u64));
            let n = 1_000_000;
            let lost = (0..n).filter(|_| m.lose()).count() as f64 / n as f64;
            let sigma = (p * (1.0 - p) / n as f64).sqrt();
            assert!((lost - p).abs() < 4.0 * sigma, "p = {p}: measured {lost}");
        }
    }

    #[test]
    fn gilbert_elliott_matches_its_stationary_rate_and_burst_length() {
        // p_gb = 0.002, p_bg = 0.25: stationary P(Bad) = 0.002 / 0.252 = 0.00794;
        // with loss only in Bad the loss rate is that, and bursts are
        // geometric with mean 1 / p_bg = 4 packets.
        let (p_gb, p_bg) = (0.002, 0.25);
        let mut m = LossModel::new(
            LossSpec::GilbertElliott { p_gb, p_bg, loss_good: 0.0, loss_bad: 1.0 },
            stream(7, StreamKind::Link, 0),
        );
        let n = 4_000_000;
        let (mut lost, mut bursts, mut run) = (0u64, 0u64, 0u64);
        for _ in 0..n {
            if m.lose() {
                lost += 1;
                run += 1;
            } else if run > 0 {
                bursts += 1;
                run = 0;
            }
        }
        let rate = lost as f64 / n as f64;
        let expect = p_gb / (p_gb + p_bg);
        assert!((rate - expect).abs() / expect < 0.05, "rate {rate} vs {expect}");
        let mean_burst = lost as f64 / bursts as f64;
        assert!((mean_burst - 1.0 / p_bg).abs() < 0.15, "mean burst {mean_burst} vs {}", 1.0 / p_bg);
    }

    #[test]
    fn gilbert_elliott_with_partial_loss_in_both_states() {
        // Stationary loss = (p_bg * lg + p_gb * lb) / (p_gb + p_bg).
        let (p_gb, p_bg, lg, lb) = (0.01, 0.1, 0.001, 0.5);
        let mut m = LossModel::new(
            LossSpec::GilbertElliott { p_gb, p_bg, loss_good: lg, loss_bad: lb },
            stream(3, StreamKind::Link, 5),
        );
        let n = 4_000_000;
        let rate = (0..n).filter(|_| m.lose()).count() as f64 / n as f64;
        let expect = (p_bg * lg + p_gb * lb) / (p_gb + p_bg);
        assert!((rate - expect).abs() / expect < 0.03, "rate {rate} vs {expect}");
    }
}
