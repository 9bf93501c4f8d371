//! Unresponsive sources: constant-bit-rate and on/off traffic that sends
//! whatever the network does (UDP-like: no ACKs, no congestion control),
//! so a queue discipline can be studied under overload.
//!
//! A source is a flow whose `app` is `cbr` or `on_off` (spec.rs
//! `AppSpec`): it sends full data packets of the flow's `packet_size` on
//! the flow's path, from its `start`, evenly spaced at `rate_bps` (the gap
//! is the packet's bits at that rate). An on/off source alternates on
//! periods (sending as CBR) and off periods (silent), their lengths fixed
//! or drawn from exponential distributions with the given means from the
//! flow's own random stream (the classic on/off model of ns-2's
//! `Application/Traffic/Exponential`). Packets carry the source's ECN
//! codepoint (default Not-ECT: `ect1` makes unresponsive L4S traffic,
//! the case DualPI2's overload rule exists for). The receiver counts
//! what arrives and never answers.

use rand::Rng;

use crate::net::packet::{Ecn, Packet};
use crate::sim::rng::Stream;
use crate::sim::time::{from_secs, serialization_time, Time, PS_PER_SEC};

#[derive(Debug)]
pub struct Source {
    /// Time between packets while on.
    gap: Time,
    size: u32,
    ecn: Ecn,
    /// On/off: mean on and off times, and whether they are exponential.
    on_off: Option<(f64, f64, bool)>,
    /// The current on period ends here (never for CBR).
    on_until: Time,
    rng: Stream,
    next_seq: u64,
}

impl Source {
    pub fn new(rate_bps: f64, size: u32, ecn: Ecn, on_off: Option<(f64, f64, bool)>, rng: Stream) -> Self {
        let gap = serialization_time(size, 8.0 * PS_PER_SEC as f64 / rate_bps).max(1);
        Source { gap, size, ecn, on_off, on_until: Time::MAX, rng, next_seq: 0 }
    }

    fn draw(&mut self, mean: f64, exponential: bool) -> Time {
        if exponential {
            let u: f64 = self.rng.gen::<f64>();
            from_secs(-mean * (1.0 - u).ln())
        } else {
            from_secs(mean)
        }
    }

    /// The source starts at `now`: returns when its first packet goes.
    pub fn start(&mut self, now: Time) -> Time {
        if let Some((on, _, exp)) = self.on_off {
            // An exponential draw can be ~37 times its mean (at most 2^61
            // ps): saturating keeps "on past the end of the run" exact.
            self.on_until = now.saturating_add(self.draw(on, exp));
        }
        now
    }

    /// Sends the packet due at `now`; returns it and when the next is due.
    pub fn send(&mut self, now: Time) -> (Packet, Time) {
        let mut p = Packet::data(self.next_seq, self.size, false);
        p.set_ecn(self.ecn);
        self.next_seq += 1;
        // Saturating: a rate so low that the next packet is beyond any
        // run sends one packet.
        let mut next = now.saturating_add(self.gap);
        if let Some((on, off, exp)) = self.on_off {
            if next >= self.on_until {
                let resume = self.on_until.saturating_add(self.draw(off, exp));
                self.on_until = resume.saturating_add(self.draw(on, exp));
                next = next.max(resume);
            }
        }
        (p, next)
    }

    /// Packets sent so far.
    pub fn sent(&self) -> u64 {
        self.next_seq
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::rng::{stream, StreamKind};

    #[test]
    fn cbr_spaces_packets_at_the_rate() {
        // 1500 B at 12 Mbit/s: 1 ms apart.
        let mut s = Source::new(12e6, 1500, Ecn::Ect1, None, stream(1, StreamKind::Flow, 0));
        let mut t = s.start(0);
        for i in 0..1000 {
            let (p, next) = s.send(t);
            assert_eq!((p.seq, p.ecn(), p.size), (i, Ecn::Ect1, 1500));
            assert_eq!(next - t, 1_000_000_000);
            t = next;
        }
    }

    #[test]
    fn on_off_sends_the_on_fraction_of_the_rate() {
        // Exponential on 0.5 s, off 1.5 s: a quarter of the time on.
        let mut s = Source::new(12e6, 1500, Ecn::NotEct, Some((0.5, 1.5, true)), stream(2, StreamKind::Flow, 0));
        let mut t = s.start(0);
        let end = from_secs(2000.0);
        while t < end {
            t = s.send(t).1;
        }
        let rate = s.sent() as f64 * 1500.0 * 8.0 / 2000.0;
        assert!((rate / 3e6 - 1.0).abs() < 0.1, "mean rate {rate} vs 3 Mbit/s");
    }

    #[test]
    fn a_rate_too_low_for_a_second_packet_sends_one() {
        let mut s = Source::new(1e-9, 1500, Ecn::NotEct, None, stream(4, StreamKind::Flow, 0));
        let t = s.start(0);
        let (_, next) = s.send(t);
        assert!(next > from_secs(1e6));
        let mut s = Source::new(1e-9, 1500, Ecn::NotEct, Some((1.0, 1.0, true)), stream(4, StreamKind::Flow, 0));
        let t = s.start(0);
        assert!(s.send(t).1 > from_secs(1e6));
    }

    #[test]
    fn fixed_on_off_periods_are_exact() {
        // On 10 ms, off 30 ms, 1 ms gaps: 10 packets every 40 ms.
        let mut s = Source::new(12e6, 1500, Ecn::NotEct, Some((0.01, 0.03, false)), stream(3, StreamKind::Flow, 0));
        let mut t = s.start(0);
        let mut times = Vec::new();
        while t < from_secs(0.08) {
            times.push(t);
            t = s.send(t).1;
        }
        let ms = |x: Time| x / 1_000_000_000;
        assert_eq!(
            times.iter().map(|&x| ms(x)).collect::<Vec<_>>(),
            vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49]
        );
    }
}
