//! TCP: the sender (reliability, loss recovery, RTO), the receiver (ACKs,
//! SACK, delayed ACKs, delivery) and the application model.

pub mod app;
pub mod rate;
pub mod receiver;
pub mod rtt;
pub mod sender;

pub use app::SegmentMap;
pub use receiver::{LinuxAck, LinuxAckConfig, Receiver};
pub use rtt::RttEstimator;
pub use sender::{CaState, Sender, SenderConfig, INFINITE_SSTHRESH};
