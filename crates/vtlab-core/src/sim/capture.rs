//! Packet captures: what the simulated packets would look like on the wire,
//! written as pcap files that Wireshark and tshark read.
//!
//! A capture point is an interface: one end of a link. A node's capture holds
//! every interface of the node (like `tcpdump -i any`), a link's capture is
//! one file per end. At the sending end a packet is recorded when the link
//! accepts it into its transmit queue (a packet the full queue drops is not
//! recorded, as tcpdump does not see qdisc drops); at the receiving end it is
//! recorded when it arrives, unless the link's loss model drops it. A packet
//! lost on a link is therefore present at the sending end and absent at the
//! receiving end.
//!
//! The mapping of simulated fields to wire fields is fixed (docs/captures.md):
//! node i is 10.0.0.(i+1) (carrying into the higher octets past 254 nodes)
//! with MAC 02:00:00:00:00:(i+1); flow i runs from port 49152 + i mod 8192 to
//! port 57344 + i / 8192 mod 8192; both initial sequence numbers are 2³² − 1,
//! so that the wire sequence and acknowledgement numbers are vtlab's byte
//! offsets (mod 2³²) and Wireshark's relative numbers are the offsets plus one
//! (the SYN takes one); timestamps are in ms; the window field carries the
//! advertised window shifted by the smallest scale that fits the receive
//! buffer; IPv4 identifications count datagrams per source node, and fragments
//! carry them with their offsets and MF flag. Payloads are zero-filled (or
//! omitted, keeping the true original length).
//!
//! With no capture requested none of this runs: the event handlers are
//! compiled with and without the capture hooks (`Simulation::handle::<CAPTURE>`)
//! and the event loop picks one by a single predictable branch per event; the
//! handlers without captures contain no capture code at all.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use etherparse::{
    EtherType, Ethernet2Header, IpFragOffset, IpNumber, Ipv4Header, TcpHeader, TcpOptionElement,
};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, Endianness, TsResolution};

use crate::engine::Time;
use crate::metrics::CaptureReport;
use crate::net::family::{AnyFamily, LinkFamily};
use crate::net::{NodeId, Packet, PacketKind, IP_HEADER_BYTES};
use crate::tcp::cc::Profile;
use crate::tcp::{Recovery, TcpConfig};

use super::plan::Plan;

/// What to capture and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaptureRequest {
    /// Directory of the capture files (created if missing).
    pub dir: PathBuf,
    /// Node and link names as in the scenario; empty or `["all"]`: every node.
    pub points: Vec<String>,
    /// Write the zero-filled payload (`true`) or only the headers, keeping the
    /// true original length (`false`).
    pub payload: bool,
}

impl CaptureRequest {
    /// Every node of the scenario, with payloads, into `dir`.
    pub fn all(dir: impl Into<PathBuf>) -> Self {
        CaptureRequest {
            dir: dir.into(),
            points: Vec::new(),
            payload: true,
        }
    }
}

/// A capture request that cannot be honoured (an unknown name, a directory
/// or file that cannot be written), in one line; `SpecError` at path `pcap`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaptureError(pub String);

impl std::fmt::Display for CaptureError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pcap: {}", self.0)
    }
}

impl std::error::Error for CaptureError {}

/// The initial sequence number of both ends: the SYN is 2³² − 1, the first
/// data byte (offset 0) is sequence number 0.
pub const ISN: u32 = u32::MAX;
/// Time to live of every datagram (not decremented per hop).
pub const TTL: u8 = 64;
/// The largest frame written: 65535 B IP datagrams in Ethernet.
const SNAPLEN: u32 = 65_535 + 14;

static ZEROS: [u8; 65_536] = [0; 65_536];

/// IPv4 address of node `i`: 10.0.0.(i+1), carrying into the higher octets.
pub fn node_ip(node: NodeId) -> [u8; 4] {
    let n = node.0 + 1;
    [10, (n >> 16) as u8, (n >> 8) as u8, n as u8]
}

/// MAC address of node `i`: locally administered, 02:00 then i+1 big-endian.
pub fn node_mac(node: NodeId) -> [u8; 6] {
    let n = (node.0 + 1).to_be_bytes();
    [0x02, 0, n[0], n[1], n[2], n[3]]
}

/// (sender port, receiver port) of flow `i`.
pub fn flow_ports(i: u32) -> (u16, u16) {
    (
        49_152 + (i % 8192) as u16,
        57_344 + ((i / 8192) % 8192) as u16,
    )
}

/// Smallest window-scale shift (RFC 7323, at most 14) with which `buffer`
/// fits the 16-bit window field.
pub fn window_shift(buffer: u64) -> u8 {
    (0..14u8).find(|&s| buffer >> s <= 65_535).unwrap_or(14)
}

/// The largest window a flow's receiver may advertise: its buffer, or under
/// the `linux` profile's autotuning (tcp/autotune.rs) the buffer's limit.
fn largest_window(tcp: &TcpConfig) -> u64 {
    if tcp.profile == Profile::Linux && tcp.rwnd.is_fixed() {
        tcp.recv_buffer.max(tcp.recv_buffer_max)
    } else {
        tcp.recv_buffer
    }
}

/// Wire settings of one flow.
#[derive(Clone, Debug)]
pub(crate) struct FlowWire {
    pub src: NodeId,
    pub dst: NodeId,
    pub sport: u16,
    pub dport: u16,
    pub mss: u16,
    pub shift: u8,
    pub sack: bool,
    pub timestamps: bool,
    /// The sender's own receive buffer (its window field on data segments).
    pub recv_buffer: u64,
    /// Fragment payload size toward the receiver and toward the sender.
    pub frag_payload: [u32; 2],
}

impl FlowWire {
    fn ends(&self, toward_receiver: bool) -> (NodeId, NodeId, u16, u16) {
        if toward_receiver {
            (self.src, self.dst, self.sport, self.dport)
        } else {
            (self.dst, self.src, self.dport, self.sport)
        }
    }
}

fn ms(t: Time) -> u32 {
    (t.0 / 1_000_000) as u32
}

/// The TCP header of `p` as flow `w` puts it on the wire, and its payload
/// length.
pub(crate) fn tcp_header(w: &FlowWire, p: &Packet) -> TcpHeader {
    let toward = p.toward_receiver();
    let (_, _, sport, dport) = w.ends(toward);
    let ts = TcpOptionElement::Timestamp(ms(p.ts_val), ms(p.ts_ecr));
    let mut h = TcpHeader::new(sport, dport, 0, 0);
    let mut opts: Vec<TcpOptionElement> = Vec::with_capacity(8);
    use TcpOptionElement::{
        MaximumSegmentSize, Noop, SelectiveAcknowledgement, SelectiveAcknowledgementPermitted,
        WindowScale,
    };
    match p.kind {
        PacketKind::Syn | PacketKind::SynAck => {
            h.syn = true;
            h.sequence_number = ISN;
            if p.kind == PacketKind::SynAck {
                h.ack = true;
                h.acknowledgment_number = p.ack as u32;
                h.window_size = p.rwnd.min(65_535) as u16;
            } else {
                h.window_size = w.recv_buffer.min(65_535) as u16;
            }
            // Linux's order: MSS, SACK-permitted, timestamps, NOP, window scale.
            opts.push(MaximumSegmentSize(w.mss));
            match (w.sack, w.timestamps) {
                (true, true) => opts.extend([SelectiveAcknowledgementPermitted, ts]),
                (true, false) => opts.extend([Noop, Noop, SelectiveAcknowledgementPermitted]),
                (false, true) => opts.extend([Noop, Noop, ts]),
                (false, false) => {}
            }
            opts.extend([Noop, WindowScale(w.shift)]);
        }
        PacketKind::Data | PacketKind::Ack => {
            h.ack = true;
            if p.kind == PacketKind::Data {
                h.sequence_number = p.seq as u32;
                h.acknowledgment_number = 0;
                h.window_size = (w.recv_buffer >> w.shift).min(65_535) as u16;
            } else {
                h.sequence_number = 0;
                h.acknowledgment_number = p.ack as u32;
                h.window_size = (p.rwnd >> w.shift).min(65_535) as u16;
            }
            // As vtlab counts option bytes: timestamps (10 B) and SACK
            // (2 + 8 B per block), padded to a multiple of 4 with NOPs first.
            let blocks = p.sack_blocks();
            let sack = blocks.split_first().map(|(&(s, e), rest)| {
                let mut more = [None; 3];
                for (m, &(s, e)) in more.iter_mut().zip(rest) {
                    *m = Some((s as u32, e as u32));
                }
                SelectiveAcknowledgement((s as u32, e as u32), more)
            });
            match (w.timestamps, sack) {
                (true, Some(s)) => opts.extend([ts, s]),
                (true, None) => opts.extend([Noop, Noop, ts]),
                (false, Some(s)) => opts.extend([Noop, Noop, s]),
                (false, None) => {}
            }
        }
    }
    h.set_options(&opts)
        .expect("vtlab's options fit the 40 B option space");
    h
}

/// Append the Ethernet frame of fragment `p` (one hop, `from` → `to`) to
/// `buf`; returns the frame's original length, or why the datagram cannot be
/// written (larger than IPv4 allows: only with headers smaller than the real
/// ones). With `payload` false only the headers are written.
pub(crate) fn frame(
    w: &FlowWire,
    p: &Packet,
    id: u16,
    hop: (NodeId, NodeId),
    payload: bool,
    buf: &mut Vec<u8>,
) -> Result<u32, String> {
    let toward = p.toward_receiver();
    let (src, dst, _, _) = w.ends(toward);
    let mut tcp = tcp_header(w, p);
    let (src_ip, dst_ip) = (node_ip(src), node_ip(dst));
    let len = p.len as usize;
    let too_big = |_| format!("a {}-byte TCP segment does not fit IPv4", p.len);
    tcp.checksum = tcp
        .calc_checksum_ipv4_raw(src_ip, dst_ip, &ZEROS[..len])
        .map_err(too_big)?;
    let segment = tcp.header_len() + len;
    // Fragment i carries [i·per, i·per + per) of the segment (RFC 791: a
    // multiple of 8 bytes except the last), as `Packet::fragments` cut it.
    let per = w.frag_payload[usize::from(!toward)] as usize;
    let (offset, frag_len, more) = if p.frag_count <= 1 {
        (0, segment, false)
    } else {
        let offset = usize::from(p.frag_index) * per;
        let last = p.frag_index + 1 == p.frag_count;
        let frag_len = if last {
            segment.saturating_sub(offset)
        } else {
            per
        };
        (offset, frag_len, !last)
    };
    let mut ip = u16::try_from(frag_len)
        .ok()
        .and_then(|n| Ipv4Header::new(n, TTL, IpNumber::TCP, src_ip, dst_ip).ok())
        .ok_or_else(|| format!("a {}-byte IPv4 datagram is too large", frag_len + 20))?;
    ip.identification = id;
    ip.dont_fragment = false;
    ip.more_fragments = more;
    ip.fragment_offset = IpFragOffset::try_new((offset / 8) as u16).expect("offset fits");
    ip.header_checksum = ip.calc_header_checksum();
    let eth = Ethernet2Header {
        source: node_mac(hop.0),
        destination: node_mac(hop.1),
        ether_type: EtherType::IPV4,
    };
    buf.extend_from_slice(&eth.to_bytes());
    buf.extend_from_slice(&ip.to_bytes());
    let header = tcp.to_bytes();
    // The bytes of [offset, offset + frag_len) of header ++ zeros.
    let end = offset + frag_len;
    let in_header = header.len().min(end).saturating_sub(offset);
    if offset < header.len() {
        buf.extend_from_slice(&header[offset..offset + in_header]);
    }
    if payload {
        buf.extend_from_slice(&ZEROS[..frag_len - in_header]);
    }
    Ok((Ethernet2Header::LEN + Ipv4Header::MIN_LEN + frag_len) as u32)
}

struct CaptureFile {
    path: PathBuf,
    writer: Option<PcapWriter<BufWriter<File>>>,
    packets: u64,
}

/// What identical datagrams share: copies sent by the same node in the same
/// nanosecond (two duplicate ACKs) have the same key and are told apart by
/// [`Identities`].
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Datagram {
    flow: u32,
    kind: u8,
    seq: u64,
    ack: u64,
    sent: u64,
}

impl Datagram {
    fn of(p: &Packet) -> Self {
        Datagram {
            flow: p.flow,
            kind: p.kind as u8,
            seq: p.seq,
            ack: p.ack,
            sent: p.ts_val.0,
        }
    }
}

/// Where one fragment of a datagram on its way is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Place {
    /// At this node: its source before a link accepted it, or a router
    /// between two links (in the queue disc or refused by the queue).
    At(NodeId),
    /// On this link direction: accepted by its queue, not yet arrived.
    On(u32),
    /// Delivered to its destination, or dropped.
    Gone,
}

/// One copy of a datagram on its way.
struct Instance {
    /// Given when its first fragment leaves its source.
    id: Option<u16>,
    /// Where each fragment is.
    places: Vec<Place>,
    /// Fragments not yet gone.
    left: u32,
}

/// The IPv4 identifications of the datagrams on their way (docs/captures.md).
///
/// Identical copies of a datagram travel through the same FIFO queues in the
/// order they were sent, so each key keeps its live copies oldest first, and
/// an event moves the fragment of the oldest copy whose fragment of that
/// index is where the event says (a link's sending end: at its `from` node;
/// its receiving end or a loss on the link: on the link). Only at the source
/// is a copy made, when no live copy's fragment is still there; it takes the
/// source's next identification when its first fragment leaves (a datagram
/// its source's queue refuses wholly takes none). A copy is forgotten once
/// every fragment is delivered or dropped. Cost: one lookup and a scan of the
/// copies of one key (one but for identical copies at once).
struct Identities {
    copies: HashMap<Datagram, Vec<Instance>>,
    /// Next identification, per source node.
    next: Vec<u16>,
}

impl Identities {
    fn new(nodes: usize) -> Self {
        Identities {
            copies: HashMap::new(),
            next: vec![0; nodes],
        }
    }

    /// Fragment `p` went from `hop.0` onto direction `d`; `source` is the
    /// node that sent its datagram. Returns its identification.
    fn sent(&mut self, d: u32, hop: (NodeId, NodeId), source: NodeId, p: &Packet) -> u16 {
        let at_source = hop.0 == source;
        self.step(p, source, at_source, Place::At(hop.0), Place::On(d))
    }

    /// Fragment `p` reached `hop.1` over direction `d`.
    fn delivered(&mut self, d: u32, hop: (NodeId, NodeId), source: NodeId, p: &Packet) -> u16 {
        let to = if hop.1 == p.dst {
            Place::Gone
        } else {
            Place::At(hop.1)
        };
        self.step(p, source, false, Place::On(d), to)
    }

    /// Fragment `p` was dropped on direction `d`: lost on the link
    /// (`on_link`), or refused at `hop.0` by its queue or queue disc.
    fn dropped(
        &mut self,
        d: u32,
        hop: (NodeId, NodeId),
        source: NodeId,
        p: &Packet,
        on_link: bool,
    ) {
        if on_link {
            self.step(p, source, false, Place::On(d), Place::Gone);
        } else {
            let at_source = hop.0 == source;
            self.step(p, source, at_source, Place::At(hop.0), Place::Gone);
        }
    }

    /// Move fragment `p` of the oldest copy that has it at `from` to `to`
    /// (making a copy when there is none and `make` allows it) and return the
    /// copy's identification; 0 for a fragment of no known copy, which the
    /// simulation's order of events does not produce.
    fn step(&mut self, p: &Packet, source: NodeId, make: bool, from: Place, to: Place) -> u16 {
        let key = Datagram::of(p);
        let index = usize::from(p.frag_index);
        let count = usize::from(p.frag_count.max(1));
        let copies = if make {
            self.copies.entry(key).or_default()
        } else {
            match self.copies.get_mut(&key) {
                Some(c) => c,
                None => return 0,
            }
        };
        let found = copies
            .iter()
            .position(|c| c.places.get(index) == Some(&from));
        let k = match found {
            Some(k) => k,
            None if make => {
                copies.push(Instance {
                    id: None,
                    places: vec![from; count],
                    left: count as u32,
                });
                copies.len() - 1
            }
            None => return 0,
        };
        let copy = &mut copies[k];
        copy.places[index] = to;
        if copy.id.is_none() && matches!(to, Place::On(_)) {
            let next = &mut self.next[source.0 as usize];
            copy.id = Some(*next);
            *next = next.wrapping_add(1);
        }
        let id = copy.id.unwrap_or(0);
        if to == Place::Gone {
            copy.left -= 1;
            if copy.left == 0 {
                copies.remove(k);
                if copies.is_empty() {
                    self.copies.remove(&key);
                }
            }
        }
        id
    }
}

/// The open captures of one run.
pub struct Capture {
    files: Vec<CaptureFile>,
    payload: bool,
    /// Per link direction: its (from, to) nodes and the files recording its
    /// sending end and its receiving end.
    dirs: Vec<(NodeId, NodeId)>,
    tx: Vec<Vec<usize>>,
    rx: Vec<Vec<usize>>,
    flows: Vec<FlowWire>,
    /// IPv4 identifications of the datagrams on their way.
    ids: Identities,
    buf: Vec<u8>,
    error: Option<String>,
    /// Bytes written to the files so far (headers included).
    pub(crate) bytes: u64,
    /// The file and OS error code of the I/O failure behind `error`.
    os_error: Option<(PathBuf, i32)>,
    /// The directory, when this capture created it (removed again on failure).
    created_dir: Option<PathBuf>,
}

/// An I/O error as a message: the system's text without Rust's
/// " (os error N)" suffix, starting in lower case ("no space left on device").
pub fn io_text(e: &std::io::Error) -> String {
    let text = e.to_string();
    let text = text.find(" (os error ").map_or(&*text, |i| &text[..i]);
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |c| {
        c.to_lowercase().chain(chars).collect::<String>()
    })
}

/// The I/O error inside a pcap writer's error (its own text for an I/O
/// failure is only "Error reading bytes").
fn pcap_io(e: pcap_file::PcapError) -> std::io::Error {
    match e {
        pcap_file::PcapError::IoError(io) => io,
        other => std::io::Error::other(other.to_string()),
    }
}

/// The pcap file header: magic, version, zone, accuracy, snaplen, link type.
const PCAP_HEADER_BYTES: u64 = 24;

fn safe_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn path_fragment_payload(plan: &Plan, from: NodeId, to: NodeId) -> u32 {
    let mtu = plan.path_mtu(from, to);
    // As `Packet::fragments`.
    ((mtu.saturating_sub(IP_HEADER_BYTES)) / 8 * 8).max(8)
}

/// The file names of the capture points `points` names, in file order:
/// `NODE.pcap` for a node (every node for none or `all`), `LINK-NODE.pcap` for
/// each end of a link. An unknown name is an error naming it.
pub fn file_names(plan: &Plan, points: &[String]) -> Result<Vec<String>, CaptureError> {
    Ok(resolve_points(plan, points)?
        .into_iter()
        .map(|(f, ..)| f)
        .collect())
}

/// Capture points: (file name, node, link or `None` for every link of the node).
fn resolve_points(
    plan: &Plan,
    requested: &[String],
) -> Result<Vec<(String, NodeId, Option<usize>)>, CaptureError> {
    let node_index = |n: &str| plan.nodes.iter().position(|x| x == n);
    // Capture points: (file name, node, link or None for every link).
    let mut points: Vec<(String, NodeId, Option<usize>)> = Vec::new();
    let all = requested.is_empty() || requested.iter().any(|p| p == "all");
    if all {
        for (i, n) in plan.nodes.iter().enumerate() {
            points.push((format!("{}.pcap", safe_name(n)), NodeId(i as u32), None));
        }
    }
    for name in requested.iter().filter(|p| *p != "all") {
        let node = node_index(name);
        let link = plan.links.iter().position(|l| &l.name == name);
        if node.is_none() && link.is_none() {
            let links: Vec<&str> = plan.links.iter().map(|l| l.name.as_str()).collect();
            return Err(CaptureError(format!(
                "unknown link or node '{name}' (links: {}; nodes: {})",
                links.join(", "),
                plan.nodes.join(", ")
            )));
        }
        if let (Some(i), false) = (node, all) {
            points.push((format!("{}.pcap", safe_name(name)), NodeId(i as u32), None));
        }
        if let Some(l) = link {
            let pl = &plan.links[l];
            for end in [pl.a, pl.b] {
                let file = format!(
                    "{}-{}.pcap",
                    safe_name(&pl.name),
                    safe_name(&plan.nodes[end.0 as usize])
                );
                points.push((file, end, Some(l)));
            }
        }
    }
    let mut unique = Vec::with_capacity(points.len());
    for p in points {
        if !unique.contains(&p) {
            unique.push(p);
        }
    }
    let points = unique;
    for (i, (file, ..)) in points.iter().enumerate() {
        if points[..i].iter().any(|(f, ..)| f == file) {
            return Err(CaptureError(format!(
                "two capture points would share the file name '{file}'"
            )));
        }
    }
    Ok(points)
}

/// Captures are written at link-direction ends only: a plan with a shared
/// medium or with request/response sessions is refused.
fn refuse_unsupported(plan: &Plan) -> Result<(), CaptureError> {
    if let Some(m) = plan.media.first() {
        return Err(CaptureError(format!(
            "packet captures of {} media are not supported yet (medium '{}')",
            AnyFamily::kind(&m.conf),
            AnyFamily::conf_name(&m.conf)
        )));
    }
    if let Some(c) = plan.sessions.first() {
        // A session's two flows are one connection on the wire (ACKs riding
        // on data), which the per-flow TCP headers here do not write yet.
        return Err(CaptureError(format!(
            "packet captures of request/response sessions are not supported yet (session '{}')",
            c.name
        )));
    }
    Ok(())
}

impl Capture {
    /// Check the request against the plan (every name a node or link, the
    /// directory writable) and open the files with their pcap headers.
    pub fn open(plan: &Plan, req: &CaptureRequest) -> Result<Self, CaptureError> {
        refuse_unsupported(plan)?;
        let points = resolve_points(plan, &req.points)?;
        let created_dir = (!req.dir.exists()).then(|| req.dir.clone());
        let names: Vec<&str> = points.iter().map(|(f, ..)| f.as_str()).collect();
        let files = open_files(&req.dir, &names, created_dir.as_deref())?;
        let dirs = plan.dirs.clone();
        let link_of: Vec<usize> = (0..plan.links.len()).flat_map(|l| [l, l]).collect();
        let at = |node: NodeId, link: usize| -> Vec<usize> {
            points
                .iter()
                .enumerate()
                .filter(|(_, (_, n, l))| *n == node && l.is_none_or(|l| l == link))
                .map(|(i, _)| i)
                .collect()
        };
        let tx = dirs
            .iter()
            .zip(&link_of)
            .map(|(&(from, _), &l)| at(from, l))
            .collect();
        let rx = dirs
            .iter()
            .zip(&link_of)
            .map(|(&(_, to), &l)| at(to, l))
            .collect();
        let flows = plan
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let (sport, dport) = flow_ports(i as u32);
                FlowWire {
                    src: f.src,
                    dst: f.dst,
                    sport,
                    dport,
                    mss: f.tcp.mss.min(65_535) as u16,
                    shift: window_shift(largest_window(&f.tcp)),
                    sack: f.tcp.recovery == Recovery::Sack,
                    timestamps: f.tcp.timestamps,
                    recv_buffer: f.tcp.recv_buffer,
                    frag_payload: [
                        path_fragment_payload(plan, f.src, f.dst),
                        path_fragment_payload(plan, f.dst, f.src),
                    ],
                }
            })
            .collect();
        Ok(Capture {
            payload: req.payload,
            dirs,
            tx,
            rx,
            flows,
            ids: Identities::new(plan.nodes.len()),
            bytes: PCAP_HEADER_BYTES * files.len() as u64,
            files,
            buf: Vec::with_capacity(2048),
            error: None,
            os_error: None,
            created_dir,
        })
    }

    /// The node that sent `p`'s datagram.
    fn source(&self, p: &Packet) -> NodeId {
        let w = &self.flows[p.flow as usize];
        if p.toward_receiver() {
            w.src
        } else {
            w.dst
        }
    }

    /// Link direction `d` accepted `p` into its transmit queue at `now`.
    #[cold]
    #[inline(never)]
    pub(crate) fn sent(&mut self, now: Time, d: u32, p: &Packet) {
        let hop = self.dirs[d as usize];
        let id = self.ids.sent(d, hop, self.source(p), p);
        self.record(now, d, p, id, hop, true);
    }

    /// `p` reached the far end of link direction `d` at `now`.
    #[cold]
    #[inline(never)]
    pub(crate) fn delivered(&mut self, now: Time, d: u32, p: &Packet) {
        let hop = self.dirs[d as usize];
        let id = self.ids.delivered(d, hop, self.source(p), p);
        self.record(now, d, p, id, hop, false);
    }

    /// `p` was dropped on link direction `d`: lost on the link (`on_link`),
    /// or refused by its queue or queue disc.
    #[cold]
    #[inline(never)]
    pub(crate) fn dropped(&mut self, d: u32, p: &Packet, on_link: bool) {
        let hop = self.dirs[d as usize];
        self.ids.dropped(d, hop, self.source(p), p, on_link);
    }

    fn record(&mut self, now: Time, d: u32, p: &Packet, id: u16, hop: (NodeId, NodeId), tx: bool) {
        let files = if tx {
            &self.tx[d as usize]
        } else {
            &self.rx[d as usize]
        };
        if files.is_empty() || self.error.is_some() {
            return;
        }
        self.buf.clear();
        let w = &self.flows[p.flow as usize];
        let orig_len = match frame(w, p, id, hop, self.payload, &mut self.buf) {
            Ok(n) => n,
            Err(e) => {
                self.error = Some(format!("cannot capture: {e}"));
                return;
            }
        };
        let ts = std::time::Duration::from_nanos(now.0);
        let packet = PcapPacket::new(ts, orig_len, &self.buf);
        for &f in files {
            let file = &mut self.files[f];
            if let Some(w) = file.writer.as_mut() {
                match w.write_packet(&packet) {
                    Ok(n) => {
                        file.packets += 1;
                        self.bytes += n as u64;
                    }
                    Err(e) => {
                        let (error, os_error) = write_failure(&file.path, &pcap_io(e));
                        (self.error, self.os_error) = (Some(error), os_error);
                        return;
                    }
                }
            }
        }
    }

    /// Flush and close every file. After a failure (`error` set) the files
    /// are removed, so that no partial capture is left behind.
    pub(crate) fn finish(mut self) -> CaptureReport {
        for f in &mut self.files {
            if let Some(w) = f.writer.take() {
                if let Err(e) = w.into_writer().flush() {
                    if self.error.is_none() {
                        let (error, os_error) = write_failure(&f.path, &e);
                        (self.error, self.os_error) = (Some(error), os_error);
                    }
                }
            }
        }
        if self.error.is_some() {
            remove_files(
                self.files.iter().map(|f| &f.path),
                self.created_dir.as_deref(),
            );
        }
        CaptureReport {
            files: self
                .files
                .into_iter()
                .map(|f| (f.path, f.packets))
                .collect(),
            error: self.error,
            os_error: self.os_error,
        }
    }
}

/// The message and (file, OS error code) of a failed write to `path`.
fn write_failure(path: &Path, e: &std::io::Error) -> (String, Option<(PathBuf, i32)>) {
    (
        format!("cannot write {}: {}", path.display(), io_text(e)),
        e.raw_os_error().map(|code| (path.to_owned(), code)),
    )
}

/// Remove `files` (regular files and links only), then `dir` if it is then
/// empty (a directory the capture created); errors are ignored (the
/// capture's own error is reported).
fn remove_files<'a>(files: impl Iterator<Item = &'a PathBuf>, dir: Option<&Path>) {
    for f in files {
        // A link is removed, never the device or FIFO it may lead to.
        let plain = std::fs::symlink_metadata(f)
            .is_ok_and(|m| m.file_type().is_file() || m.file_type().is_symlink());
        if plain {
            let _ = std::fs::remove_file(f);
        }
    }
    if let Some(d) = dir {
        let _ = std::fs::remove_dir(d);
    }
}

/// Create `dir` and open the capture files `names` in it; on failure remove
/// what was created (the directory too when it is `created`), so that no
/// partial capture is left behind.
fn open_files(
    dir: &Path,
    names: &[&str],
    created: Option<&Path>,
) -> Result<Vec<CaptureFile>, CaptureError> {
    std::fs::create_dir_all(dir).map_err(|e| {
        CaptureError(format!(
            "cannot create directory {}: {}",
            dir.display(),
            io_text(&e)
        ))
    })?;
    let mut files = Vec::with_capacity(names.len());
    for name in names {
        let path = dir.join(name);
        match open_file(&path) {
            Ok(f) => files.push(f),
            Err(e) => {
                remove_files(files.iter().map(|f| &f.path), created);
                return Err(open_failure(&path, &e, names.len()));
            }
        }
    }
    Ok(files)
}

/// EMFILE: the process may not open another file.
const EMFILE: i32 = 24;

/// Why `path`, one of `files` capture files, could not be opened.
fn open_failure(path: &Path, e: &std::io::Error, files: usize) -> CaptureError {
    let hint = if e.raw_os_error() == Some(EMFILE) {
        format!(
            ": the capture opens {files} files at once, more than this process may open \
             (raise the limit, ulimit -n, or capture fewer points)"
        )
    } else {
        String::new()
    };
    CaptureError(format!(
        "cannot write {}: {}{hint}",
        path.display(),
        io_text(e)
    ))
}

/// Create `path` and write the pcap file header (a file whose header could
/// not be written is removed again).
fn open_file(path: &Path) -> Result<CaptureFile, std::io::Error> {
    Ok(CaptureFile {
        path: path.to_owned(),
        writer: Some(pcap_writer(path)?),
        packets: 0,
    })
}

/// A new pcap file of Ethernet frames with nanosecond timestamps (the
/// simulation's captures and the emulator's, [`crate::emu`]).
pub(crate) fn ethernet_pcap(path: &Path) -> Result<PcapWriter<BufWriter<File>>, CaptureError> {
    pcap_writer(path)
        .map_err(|e| CaptureError(format!("cannot write {}: {}", path.display(), io_text(&e))))
}

/// `path` created with the pcap file header written (removed again when the
/// header could not be written).
fn pcap_writer(path: &Path) -> Result<PcapWriter<BufWriter<File>>, std::io::Error> {
    let file = File::create(path)?;
    let header = PcapHeader {
        version_major: 2,
        version_minor: 4,
        ts_correction: 0,
        ts_accuracy: 0,
        snaplen: SNAPLEN,
        datalink: DataLink::ETHERNET,
        ts_resolution: TsResolution::NanoSecond,
        endianness: Endianness::Little,
    };
    PcapWriter::with_header(BufWriter::new(file), header).map_err(|e| {
        remove_files(std::iter::once(&path.to_owned()), None);
        pcap_io(e)
    })
}

#[cfg(test)]
mod tests {
    //! Expected values are computed by hand in the comments (RFC 791/793/7323
    //! layouts), then the frames are parsed back with etherparse.
    use super::*;
    use etherparse::{Ethernet2Header, Ipv4Header, TcpHeader};

    /// Flow 0 of the V2G preset (ns-3 profile): sa (node 0) to evcc (node 2),
    /// MSS 1460, 128 KiB buffers, SACK and timestamps, path MTU 1500.
    fn v2g_flow() -> FlowWire {
        FlowWire {
            src: NodeId(0),
            dst: NodeId(2),
            sport: 49_152,
            dport: 57_344,
            mss: 1460,
            shift: window_shift(131_072),
            sack: true,
            timestamps: true,
            recv_buffer: 131_072,
            frag_payload: [1480, 1480],
        }
    }

    fn packet(kind: PacketKind, seq: u64, len: u32, ip_bytes: u32) -> Packet {
        Packet {
            flow: 0,
            dst: NodeId(if kind == PacketKind::Syn || kind == PacketKind::Data {
                2
            } else {
                0
            }),
            kind,
            seq,
            len,
            ack: 0,
            rwnd: 0,
            ts_val: Time::ZERO,
            ts_ecr: Time::ZERO,
            ip_bytes,
            sack: Default::default(),
            sack_len: 0,
            frag_index: 0,
            frag_count: 1,
            piggyback: false,
            push: false,
        }
    }

    fn build(p: &Packet, id: u16, hop: (u32, u32), payload: bool) -> (Vec<u8>, u32) {
        let mut buf = Vec::new();
        let orig = frame(
            &v2g_flow(),
            p,
            id,
            (NodeId(hop.0), NodeId(hop.1)),
            payload,
            &mut buf,
        )
        .unwrap();
        (buf, orig)
    }

    fn parse(bytes: &[u8]) -> (Ethernet2Header, Ipv4Header, &[u8]) {
        let (eth, rest) = Ethernet2Header::from_slice(bytes).unwrap();
        let (ip, rest) = Ipv4Header::from_slice(rest).unwrap();
        (eth, ip, rest)
    }

    #[test]
    fn mapping_of_nodes_flows_and_windows() {
        assert_eq!(node_ip(NodeId(0)), [10, 0, 0, 1]);
        assert_eq!(node_ip(NodeId(255)), [10, 0, 1, 0]);
        assert_eq!(node_mac(NodeId(2)), [2, 0, 0, 0, 0, 3]);
        assert_eq!(flow_ports(0), (49_152, 57_344));
        assert_eq!(flow_ports(8193), (49_153, 57_345));
        // 131072 >> 1 = 65536 does not fit 16 bits, >> 2 = 32768 does.
        assert_eq!(window_shift(131_072), 2);
        assert_eq!(window_shift(65_535), 0);
        assert_eq!(window_shift(u64::MAX), 14);
        // The linux receiver autotunes up to 32 MiB: 2^25 >> 10 = 32768, the
        // scale Linux picks (ilog2(2^25) - 15); ns3 keeps its buffer.
        let linux = TcpConfig::defaults(Profile::Linux);
        assert_eq!(window_shift(largest_window(&linux)), 10);
        assert_eq!(
            window_shift(largest_window(&TcpConfig::defaults(Profile::Ns3))),
            2
        );
    }

    #[test]
    fn syn_bytes() {
        // The SYN at t = 0 from sa (10.0.0.1) to evcc (10.0.0.3), on its
        // first hop sa → secc (MACs 02:00:00:00:00:01 → …:02). Options, in
        // Linux's order: MSS 02 04 05 b4, SACK-permitted 04 02, timestamps
        // 08 0a + TSval 0 + TSecr 0, NOP 01, window scale 03 03 02: 20 B, so
        // the TCP header is 40 B, the IP datagram 60 B and the frame 74 B.
        let p = packet(PacketKind::Syn, 0, 0, 52);
        let (bytes, orig) = build(&p, 0, (0, 1), true);
        assert_eq!((bytes.len(), orig), (74, 74));
        assert_eq!(
            &bytes[..14],
            &[2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00]
        );
        let (eth, ip, rest) = parse(&bytes);
        assert_eq!(eth.ether_type, EtherType::IPV4);
        assert_eq!((ip.source, ip.destination), ([10, 0, 0, 1], [10, 0, 0, 3]));
        assert_eq!(
            (ip.total_len, ip.identification, ip.time_to_live),
            (60, 0, 64)
        );
        assert!(!ip.dont_fragment && !ip.more_fragments);
        // IP header checksum: 4500 + 003c + 0000 + 0000 + 4006 + 0a00 + 0001
        // + 0a00 + 0003 = 9946, complemented: 66b9.
        assert_eq!(ip.header_checksum, 0x66b9);
        let (tcp, payload) = TcpHeader::from_slice(rest).unwrap();
        assert!(payload.is_empty());
        assert_eq!((tcp.source_port, tcp.destination_port), (49_152, 57_344));
        assert_eq!(
            (tcp.sequence_number, tcp.acknowledgment_number),
            (u32::MAX, 0)
        );
        assert!(tcp.syn && !tcp.ack && !tcp.fin && !tcp.rst);
        assert_eq!((tcp.header_len(), tcp.window_size), (40, 65_535));
        assert_eq!(
            tcp.options.as_slice(),
            &[2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 0, 0, 0, 0, 0, 1, 3, 3, 2]
        );
        // TCP checksum: pseudo-header 0a00+0001+0a00+0003+0006+0028 = 1432;
        // header c000+e000+ffff+ffff+0000+0000+a002+ffff+0+0 = 53fff;
        // options 0204+05b4+0402+080a+0103+0302 = 17c9; total 56bfa, folded
        // 6bff, complemented 9400.
        assert_eq!(tcp.checksum, 0x9400);
        assert_eq!(&rest[16..18], &[0x94, 0x00]);
    }

    #[test]
    fn data_segment_with_timestamps_bytes() {
        // A Linux-profile segment of 1448 B at offset 14480 sent at
        // 12.345678 ms: TSval 12 (ms), TSecr 0 (vtlab's data segments echo
        // nothing); options NOP NOP + timestamps = 12 B; 20 + 32 + 1448 =
        // 1500 B, vtlab's size, so it is not fragmented.
        let mut p = packet(PacketKind::Data, 14_480, 1448, 1500);
        p.ts_val = Time(12_345_678);
        let (bytes, orig) = build(&p, 41, (1, 2), true);
        assert_eq!((bytes.len(), orig), (1514, 1514));
        let (eth, ip, rest) = parse(&bytes);
        assert_eq!(
            (eth.source, eth.destination),
            ([2, 0, 0, 0, 0, 2], [2, 0, 0, 0, 0, 3])
        );
        assert_eq!((ip.total_len, ip.identification), (1500, 41));
        assert_eq!(u32::from(ip.total_len), p.ip_bytes);
        assert!(!ip.more_fragments && ip.fragment_offset.value() == 0);
        let (tcp, payload) = TcpHeader::from_slice(rest).unwrap();
        assert_eq!(
            (tcp.sequence_number, tcp.acknowledgment_number),
            (14_480, 0)
        );
        assert!(tcp.ack && !tcp.syn);
        // The sender's window: its 131072 B buffer >> 2.
        assert_eq!(tcp.window_size, 32_768);
        assert_eq!(
            tcp.options.as_slice(),
            &[1, 1, 8, 10, 0, 0, 0, 12, 0, 0, 0, 0]
        );
        assert_eq!(payload, &[0u8; 1448][..]);
        assert_eq!(
            tcp.calc_checksum_ipv4(&ip, payload).unwrap(),
            tcp.checksum,
            "the checksum covers the zero payload"
        );
        // Without payload: the headers only, with the true original length.
        let (bytes, orig) = build(&p, 41, (1, 2), false);
        assert_eq!((bytes.len(), orig), (14 + 20 + 32, 1514));
    }

    #[test]
    fn ack_with_timestamps_and_sack_bytes() {
        // evcc acknowledges 14600 at t = 20 ms echoing 12 ms, holding two
        // out-of-order blocks (2920 B), so it advertises 131072 − 2920 =
        // 128152 B: window field 128152 >> 2 = 32038. Options as vtlab counts
        // them: timestamps (10 B) then SACK kind 5 length 2 + 2·8 = 18, 28 B
        // with no padding: vtlab's 40 + 28 = 68 B datagram.
        let mut p = packet(PacketKind::Ack, 0, 0, 68);
        p.ack = 14_600;
        p.rwnd = 128_152;
        p.ts_val = Time(20_000_000);
        p.ts_ecr = Time(12_000_000);
        p.sack[0] = (17_520, 18_980);
        p.sack[1] = (20_440, 21_900);
        p.sack_len = 2;
        let (bytes, orig) = build(&p, 3, (2, 1), true);
        assert_eq!((bytes.len(), orig), (82, 82));
        let (eth, ip, rest) = parse(&bytes);
        assert_eq!(
            (eth.source, eth.destination),
            ([2, 0, 0, 0, 0, 3], [2, 0, 0, 0, 0, 2])
        );
        assert_eq!((ip.source, ip.destination), ([10, 0, 0, 3], [10, 0, 0, 1]));
        assert_eq!(u32::from(ip.total_len), p.ip_bytes);
        let (tcp, payload) = TcpHeader::from_slice(rest).unwrap();
        assert!(payload.is_empty());
        assert_eq!((tcp.source_port, tcp.destination_port), (57_344, 49_152));
        assert_eq!(
            (tcp.sequence_number, tcp.acknowledgment_number),
            (0, 14_600)
        );
        assert_eq!(tcp.window_size, 32_038);
        #[rustfmt::skip]
        let options = [
            8, 10, 0, 0, 0, 20, 0, 0, 0, 12,      // TSval 20, TSecr 12
            5, 18,                                // SACK, 2 blocks
            0, 0, 0x44, 0x70, 0, 0, 0x4a, 0x24,   // 17520 = 0x4470, 18980 = 0x4a24
            0, 0, 0x4f, 0xd8, 0, 0, 0x55, 0x8c,   // 20440 = 0x4fd8, 21900 = 0x558c
        ];
        assert_eq!(tcp.options.as_slice(), &options);
        assert_eq!(tcp.calc_checksum_ipv4(&ip, &[]).unwrap(), tcp.checksum);
    }

    #[test]
    fn the_two_fragments_of_a_1512_byte_packet() {
        // ns-3 profile: 1460 B + 20 B TCP + 12 B timestamps = 1492 B of IP
        // payload, 1512 B datagram. At MTU 1500 the first fragment carries
        // (1500 − 20) / 8 · 8 = 1480 B at offset 0 with MF set (IP 1500 B,
        // frame 1514 B), the second the last 12 B at offset 1480 = 185 · 8,
        // MF clear (IP 32 B, frame 46 B); both carry identification 7.
        let p = packet(PacketKind::Data, 2920, 1460, 1512);
        let frags: Vec<Packet> = p.fragments(1500).collect();
        assert_eq!(frags.len(), 2);
        let (first, orig0) = build(&frags[0], 7, (0, 1), true);
        let (second, orig1) = build(&frags[1], 7, (0, 1), true);
        assert_eq!(
            (first.len(), orig0, second.len(), orig1),
            (1514, 1514, 46, 46)
        );
        let (_, ip0, rest0) = parse(&first);
        let (_, ip1, rest1) = parse(&second);
        assert_eq!(
            (ip0.total_len, ip0.identification, ip0.more_fragments),
            (1500, 7, true)
        );
        assert_eq!(ip0.fragment_offset.value(), 0);
        assert_eq!(
            (ip1.total_len, ip1.identification, ip1.more_fragments),
            (32, 7, false)
        );
        assert_eq!(ip1.fragment_offset.value(), 185);
        assert!(!ip0.dont_fragment && !ip1.dont_fragment);
        assert_eq!(ip0.header_checksum, ip0.calc_header_checksum());
        assert_eq!(ip1.header_checksum, ip1.calc_header_checksum());
        assert_eq!(u32::from(ip0.total_len), frags[0].ip_bytes);
        assert_eq!(u32::from(ip1.total_len), frags[1].ip_bytes);
        assert_eq!((rest0.len(), rest1.len()), (1480, 12));
        // Reassembled: a 32 B TCP header and 1460 zero bytes.
        let whole = [rest0, rest1].concat();
        let (tcp, payload) = TcpHeader::from_slice(&whole).unwrap();
        assert_eq!((tcp.header_len(), tcp.sequence_number), (32, 2920));
        assert_eq!(payload, &[0u8; 1460][..]);
        assert_eq!(tcp.calc_checksum_ipv4(&ip0, payload).unwrap(), tcp.checksum);
        // Headers only: the first fragment keeps its IP and TCP headers, the
        // second its IP header; original lengths stay true.
        let (h0, o0) = build(&frags[0], 7, (0, 1), false);
        let (h1, o1) = build(&frags[1], 7, (0, 1), false);
        assert_eq!(
            (h0.len(), o0, h1.len(), o1),
            (14 + 20 + 32, 1514, 14 + 20, 46)
        );
    }

    /// A line sa (node 0) → router (node 1) → evcc (node 2): direction 0 is
    /// 0 → 1, direction 2 is 1 → 2 (link l's directions are 2l and 2l + 1).
    const SRC: NodeId = NodeId(0);
    const D0: u32 = 0;
    const D2: u32 = 2;
    const HOP0: (NodeId, NodeId) = (NodeId(0), NodeId(1));
    const HOP2: (NodeId, NodeId) = (NodeId(1), NodeId(2));

    /// A data segment from node 0 to node 2 (a 1500 B datagram, not
    /// fragmented at MTU 1500) sent at `t` ns.
    fn segment(seq: u64, t: u64) -> Packet {
        let mut p = packet(PacketKind::Data, seq, 1448, 1500);
        p.ts_val = Time(t);
        p
    }

    #[test]
    fn identical_datagrams_sent_at_once_keep_their_own_ids_along_the_path() {
        // One segment first (id 0, delivered), then two identical copies at
        // t = 5 ns: the source counts them 1 and 2 as its queue takes them.
        // Each link is a FIFO, so the router receives and forwards them in
        // that order (1, 2) and the destination receives 1, then 2; the
        // router's send of the first happens before the second arrives.
        let mut ids = Identities::new(3);
        let first = segment(0, 0);
        assert_eq!(ids.sent(D0, HOP0, SRC, &first), 0);
        assert_eq!(ids.delivered(D0, HOP0, SRC, &first), 0);
        assert_eq!(ids.sent(D2, HOP2, SRC, &first), 0);
        assert_eq!(ids.delivered(D2, HOP2, SRC, &first), 0);
        let p = segment(1448, 5);
        assert_eq!(ids.sent(D0, HOP0, SRC, &p), 1);
        assert_eq!(ids.sent(D0, HOP0, SRC, &p), 2);
        assert_eq!(ids.delivered(D0, HOP0, SRC, &p), 1);
        assert_eq!(ids.sent(D2, HOP2, SRC, &p), 1);
        assert_eq!(ids.delivered(D0, HOP0, SRC, &p), 2);
        assert_eq!(ids.sent(D2, HOP2, SRC, &p), 2);
        assert_eq!(ids.delivered(D2, HOP2, SRC, &p), 1);
        assert_eq!(ids.delivered(D2, HOP2, SRC, &p), 2);
        // Both delivered: nothing is left to track, and the next datagram
        // of the source (another identical copy) is 3.
        assert!(ids.copies.is_empty());
        assert_eq!(ids.sent(D0, HOP0, SRC, &p), 3);
    }

    #[test]
    fn a_copy_dropped_on_the_way_leaves_the_other_its_id() {
        // Two identical copies take ids 0 and 1 at the source; the router's
        // full queue refuses the first (at node 1), so the one it forwards
        // is the other: 1 at the router's send and at the destination.
        let mut ids = Identities::new(3);
        let p = segment(0, 7);
        assert_eq!(ids.sent(D0, HOP0, SRC, &p), 0);
        assert_eq!(ids.sent(D0, HOP0, SRC, &p), 1);
        assert_eq!(ids.delivered(D0, HOP0, SRC, &p), 0);
        ids.dropped(D2, HOP2, SRC, &p, false);
        assert_eq!(ids.delivered(D0, HOP0, SRC, &p), 1);
        assert_eq!(ids.sent(D2, HOP2, SRC, &p), 1);
        assert_eq!(ids.delivered(D2, HOP2, SRC, &p), 1);
        assert!(ids.copies.is_empty());
        // Lost on the first link: the first copy (id 2) never arrives, the
        // second (id 3) arrives with its own id.
        let q = segment(1448, 9);
        assert_eq!(ids.sent(D0, HOP0, SRC, &q), 2);
        assert_eq!(ids.sent(D0, HOP0, SRC, &q), 3);
        ids.dropped(D0, HOP0, SRC, &q, true);
        assert_eq!(ids.delivered(D0, HOP0, SRC, &q), 3);
        assert_eq!(ids.sent(D2, HOP2, SRC, &q), 3);
        assert_eq!(ids.delivered(D2, HOP2, SRC, &q), 3);
        // Refused by the source's own queue: that copy takes no id, the
        // next copy takes 4.
        let r = segment(2896, 11);
        ids.dropped(D0, HOP0, SRC, &r, false);
        assert_eq!(ids.sent(D0, HOP0, SRC, &r), 4);
        assert_eq!(ids.delivered(D0, HOP0, SRC, &r), 4);
        assert_eq!(ids.sent(D2, HOP2, SRC, &r), 4);
        assert_eq!(ids.delivered(D2, HOP2, SRC, &r), 4);
        assert!(ids.copies.is_empty());
    }

    #[test]
    fn fragments_of_identical_datagrams_share_an_id_per_datagram() {
        // Two identical 1512 B segments, each cut into fragments 0 and 1 at
        // MTU 1500. A queue disc hashes later fragments apart from the
        // first (no ports), so the source may send them as 0, 0, 1, 1: the
        // first fragment 0 makes copy A (id 0), the second finds no fragment
        // 0 of a live copy still at the source and makes B (id 1); the
        // fragments 1 go to the oldest copy whose fragment 1 is still there:
        // A, then B. Fragments of one datagram share its id.
        let mut ids = Identities::new(3);
        let mut p = packet(PacketKind::Data, 0, 1460, 1512);
        p.ts_val = Time(3);
        let f: Vec<Packet> = p.fragments(1500).collect();
        assert_eq!(f.len(), 2);
        assert_eq!(ids.sent(D0, HOP0, SRC, &f[0]), 0);
        assert_eq!(ids.sent(D0, HOP0, SRC, &f[0]), 1);
        assert_eq!(ids.sent(D0, HOP0, SRC, &f[1]), 0);
        assert_eq!(ids.sent(D0, HOP0, SRC, &f[1]), 1);
        // The link keeps that order: the router receives 0, 1, 0, 1 and
        // forwards them as they come.
        for (frag, id) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            assert_eq!(ids.delivered(D0, HOP0, SRC, &f[frag]), id);
            assert_eq!(ids.sent(D2, HOP2, SRC, &f[frag]), id);
        }
        // The second copy's fragment 1 is lost on the last link; the rest
        // reach the destination with their ids.
        assert_eq!(ids.delivered(D2, HOP2, SRC, &f[0]), 0);
        assert_eq!(ids.delivered(D2, HOP2, SRC, &f[0]), 1);
        assert_eq!(ids.delivered(D2, HOP2, SRC, &f[1]), 0);
        ids.dropped(D2, HOP2, SRC, &f[1], true);
        assert!(ids.copies.is_empty());
        // Fragment 0 of a third copy refused by the source's queue: its
        // fragment 1 still takes a new id (2) for the copy, and a fourth
        // copy sent whole takes 3 for both fragments.
        ids.dropped(D0, HOP0, SRC, &f[0], false);
        assert_eq!(ids.sent(D0, HOP0, SRC, &f[1]), 2);
        assert_eq!(ids.sent(D0, HOP0, SRC, &f[0]), 3);
        assert_eq!(ids.sent(D0, HOP0, SRC, &f[1]), 3);
    }
}
