//! Packets: small plain values moved through queues by copy, never allocated.

/// One SACK block, relative to the ACK's cumulative acknowledgement:
/// segments `[ack + start, ack + start + len)` have been received.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SackBlock {
    pub start: u32,
    pub len: u32,
}

pub const MAX_SACK_BLOCKS: usize = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketKind {
    Data,
    Ack,
}

/// A packet. Sequence numbers count segments (as in ns-2 and Linux's
/// packet-counted cwnd); the flow knows each segment's payload.
#[derive(Debug, Clone, Copy)]
pub struct Packet {
    /// Data: segment number. Ack: cumulative acknowledgement (next segment expected).
    pub seq: u64,
    pub flow: u32,
    /// Bytes on the wire.
    pub size: u32,
    /// Index of the link the packet is on within its flow's path.
    pub hop: u16,
    pub kind: PacketKind,
    /// Data: this is a retransmission (for accounting only; the receiver does not look).
    pub retransmit: bool,
    pub n_sack: u8,
    pub sack: [SackBlock; MAX_SACK_BLOCKS],
}

impl Packet {
    pub fn data(flow: u32, seq: u64, size: u32, retransmit: bool) -> Self {
        Packet {
            seq,
            flow,
            size,
            hop: 0,
            kind: PacketKind::Data,
            retransmit,
            n_sack: 0,
            sack: [SackBlock::default(); MAX_SACK_BLOCKS],
        }
    }

    pub fn ack(flow: u32, ack: u64, size: u32) -> Self {
        Packet {
            seq: ack,
            flow,
            size,
            hop: 0,
            kind: PacketKind::Ack,
            retransmit: false,
            n_sack: 0,
            sack: [SackBlock::default(); MAX_SACK_BLOCKS],
        }
    }

    /// SACK blocks as absolute `[start, end)` segment ranges.
    pub fn sack_blocks(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.sack[..self.n_sack as usize]
            .iter()
            .map(move |b| (self.seq + b.start as u64, self.seq + b.start as u64 + b.len as u64))
    }
}
