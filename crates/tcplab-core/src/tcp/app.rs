//! What the application gives TCP: unlimited data, or files at given times.
//!
//! Files are laid out one after another in the segment space in order of
//! their start times (ties keep their list order), so each segment's payload
//! is a pure function of its number: both ends compute it without carrying
//! it in the packet.

use crate::sim::time::{from_secs, Time};
use crate::spec::{AppSpec, FlowSpec};

#[derive(Debug, Clone)]
pub struct FileSegments {
    /// Position in the flow's file list.
    pub index: usize,
    pub size: u64,
    pub start: Time,
    /// Segments `[first, end)`.
    pub first: u64,
    pub end: u64,
    /// Application bytes before this file.
    pub bytes_before: u64,
}

#[derive(Debug, Clone)]
pub struct SegmentMap {
    /// Application bytes per full segment (goodput credit).
    pub full: u32,
    /// None: bulk (unlimited) data.
    pub files: Option<Vec<FileSegments>>,
}

impl SegmentMap {
    pub fn new(f: &FlowSpec) -> Self {
        let full = f.app_bytes_per_segment();
        let files = match &f.app {
            AppSpec::Bulk | AppSpec::Cbr { .. } | AppSpec::OnOff { .. } => None,
            AppSpec::Files { files } => {
                let mut order: Vec<usize> = (0..files.len()).collect();
                order.sort_by(|&a, &b| files[a].start.total_cmp(&files[b].start).then(a.cmp(&b)));
                let mut next = 0u64;
                let mut bytes = 0u64;
                Some(
                    order
                        .into_iter()
                        .map(|i| {
                            let n = files[i].size.div_ceil(full as u64);
                            let fs = FileSegments {
                                index: i,
                                size: files[i].size,
                                start: from_secs(files[i].start),
                                first: next,
                                end: next + n,
                                bytes_before: bytes,
                            };
                            next += n;
                            bytes += files[i].size;
                            fs
                        })
                        .collect(),
                )
            }
        };
        SegmentMap { full, files }
    }

    /// Application bytes carried by segment `seq`.
    #[inline]
    pub fn app_bytes(&self, seq: u64) -> u32 {
        match &self.files {
            None => self.full,
            Some(files) => {
                let k = files.partition_point(|f| f.end <= seq);
                match files.get(k) {
                    Some(f) if seq + 1 == f.end => (f.size - (f.end - f.first - 1) * self.full as u64) as u32,
                    Some(_) => self.full,
                    None => 0,
                }
            }
        }
    }

    /// Application bytes in segments `[0, seq)`.
    #[inline]
    pub fn bytes_before(&self, seq: u64) -> u64 {
        match &self.files {
            None => seq * self.full as u64,
            Some(files) => {
                let k = files.partition_point(|f| f.end <= seq);
                match files.get(k) {
                    Some(f) => f.bytes_before + (seq.max(f.first) - f.first) * self.full as u64,
                    None => files.last().map_or(0, |f| f.bytes_before + f.size),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{Accounting, FileSpec};

    fn flow(files: Vec<FileSpec>) -> FlowSpec {
        let json = serde_json::json!({
            "name": "f", "src": "a", "dst": "b", "cc": {"algorithm": "reno"}, "recovery": "sack",
            "packet_size": 1000, "header_size": 40, "accounting": "payload"
        });
        let mut f: FlowSpec = serde_json::from_value(json).unwrap();
        f.app = AppSpec::Files { files };
        f
    }

    #[test]
    fn files_are_laid_out_by_start_time_with_partial_last_segments() {
        let f = flow(vec![FileSpec { size: 2000, start: 5.0 }, FileSpec { size: 960, start: 1.0 }]);
        assert_eq!(f.accounting, Accounting::Payload);
        let m = SegmentMap::new(&f);
        let files = m.files.as_ref().unwrap();
        // Second file (starts first): one 960-byte segment; first file: 960 + 960 + 80.
        assert_eq!((files[0].index, files[0].first, files[0].end), (1, 0, 1));
        assert_eq!((files[1].index, files[1].first, files[1].end), (0, 1, 4));
        assert_eq!(m.app_bytes(0), 960);
        assert_eq!(m.app_bytes(3), 80);
        assert_eq!(m.bytes_before(4), 2960);
        assert_eq!(m.bytes_before(2), 1920);
        assert_eq!(m.app_bytes(4), 0);
    }
}
