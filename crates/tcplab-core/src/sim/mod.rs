//! Simulation kernel: time, the event queue and random streams.

pub mod event;
pub mod numpy_rng;
pub mod rng;
pub mod time;

pub use event::{Event, EventKind, EventQueue};
pub use time::Time;
