//! The emulated bottleneck of the kernel side of `tcplab validate`: a
//! user-space forwarder between two TUN devices.
//!
//! What it models (docs/validation.md, "The kernel path"): the data
//! direction (packets read from the sender-side TUN) is a link of rate C
//! with a drop-tail queue of B packets *excluding the one in service*, then a
//! propagation delay; the reverse direction (ACKs) gets the propagation delay
//! and, unless configured, no rate limit and no queue limit. The wire size of
//! a packet is its IP length (the TUN is opened with `IFF_NO_PI`, so a read
//! returns exactly one IP packet) plus `overhead_bytes` (default 0).
//!
//! Departures are computed in virtual time when a packet arrives, never from
//! when the loop happened to wake: `start = max(arrival, previous end)`,
//! `end = start + wire_bits / C`, delivery at `end + delay`. The occupancy
//! used for the drop decision is likewise the virtual one (packets that have
//! arrived and whose service has not started at the arrival instant), so a
//! late wake-up delays a write but never shifts later departures or the
//! queue. What the host did to the run is measured instead: the lateness of
//! every write (actual minus scheduled time, CLOCK_MONOTONIC) and the stalls
//! (gaps longer than `stall_s` between loop iterations; the loop never
//! sleeps more than 1 ms, so a longer gap is the host not running it).
//!
//! `run` opens the TUNs in the caller's network namespace, writes
//! `ready_file`, and forwards until SIGTERM/SIGINT, `stop_file` appears, or
//! `duration_s` has passed; then it writes its logs into `out_dir`
//! (`forwarder.json`, `forwarder_drops.csv`, `forwarder_queue.csv`). All
//! times are CLOCK_MONOTONIC seconds; the Python side rebases them.
//!
//! Linux sources: the TUN interface (`struct ifreq`, `TUNSETIFF`,
//! `IFF_TUN`, `IFF_NO_PI`) is include/uapi/linux/if_tun.h and
//! Documentation/networking/tuntap.rst; the IPv4 and TCP header layouts are
//! RFC 791 section 3.1 and RFC 9293 section 3.1.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::fs;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{json, Value};

/// `_IOW('T', 202, int)`, include/uapi/linux/if_tun.h.
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
/// include/uapi/linux/if_tun.h.
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;
/// The loop never blocks longer than this, so a gap above `stall_s` between
/// two iterations means the process was not running.
const MAX_SLEEP_NS: i64 = 1_000_000;

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// The forwarder's description (JSON object; see `Config::from_json`).
#[derive(Debug, Clone)]
pub struct Config {
    /// TUN facing the sender: packets read from it go the data direction.
    pub tun_snd: String,
    /// TUN facing the receiver.
    pub tun_rcv: String,
    pub rate_bps: f64,
    /// One-way propagation delay, applied in each direction (RTT/2).
    pub delay_s: f64,
    pub buffer_packets: u64,
    pub reverse_rate_bps: Option<f64>,
    pub reverse_buffer_packets: Option<u64>,
    pub overhead_bytes: u64,
    pub duration_s: Option<f64>,
    pub stop_file: Option<PathBuf>,
    pub ready_file: PathBuf,
    pub out_dir: PathBuf,
    pub sample_interval_s: f64,
    pub spin_s: f64,
    pub stall_s: f64,
    /// Run the loop under SCHED_FIFO (priority 50) if the host allows.
    pub realtime: bool,
}

fn field<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
    v.get(name).filter(|x| !x.is_null())
}

fn num(v: &Value, name: &str, default: Option<f64>, positive: bool) -> Result<f64, String> {
    let x = match field(v, name) {
        None => default.ok_or_else(|| format!("{name}: missing (a number is required)"))?,
        Some(x) => x.as_f64().ok_or_else(|| format!("{name}: expected a number, got {x}"))?,
    };
    if !x.is_finite() || x < 0.0 || (positive && x == 0.0) {
        let want = if positive { "> 0" } else { ">= 0" };
        return Err(format!("{name}: must be finite and {want}, got {x}"));
    }
    Ok(x)
}

fn opt_num(v: &Value, name: &str, positive: bool) -> Result<Option<f64>, String> {
    match field(v, name) {
        None => Ok(None),
        Some(_) => num(v, name, None, positive).map(Some),
    }
}

fn int(v: &Value, name: &str, default: Option<u64>) -> Result<u64, String> {
    match field(v, name) {
        None => default.ok_or_else(|| format!("{name}: missing (an integer is required)")),
        Some(x) => x.as_u64().ok_or_else(|| format!("{name}: expected an integer >= 0, got {x}")),
    }
}

fn text(v: &Value, name: &str) -> Result<String, String> {
    match field(v, name) {
        None => Err(format!("{name}: missing (a string is required)")),
        Some(x) => x.as_str().map(str::to_owned).ok_or_else(|| format!("{name}: expected a string, got {x}")),
    }
}

fn tun_name(v: &Value, name: &str) -> Result<String, String> {
    let s = text(v, name)?;
    if s.is_empty() || s.len() > 15 || !s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
        return Err(format!("{name}: an interface name of 1-15 characters [A-Za-z0-9_-] is required, got {s:?}"));
    }
    Ok(s)
}

impl Config {
    /// Parses the JSON description; errors start with the field name.
    pub fn from_json(s: &str) -> Result<Config, String> {
        let v: Value = serde_json::from_str(s).map_err(|e| format!("config: not valid JSON: {e}"))?;
        if !v.is_object() {
            return Err("config: expected a JSON object".into());
        }
        let known = [
            "tun_snd",
            "tun_rcv",
            "rate_bps",
            "delay_s",
            "buffer_packets",
            "reverse_rate_bps",
            "reverse_buffer_packets",
            "overhead_bytes",
            "duration_s",
            "stop_file",
            "ready_file",
            "out_dir",
            "sample_interval_s",
            "spin_s",
            "stall_s",
            "realtime",
        ];
        if let Some(k) = v.as_object().into_iter().flat_map(|o| o.keys()).find(|k| !known.contains(&k.as_str())) {
            return Err(format!("{k}: unknown field (known: {})", known.join(", ")));
        }
        let realtime = match field(&v, "realtime") {
            None => true,
            Some(x) => x.as_bool().ok_or_else(|| format!("realtime: expected true or false, got {x}"))?,
        };
        let cfg = Config {
            tun_snd: tun_name(&v, "tun_snd")?,
            tun_rcv: tun_name(&v, "tun_rcv")?,
            rate_bps: num(&v, "rate_bps", None, true)?,
            delay_s: num(&v, "delay_s", None, false)?,
            buffer_packets: int(&v, "buffer_packets", None)?,
            reverse_rate_bps: opt_num(&v, "reverse_rate_bps", true)?,
            reverse_buffer_packets: match field(&v, "reverse_buffer_packets") {
                None => None,
                Some(_) => Some(int(&v, "reverse_buffer_packets", None)?),
            },
            overhead_bytes: int(&v, "overhead_bytes", Some(0))?,
            duration_s: opt_num(&v, "duration_s", true)?,
            stop_file: field(&v, "stop_file").map(|_| text(&v, "stop_file").map(PathBuf::from)).transpose()?,
            ready_file: PathBuf::from(text(&v, "ready_file")?),
            out_dir: PathBuf::from(text(&v, "out_dir")?),
            sample_interval_s: num(&v, "sample_interval_s", Some(0.01), true)?,
            // 20 us: under SCHED_FIFO a timer wake-up is mostly on time; a longer spin made the
            // loop spin continuously at 100 Mbit/s (an event every 120 us) and RT throttling then
            // stopped it for 50 ms at a time (docs/validation.md, "The kernel path").
            spin_s: num(&v, "spin_s", Some(20e-6), false)?,
            stall_s: num(&v, "stall_s", Some(0.002), true)?,
            realtime,
        };
        if cfg.tun_snd == cfg.tun_rcv {
            return Err(format!("tun_rcv: must differ from tun_snd ({:?})", cfg.tun_snd));
        }
        Ok(cfg)
    }
}

fn mono_ns() -> i64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid pointer to a timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

fn secs(ns: i64) -> f64 {
    ns as f64 * 1e-9
}

fn os_err(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

/// Opens a TUN device (IFF_TUN | IFF_NO_PI, nonblocking) named `name`.
fn open_tun(name: &str) -> Result<OwnedFd, String> {
    let path = c"/dev/net/tun";
    // SAFETY: path is a valid C string.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(os_err("open /dev/net/tun"));
    }
    // SAFETY: fd was just opened and is owned by nobody else.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    // struct ifreq: ifr_name[IFNAMSIZ=16], then a union whose first member we
    // use is `short ifr_flags`; 40 bytes in all on x86-64 (include/uapi/linux/if.h).
    let mut ifr = [0u8; 40];
    ifr[..name.len()].copy_from_slice(name.as_bytes());
    ifr[16..18].copy_from_slice(&(IFF_TUN | IFF_NO_PI).to_ne_bytes());
    // SAFETY: ifr is a 40-byte buffer laid out as struct ifreq.
    if unsafe { libc::ioctl(fd, TUNSETIFF as _, ifr.as_mut_ptr()) } < 0 {
        return Err(os_err(&format!("TUNSETIFF {name}")));
    }
    Ok(owned)
}

/// What the forwarder needs from a packet's IPv4 and TCP headers.
struct TcpView {
    /// Source port: tells the flows of a multi-flow run apart.
    sport: u16,
    seq: u32,
    payload: u32,
    syn: bool,
    ack: bool,
}

fn tcp_view(p: &[u8]) -> Option<TcpView> {
    if p.len() < 20 || p[0] >> 4 != 4 || p[9] != 6 {
        return None;
    }
    let ihl = usize::from(p[0] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([p[2], p[3]])).min(p.len());
    let t = p.get(ihl..)?;
    if t.len() < 20 {
        return None;
    }
    let doff = usize::from(t[12] >> 4) * 4;
    Some(TcpView {
        sport: u16::from_be_bytes([t[0], t[1]]),
        seq: u32::from_be_bytes([t[4], t[5], t[6], t[7]]),
        payload: u32::try_from(total.saturating_sub(ihl + doff)).unwrap_or(0),
        syn: t[13] & 0x02 != 0,
        ack: t[13] & 0x10 != 0,
    })
}

/// A packet accepted by a link: its virtual service interval.
struct Svc {
    arrival: i64,
    start: i64,
    bytes: u64,
    /// Bytes of all packets accepted before this one (for the bytes waiting).
    cum_before: u64,
}

struct Drop {
    t: i64,
    /// TCP source port of the dropped packet (None: not TCP).
    sport: Option<u16>,
    seq: Option<u32>,
    payload: u32,
    waiting: usize,
}

/// One direction of the path.
struct Link {
    rate_bps: Option<f64>,
    buffer: Option<usize>,
    delay_ns: i64,
    overhead: u64,
    /// Accepted packets whose service may not have ended, in FIFO order;
    /// pruned only up to the last queue sample (samples look back).
    svc: VecDeque<Svc>,
    cum_bytes: u64,
    last_end: i64,
    /// Packets waiting for their delivery instant, in delivery order.
    pending: VecDeque<(i64, Vec<u8>)>,
    packets_in: u64,
    packets_fwd: u64,
    bytes_fwd: u64,
    max_packet: usize,
    min_packet: usize,
    drops: Vec<Drop>,
    late: Vec<f64>,
    write_errors: u64,
    last_write_error: String,
}

impl Link {
    fn new(rate_bps: Option<f64>, buffer: Option<u64>, delay_s: f64, overhead: u64) -> Link {
        Link {
            rate_bps,
            buffer: buffer.map(|b| usize::try_from(b).unwrap_or(usize::MAX)),
            delay_ns: (delay_s * 1e9).round() as i64,
            overhead,
            svc: VecDeque::new(),
            cum_bytes: 0,
            last_end: i64::MIN,
            pending: VecDeque::new(),
            packets_in: 0,
            packets_fwd: 0,
            bytes_fwd: 0,
            max_packet: 0,
            min_packet: usize::MAX,
            drops: Vec::new(),
            late: Vec::new(),
            write_errors: 0,
            last_write_error: String::new(),
        }
    }

    /// Packets (and their bytes) waiting at `t`: arrived at or before `t`,
    /// service not started. Needs every packet with start > t still in `svc`.
    fn waiting(&self, t: i64) -> (usize, u64) {
        let first_waiting = self.svc.partition_point(|s| s.start <= t);
        let first_future = self.svc.partition_point(|s| s.arrival <= t);
        if first_future <= first_waiting {
            return (0, 0);
        }
        let bytes_to = |i: usize| self.svc.get(i).map_or(self.cum_bytes, |s| s.cum_before);
        (first_future - first_waiting, bytes_to(first_future) - bytes_to(first_waiting))
    }

    /// Forgets packets whose service ended at or before `t`.
    fn prune(&mut self, t: i64, rate: f64) {
        while let Some(s) = self.svc.front() {
            let end = s.start + ser_ns(s.bytes, rate);
            if end > t {
                break;
            }
            self.svc.pop_front();
        }
    }

    /// A packet read at `now`: schedule it, or drop it (returns false).
    /// `isn` is the initial sequence number of the packet's connection, if its SYN was seen.
    fn arrive(&mut self, now: i64, pkt: Vec<u8>, tcp: Option<&TcpView>, isn: Option<u32>) -> bool {
        self.packets_in += 1;
        self.max_packet = self.max_packet.max(pkt.len());
        self.min_packet = self.min_packet.min(pkt.len());
        let bytes = pkt.len() as u64 + self.overhead;
        let Some(rate) = self.rate_bps else {
            self.pending.push_back((now + self.delay_ns, pkt));
            return true;
        };
        let busy = self.last_end > now;
        let (waiting, _) = self.waiting(now);
        if busy && self.buffer.is_some_and(|b| waiting >= b) {
            self.drops.push(Drop {
                t: now,
                sport: tcp.map(|v| v.sport),
                seq: tcp.map(|v| v.seq.wrapping_sub(isn.unwrap_or(0))),
                payload: tcp.map_or(0, |v| v.payload),
                waiting,
            });
            return false;
        }
        let start = now.max(self.last_end);
        let end = start + ser_ns(bytes, rate);
        self.svc.push_back(Svc { arrival: now, start, bytes, cum_before: self.cum_bytes });
        self.cum_bytes += bytes;
        self.last_end = end;
        self.pending.push_back((end + self.delay_ns, pkt));
        true
    }

    /// Writes every packet due at `now` to `fd`.
    fn deliver(&mut self, fd: libc::c_int) {
        loop {
            let Some((due, _)) = self.pending.front() else { return };
            let due = *due;
            let t = mono_ns();
            if due > t {
                return;
            }
            let Some((_, pkt)) = self.pending.pop_front() else { return };
            // SAFETY: pkt is a valid buffer of pkt.len() bytes; fd is an open TUN.
            let n = unsafe { libc::write(fd, pkt.as_ptr().cast(), pkt.len()) };
            if n < 0 {
                self.write_errors += 1;
                self.last_write_error = std::io::Error::last_os_error().to_string();
                continue;
            }
            self.late.push(secs(t - due));
            self.packets_fwd += 1;
            self.bytes_fwd += pkt.len() as u64;
        }
    }
}

/// Serialization time of `bytes` at `rate` bit/s, in ns.
fn ser_ns(bytes: u64, rate: f64) -> i64 {
    (bytes as f64 * 8.0 * 1e9 / rate).round() as i64
}

struct LateStats {
    mean: f64,
    p99: f64,
    max: f64,
    over_1ms: usize,
    count: usize,
}

fn late_stats(v: &[f64]) -> LateStats {
    if v.is_empty() {
        return LateStats { mean: 0.0, p99: 0.0, max: 0.0, over_1ms: 0, count: 0 };
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let idx = ((s.len() as f64 * 0.99).ceil() as usize).clamp(1, s.len()) - 1;
    LateStats {
        mean: s.iter().sum::<f64>() / s.len() as f64,
        p99: s[idx],
        max: s[s.len() - 1],
        over_1ms: s.iter().filter(|&&x| x > 1e-3).count(),
        count: s.len(),
    }
}

fn late_json(s: &LateStats) -> Value {
    json!({"mean_s": s.mean, "p99_s": s.p99, "max_s": s.max, "over_1ms": s.over_1ms, "count": s.count})
}

fn link_json(l: &Link) -> Value {
    json!({
        "packets_in": l.packets_in,
        "packets_fwd": l.packets_fwd,
        "packets_dropped": l.drops.len(),
        "bytes_fwd": l.bytes_fwd,
        "max_packet_bytes": if l.packets_in > 0 { l.max_packet } else { 0 },
        "min_packet_bytes": if l.packets_in > 0 { l.min_packet } else { 0 },
        "pending_at_stop": l.pending.len(),
        "write_errors": l.write_errors,
        "last_write_error": l.last_write_error,
        "late": late_json(&late_stats(&l.late)),
    })
}

/// Asks for SCHED_FIFO; returns what the loop runs under.
fn set_realtime() -> String {
    let p = libc::sched_param { sched_priority: 50 };
    // SAFETY: p is a valid sched_param; 0 is this thread.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) } == 0 {
        "SCHED_FIFO 50".into()
    } else {
        format!("SCHED_OTHER (SCHED_FIFO refused: {})", std::io::Error::last_os_error())
    }
}

fn install_signals() -> Vec<(libc::c_int, libc::sigaction)> {
    let mut old = Vec::new();
    for sig in [libc::SIGTERM, libc::SIGINT] {
        // SAFETY: zeroed sigaction is valid; the handler only stores an atomic.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            let mut prev: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, &sa, &mut prev) == 0 {
                old.push((sig, prev));
            }
        }
    }
    old
}

fn restore_signals(old: Vec<(libc::c_int, libc::sigaction)>) {
    for (sig, prev) in old {
        // SAFETY: restores the action sigaction returned.
        unsafe { libc::sigaction(sig, &prev, std::ptr::null_mut()) };
    }
}

fn write_file(path: &Path, body: &str) -> Result<(), String> {
    fs::write(path, body).map_err(|e| format!("writing {}: {e}", path.display()))
}

/// Runs the forwarder (see the module documentation); returns the summary
/// that it also writes to `out_dir/forwarder.json`.
pub fn run(cfg: &Config) -> Result<String, String> {
    fs::create_dir_all(&cfg.out_dir).map_err(|e| format!("out_dir: cannot create {}: {e}", cfg.out_dir.display()))?;
    let snd = open_tun(&cfg.tun_snd)?;
    let rcv = open_tun(&cfg.tun_rcv)?;
    let sched = if cfg.realtime { set_realtime() } else { "SCHED_OTHER (realtime off)".into() };
    STOP.store(false, Ordering::SeqCst);
    let old_signals = install_signals();
    let ready = json!({"pid": std::process::id(), "tun_snd": cfg.tun_snd, "tun_rcv": cfg.tun_rcv});
    write_file(&cfg.ready_file, &ready.to_string())?;
    let result = forward(cfg, &snd, &rcv, sched);
    restore_signals(old_signals);
    result
}

fn forward(cfg: &Config, snd: &OwnedFd, rcv: &OwnedFd, sched: String) -> Result<String, String> {
    let delay = cfg.delay_s;
    let mut data = Link::new(Some(cfg.rate_bps), Some(cfg.buffer_packets), delay, cfg.overhead_bytes);
    let mut rev = Link::new(cfg.reverse_rate_bps, cfg.reverse_buffer_packets, delay, cfg.overhead_bytes);
    let (fd_snd, fd_rcv) = (snd.as_raw_fd(), rcv.as_raw_fd());
    let interval = (cfg.sample_interval_s * 1e9).round() as i64;
    let spin = (cfg.spin_s * 1e9).round() as i64;
    let stall = (cfg.stall_s * 1e9).round() as i64;

    let started = mono_ns();
    let deadline = cfg.duration_s.map(|d| started + (d * 1e9).round() as i64);
    let mut next_sample = started;
    let mut next_stop_check = started;
    let mut queue_rows = String::from("time_monotonic,packets,bytes\n");
    let mut stalls: Vec<(f64, f64)> = Vec::new();
    // Initial sequence number per source port (one per connection of a multi-flow run);
    // `isn` is the first connection's, as before.
    let mut isns: std::collections::BTreeMap<u16, u32> = std::collections::BTreeMap::new();
    let mut isn: Option<u32> = None;
    let mut t0: Option<i64> = None;
    let mut last_iter = started;
    let mut buf = vec![0u8; 65536];
    let mut read_errors = 0u64;
    let mut last_read_error = String::new();
    let mut stop_reason = "signal";

    loop {
        let now = mono_ns();
        if now - last_iter > stall {
            stalls.push((secs(last_iter), secs(now - last_iter)));
        }
        last_iter = now;
        if STOP.load(Ordering::SeqCst) {
            break;
        }
        if deadline.is_some_and(|d| now >= d) {
            stop_reason = "duration";
            break;
        }
        if now >= next_stop_check {
            next_stop_check = now + 10_000_000;
            if cfg.stop_file.as_deref().is_some_and(Path::exists) {
                stop_reason = "stop_file";
                break;
            }
        }
        // Queue samples, in virtual time: nothing before a taken sample is needed again.
        while next_sample <= now {
            let (p, b) = data.waiting(next_sample);
            let _ = writeln!(queue_rows, "{:.9},{p},{b}", secs(next_sample));
            data.prune(next_sample, cfg.rate_bps);
            next_sample += interval;
        }
        data.deliver(fd_rcv);
        rev.deliver(fd_snd);
        // Everything readable now.
        for (fd, is_data) in [(fd_snd, true), (fd_rcv, false)] {
            loop {
                // SAFETY: buf is a valid buffer of buf.len() bytes; fd is an open TUN.
                let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
                if n < 0 {
                    let e = std::io::Error::last_os_error();
                    if !matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EINTR)) {
                        // EIO while the device is down (before it is moved and set up); keep going.
                        read_errors += 1;
                        last_read_error = e.to_string();
                    }
                    break;
                }
                let n = usize::try_from(n).unwrap_or(0);
                if n == 0 {
                    break;
                }
                let t = mono_ns();
                let pkt = buf[..n].to_vec();
                let tcp = tcp_view(&pkt);
                if is_data {
                    if let Some(v) = &tcp {
                        if v.syn && !v.ack {
                            isns.insert(v.sport, v.seq);
                            isn.get_or_insert(v.seq);
                        }
                        if v.payload > 0 && t0.is_none() {
                            t0 = Some(t);
                        }
                    }
                    let flow_isn = tcp.as_ref().and_then(|v| isns.get(&v.sport).copied());
                    data.arrive(t, pkt, tcp.as_ref(), flow_isn);
                } else {
                    rev.arrive(t, pkt, None, None);
                }
            }
        }
        // Sleep until the next event (a delivery or a sample), spinning the last `spin` ns.
        let mut due = next_sample.min(now + MAX_SLEEP_NS);
        for l in [&data, &rev] {
            if let Some((d, _)) = l.pending.front() {
                due = due.min(*d);
            }
        }
        if let Some(d) = deadline {
            due = due.min(d);
        }
        let wait = due - mono_ns() - spin;
        if wait > 0 {
            let ts = libc::timespec { tv_sec: wait / 1_000_000_000, tv_nsec: wait % 1_000_000_000 };
            let mut fds = [
                libc::pollfd { fd: fd_snd, events: libc::POLLIN, revents: 0 },
                libc::pollfd { fd: fd_rcv, events: libc::POLLIN, revents: 0 },
            ];
            // SAFETY: fds and ts are valid for the call; a null sigmask keeps the current mask.
            unsafe { libc::ppoll(fds.as_mut_ptr(), 2, &ts, std::ptr::null()) };
        }
    }
    let stopped = mono_ns();

    let mut drops = String::from("time_monotonic,seq,payload_bytes,queue_packets,sport\n");
    for d in &data.drops {
        let seq = d.seq.map_or(String::new(), |s| s.to_string());
        let sport = d.sport.map_or(String::new(), |p| p.to_string());
        let _ = writeln!(drops, "{:.9},{seq},{},{},{sport}", secs(d.t), d.payload, d.waiting);
    }
    write_file(&cfg.out_dir.join("forwarder_drops.csv"), &drops)?;
    write_file(&cfg.out_dir.join("forwarder_queue.csv"), &queue_rows)?;

    let mut all_late = data.late.clone();
    all_late.extend_from_slice(&rev.late);
    let all = late_stats(&all_late);
    let summary = json!({
        "started_monotonic": secs(started),
        "stopped_monotonic": secs(stopped),
        "stop_reason": stop_reason,
        "t0_monotonic": t0.map(secs),
        "isn": isn,
        "isns": isns.iter().map(|(p, i)| (p.to_string(), json!(i))).collect::<serde_json::Map<_, _>>(),
        "scheduling": sched,
        "rate_bps": cfg.rate_bps,
        "delay_s": cfg.delay_s,
        "buffer_packets": cfg.buffer_packets,
        "reverse_rate_bps": cfg.reverse_rate_bps,
        "reverse_buffer_packets": cfg.reverse_buffer_packets,
        "overhead_bytes": cfg.overhead_bytes,
        "late_mean_s": all.mean,
        "late_p99_s": all.p99,
        "late_max_s": all.max,
        "late_over_1ms": all.over_1ms,
        "late_count": all.count,
        "stall_threshold_s": cfg.stall_s,
        "stalls": stalls.iter().map(|&(t, l)| json!([t, l])).collect::<Vec<_>>(),
        "packets_fwd": data.packets_fwd,
        "packets_dropped": data.drops.len(),
        "bytes_fwd": data.bytes_fwd,
        "read_errors": read_errors,
        "last_read_error": last_read_error,
        "data": link_json(&data),
        "reverse": link_json(&rev),
    });
    let text = serde_json::to_string_pretty(&summary).map_err(|e| format!("summary: {e}"))?;
    write_file(&cfg.out_dir.join("forwarder.json"), &text)?;
    Ok(text)
}
