//! Packets: small plain values moved through queues by copy, never allocated.
//!
//! A packet is 24 bytes. The SACK blocks an ACK may carry (RFC 2018, up to
//! 4 x 8 bytes) live out of line in the run's [`SackStore`], and the packet
//! holds a handle: data packets, most packets on the wire, carry none, and
//! every queue and delay line holds packets, so this keeps them small.

/// One SACK block, relative to the ACK's cumulative acknowledgement:
/// segments `[ack + start, ack + start + len)` have been received. `start`
/// is taken modulo 2^32 like a TCP sequence number (a signed offset), so a
/// D-SACK block below the ACK (RFC 2883) has an offset above 2^31.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SackBlock {
    pub start: u32,
    pub len: u32,
}

pub const MAX_SACK_BLOCKS: usize = 4;

/// The SACK blocks of one ACK.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SackBlocks {
    pub n: u8,
    pub blocks: [SackBlock; MAX_SACK_BLOCKS],
}

impl SackBlocks {
    pub const NONE: SackBlocks = SackBlocks { n: 0, blocks: [SackBlock { start: 0, len: 0 }; MAX_SACK_BLOCKS] };

    /// The blocks as absolute `[start, end)` segment ranges of an ACK whose
    /// cumulative acknowledgement is `ack`.
    pub fn ranges(&self, ack: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.blocks[..self.n as usize].iter().map(move |b| {
            let s = ack.wrapping_add(b.start as i32 as i64 as u64);
            (s, s + b.len as u64)
        })
    }
}

/// SACK blocks of the ACKs on the wire, by handle (a slab with a free list:
/// no allocation once it has grown to the most SACK-carrying ACKs in flight).
#[derive(Debug, Default)]
pub struct SackStore {
    slots: Vec<SackBlocks>,
    free: Vec<u32>,
}

impl SackStore {
    /// Stores `b` and returns its handle (never 0).
    #[inline]
    pub fn put(&mut self, b: SackBlocks) -> u32 {
        match self.free.pop() {
            Some(h) => {
                self.slots[h as usize - 1] = b;
                h
            }
            None => {
                self.slots.push(b);
                self.slots.len() as u32
            }
        }
    }

    /// The blocks of handle `h` (0: none); the handle is released.
    #[inline]
    pub fn take(&mut self, h: u32) -> SackBlocks {
        if h == 0 {
            return SackBlocks::NONE;
        }
        self.free.push(h);
        self.slots[h as usize - 1]
    }

    /// The blocks of handle `h` (0: none), which stays in use (a packet
    /// capture reads an ACK's blocks on its way).
    pub fn peek(&self, h: u32) -> SackBlocks {
        if h == 0 {
            return SackBlocks::NONE;
        }
        self.slots[h as usize - 1]
    }

    /// Releases handle `h` (0: nothing) of an ACK that will never arrive.
    #[inline]
    pub fn release(&mut self, h: u32) {
        if h != 0 {
            self.free.push(h);
        }
    }

    /// Handles in use.
    pub fn in_use(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketKind {
    Data,
    Ack,
}

/// The ECN field of the IP header (RFC 3168 section 5), with its codepoint
/// values: 00 Not-ECT, 01 ECT(1), 10 ECT(0), 11 CE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Ecn {
    #[default]
    NotEct = 0,
    /// L4S traffic (RFC 9331) and ECN nonce history.
    Ect1 = 1,
    /// Classic ECN-capable traffic (RFC 3168).
    Ect0 = 2,
    /// Congestion Experienced: set by an AQM instead of dropping.
    Ce = 3,
}

impl Ecn {
    /// From the two-bit codepoint (only the low two bits are read).
    #[inline(always)]
    pub const fn from_bits(b: u8) -> Ecn {
        match b & 3 {
            0 => Ecn::NotEct,
            1 => Ecn::Ect1,
            2 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }

    /// ECT(0), ECT(1) or CE: a queue may mark this packet instead of dropping it.
    #[inline(always)]
    pub const fn capable(self) -> bool {
        !matches!(self, Ecn::NotEct)
    }
}

/// TCP header flags a packet carries, in [`Packet::tcp_flags`]: classic
/// ECN's two (RFC 3168 section 6.1) and Accurate ECN's ACE counter.
pub mod tcp_flags {
    /// ECN-Echo: on an ACK, the receiver saw CE (RFC 3168).
    pub const ECE: u8 = 1;
    /// Congestion Window Reduced: on data, the sender has reacted (RFC 3168).
    pub const CWR: u8 = 2;
    /// Accurate ECN's ACE field (draft-ietf-tcpm-accurate-ecn section 3.2.2):
    /// on an ACK, the number of CE-marked packets received modulo 8, in
    /// bits 2..5 (ACE_SHIFT) of the flags.
    pub const ACE_SHIFT: u32 = 2;
    pub const ACE_MASK: u8 = 7 << ACE_SHIFT;
    /// Every flag bit (five; a link's FIFO entry packs them with the
    /// retransmit bit and the ECN codepoint into one byte).
    pub const ALL: u8 = ECE | CWR | ACE_MASK;
}

/// A packet. Sequence numbers count segments (as in ns-2 and Linux's
/// packet-counted cwnd); the flow knows each segment's payload. Its flow is
/// not stored: the path it is on says (`World`), and a link's FIFO entry
/// uses the room for the next packet's route.
#[derive(Debug, Clone, Copy)]
pub struct Packet {
    /// Data: segment number. Ack: cumulative acknowledgement (next segment expected).
    pub seq: u64,
    /// ACKs on the wire: handle of their SACK blocks in the run's
    /// [`SackStore`] (0: none).
    pub sack: u32,
    /// Where the packet is on its path: the index, in the run's array of
    /// paths, of the link it is on (set by the world when it sends it), so
    /// forwarding reads the next link from the entry after it, not the
    /// flow's path first.
    pub pos: u32,
    /// Bytes on the wire: at most 65,535, as in IP (the spec checks packet
    /// and ACK sizes).
    pub size: u16,
    pub kind: PacketKind,
    /// Bit 0: data, this is a retransmission (for accounting only; the
    /// receiver does not look). Bits 1-2: the IP header's ECN field, set by
    /// the sender, CE by a marking queue. Bits 3-7: TCP flags
    /// ([`tcp_flags`]): ECE and CWR, or an ACK's ACE counter. One byte, so
    /// a link's FIFO entry copies it as it is (see the accessors).
    pub(crate) bits: u8,
}

/// Where an endpoint's packets enter the network: the position in the
/// run's path array of its path's first link (a packet's `pos` there), that
/// link, and the route after it (the next path entry). Each endpoint keeps
/// its own among its fields: the packets it just produced go onto their
/// first link without reading the path arrays, with thousands of flows a
/// cache miss or two that the endpoint's own lines, just used, are not.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FirstHop {
    pub pos: u32,
    pub link: u32,
    pub route: u32,
}

/// Largest packet size (bytes), IP's.
pub const MAX_PACKET_SIZE: u32 = u16::MAX as u32;

impl Packet {
    #[inline]
    pub const fn data(seq: u64, size: u32, retransmit: bool) -> Self {
        debug_assert!(size <= MAX_PACKET_SIZE);
        Packet { seq, sack: 0, pos: 0, size: size as u16, kind: PacketKind::Data, bits: retransmit as u8 }
    }

    /// Data: a retransmission.
    #[inline(always)]
    pub const fn retransmit(&self) -> bool {
        self.bits & 1 != 0
    }

    /// The ECN codepoint of the IP header.
    #[inline(always)]
    pub const fn ecn(&self) -> Ecn {
        Ecn::from_bits(self.bits >> 1)
    }

    #[inline(always)]
    pub fn set_ecn(&mut self, e: Ecn) {
        self.bits = (self.bits & !6) | (e as u8) << 1;
    }

    /// The TCP flags ([`tcp_flags`]).
    #[inline(always)]
    pub const fn tcp_flags(&self) -> u8 {
        self.bits >> 3
    }

    #[inline(always)]
    pub fn set_tcp_flags(&mut self, f: u8) {
        debug_assert!(f <= tcp_flags::ALL);
        self.bits = (self.bits & 7) | f << 3;
    }

    #[inline]
    pub fn ack(ack: u64, size: u32) -> Self {
        debug_assert!(size <= MAX_PACKET_SIZE);
        Packet { seq: ack, sack: 0, pos: 0, size: size as u16, kind: PacketKind::Ack, bits: 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_stay_small() {
        assert_eq!(std::mem::size_of::<Packet>(), 24);
    }

    #[test]
    fn ecn_and_flags_share_the_byte_with_the_retransmit_bit() {
        let mut p = Packet::data(5, 1500, true);
        assert_eq!((p.retransmit(), p.ecn(), p.tcp_flags()), (true, Ecn::NotEct, 0));
        for e in [Ecn::Ect1, Ecn::Ect0, Ecn::Ce, Ecn::NotEct, Ecn::Ce] {
            p.set_ecn(e);
            p.set_tcp_flags(tcp_flags::CWR | 5 << tcp_flags::ACE_SHIFT);
            assert_eq!((p.retransmit(), p.ecn(), p.tcp_flags()), (true, e, tcp_flags::CWR | 5 << tcp_flags::ACE_SHIFT));
            p.set_tcp_flags(0);
            assert_eq!((p.retransmit(), p.ecn(), p.tcp_flags()), (true, e, 0));
        }
        assert!(Ecn::Ect0.capable() && Ecn::Ect1.capable() && Ecn::Ce.capable() && !Ecn::NotEct.capable());
    }

    #[test]
    fn sack_store_reuses_released_handles() {
        let mut s = SackStore::default();
        let b = SackBlocks { n: 1, blocks: [SackBlock { start: 2, len: 3 }; MAX_SACK_BLOCKS] };
        let h1 = s.put(b);
        let h2 = s.put(SackBlocks::NONE);
        assert!(h1 != 0 && h2 != 0 && h1 != h2);
        assert_eq!(s.take(h1).ranges(10).collect::<Vec<_>>(), vec![(12, 15)]);
        s.release(h2);
        assert_eq!(s.in_use(), 0);
        assert!(s.put(b) == h2 || s.put(b) == h1);
        assert_eq!(s.take(0), SackBlocks::NONE);
    }
}
