//! The line `tcplab.run(progress=True)` writes on stderr while a run goes:
//! simulated time done of the total, wall time so far and an estimate of
//! the wall time left (elapsed / fraction done, so it settles once the run
//! is past its start-up). On a terminal one line is redrawn in place (about
//! five times a second); elsewhere (a pipe, a log file) one line is written
//! per tenth of the run, so a log gets ten lines, not thousands.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// Redraws on a terminal no more often than this.
const REDRAW: Duration = Duration::from_millis(200);

pub struct RunProgress {
    /// Simulated seconds of the whole run.
    total_s: f64,
    start: Instant,
    terminal: bool,
    last_draw: Option<Instant>,
    /// Off a terminal: the last tenth written (0 = none yet).
    last_tenth: u32,
}

impl RunProgress {
    pub fn new(total_s: f64) -> Self {
        RunProgress {
            total_s,
            start: Instant::now(),
            terminal: std::io::stderr().is_terminal(),
            last_draw: None,
            last_tenth: 0,
        }
    }

    /// Called with the fraction of simulated time done (1.0 at the end, once).
    pub fn update(&mut self, fraction: f64) {
        let f = fraction.clamp(0.0, 1.0);
        let now = Instant::now();
        let done = f >= 1.0;
        if self.terminal {
            if !done && self.last_draw.is_some_and(|t| now - t < REDRAW) {
                return;
            }
            self.last_draw = Some(now);
            let mut e = std::io::stderr();
            let _ = write!(e, "\r  {}\x1b[K", self.text(f, now));
            if done {
                let _ = writeln!(e);
            }
        } else {
            let tenth = (f * 10.0).floor() as u32;
            if tenth > self.last_tenth {
                self.last_tenth = tenth;
                let _ = writeln!(std::io::stderr(), "  {}", self.text(f, now));
            }
        }
    }

    fn text(&self, f: f64, now: Instant) -> String {
        let wall = (now - self.start).as_secs_f64();
        let mut s = format!(
            "simulated {} of {} s ({:3.0}%), {} wall",
            short(f * self.total_s),
            short(self.total_s),
            100.0 * f,
            clock(wall)
        );
        if f >= 1.0 {
            s.push_str(", done");
        } else if f >= 0.01 && wall >= 1.0 {
            s.push_str(&format!(", about {} left", clock(wall * (1.0 - f) / f)));
        }
        s
    }
}

/// Simulated seconds with three significant digits at most (0.5, 12.3, 2000).
fn short(s: f64) -> String {
    if s >= 100.0 {
        format!("{s:.0}")
    } else if s >= 10.0 {
        format!("{s:.1}")
    } else {
        format!("{s:.2}")
    }
}

/// Wall time as `42 s`, `3 min 05 s` or `1 h 02 min`.
fn clock(s: f64) -> String {
    let t = s.round() as u64;
    if t < 60 {
        format!("{t} s")
    } else if t < 3600 {
        format!("{} min {:02} s", t / 60, t % 60)
    } else {
        format!("{} h {:02} min", t / 3600, (t % 3600) / 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_and_short_read_naturally() {
        assert_eq!(clock(4.4), "4 s");
        assert_eq!(clock(185.0), "3 min 05 s");
        assert_eq!(clock(3720.0), "1 h 02 min");
        assert_eq!(short(2000.0), "2000");
        assert_eq!(short(12.34), "12.3");
        assert_eq!(short(0.5), "0.50");
    }
}
