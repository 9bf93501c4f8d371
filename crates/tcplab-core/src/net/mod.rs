//! The network: packets, links (queue + transmitter + delay line) and routes.

pub mod link;
pub mod loss;
pub mod packet;
pub mod qdisc;
pub mod qlink;
pub mod routing;

pub use link::{BlockPool, Enqueued, Link, LinkShared, LinkStats};
pub use packet::{Ecn, FirstHop, Packet, PacketKind, SackBlock, MAX_SACK_BLOCKS};
