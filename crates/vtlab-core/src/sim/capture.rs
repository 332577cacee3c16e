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
//! With no capture requested none of this exists: the simulation checks one
//! `Option` per packet enqueued and per packet delivered.

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
use crate::net::{NodeId, Packet, PacketKind, IP_HEADER_BYTES};
use crate::spec::SpecError;
use crate::tcp::Recovery;

use super::plan::{self, Plan};

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

/// The files a capture wrote, and its first error if writing failed.
#[derive(Clone, Debug, Default)]
pub struct CaptureReport {
    /// (path, packets written), in file order.
    pub files: Vec<(PathBuf, u64)>,
    pub error: Option<String>,
}

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
/// `buf`; returns the frame's original length. With `payload` false only the
/// headers are written.
pub(crate) fn frame(
    w: &FlowWire,
    p: &Packet,
    id: u16,
    hop: (NodeId, NodeId),
    payload: bool,
    buf: &mut Vec<u8>,
) -> u32 {
    let toward = p.toward_receiver();
    let (src, dst, _, _) = w.ends(toward);
    let mut tcp = tcp_header(w, p);
    let (src_ip, dst_ip) = (node_ip(src), node_ip(dst));
    let len = p.len as usize;
    tcp.checksum = tcp
        .calc_checksum_ipv4_raw(src_ip, dst_ip, &ZEROS[..len])
        .expect("segment fits IPv4");
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
    let mut ip = Ipv4Header::new(frag_len as u16, TTL, IpNumber::TCP, src_ip, dst_ip)
        .expect("datagram fits IPv4");
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
    (Ethernet2Header::LEN + Ipv4Header::MIN_LEN + frag_len) as u32
}

struct CaptureFile {
    path: PathBuf,
    writer: Option<PcapWriter<BufWriter<File>>>,
    packets: u64,
}

/// Identity of a datagram along its path (fragments share it).
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
    /// IPv4 identification of the datagrams on their way, and how many of
    /// their fragments are still on it.
    ids: HashMap<Datagram, (u16, u32)>,
    /// Next IPv4 identification, per source node.
    next_id: Vec<u16>,
    buf: Vec<u8>,
    error: Option<String>,
}

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
    let dirs: Vec<(NodeId, NodeId)> = plan.directions().map(|(_, a, b)| (a, b)).collect();
    let links: Vec<u32> = plan
        .directions()
        .map(|(l, _, _)| l.params.mtu_bytes)
        .collect();
    let mtu = plan::path(&plan.routes, &dirs, from, to)
        .unwrap_or_default()
        .iter()
        .map(|&d| links[d as usize])
        .min()
        .unwrap_or(u32::MAX);
    // As `Packet::fragments`.
    ((mtu.saturating_sub(IP_HEADER_BYTES)) / 8 * 8).max(8)
}

impl Capture {
    /// Check the request against the plan (every name a node or link, the
    /// directory writable) and open the files with their pcap headers.
    pub fn open(plan: &Plan, req: &CaptureRequest) -> Result<Self, SpecError> {
        let node_index = |n: &str| plan.nodes.iter().position(|x| x == n);
        // Capture points: (file name, node, link or None for every link).
        let mut points: Vec<(String, NodeId, Option<usize>)> = Vec::new();
        let all = req.points.is_empty() || req.points.iter().any(|p| p == "all");
        if all {
            for (i, n) in plan.nodes.iter().enumerate() {
                points.push((format!("{}.pcap", safe_name(n)), NodeId(i as u32), None));
            }
        }
        for name in req.points.iter().filter(|p| *p != "all") {
            let node = node_index(name);
            let link = plan.links.iter().position(|l| &l.name == name);
            if node.is_none() && link.is_none() {
                let links: Vec<&str> = plan.links.iter().map(|l| l.name.as_str()).collect();
                return Err(SpecError::new(
                    "pcap",
                    format!(
                        "unknown link or node '{name}' (links: {}; nodes: {})",
                        links.join(", "),
                        plan.nodes.join(", ")
                    ),
                ));
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
                return Err(SpecError::new(
                    "pcap",
                    format!("two capture points would share the file name '{file}'"),
                ));
            }
        }
        std::fs::create_dir_all(&req.dir).map_err(|e| {
            SpecError::new(
                "pcap",
                format!("cannot create directory {}: {e}", req.dir.display()),
            )
        })?;
        let files = points
            .iter()
            .map(|(file, ..)| open_file(&req.dir.join(file)))
            .collect::<Result<Vec<_>, _>>()?;
        let dirs: Vec<(NodeId, NodeId)> = plan.directions().map(|(_, a, b)| (a, b)).collect();
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
                    shift: window_shift(f.tcp.recv_buffer),
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
            files,
            payload: req.payload,
            dirs,
            tx,
            rx,
            flows,
            ids: HashMap::new(),
            next_id: vec![0; plan.nodes.len()],
            buf: Vec::with_capacity(2048),
            error: None,
        })
    }

    /// Link direction `d` accepted `p` into its transmit queue at `now`.
    pub(crate) fn sent(&mut self, now: Time, d: u32, p: &Packet) {
        let (from, to) = self.dirs[d as usize];
        let w = &self.flows[p.flow as usize];
        let origin = if p.toward_receiver() { w.src } else { w.dst };
        let id = if from == origin {
            let next = &mut self.next_id[origin.0 as usize];
            let entry = self.ids.entry(Datagram::of(p)).or_insert_with(|| {
                let id = *next;
                *next = next.wrapping_add(1);
                (id, 0)
            });
            entry.1 += 1;
            entry.0
        } else {
            self.ids.get(&Datagram::of(p)).map_or(0, |e| e.0)
        };
        self.record(now, d, p, id, (from, to), true);
    }

    /// `p` reached the far end of link direction `d` at `now`.
    pub(crate) fn delivered(&mut self, now: Time, d: u32, p: &Packet) {
        let (from, to) = self.dirs[d as usize];
        let id = self.ids.get(&Datagram::of(p)).map_or(0, |e| e.0);
        self.record(now, d, p, id, (from, to), false);
        if to == p.dst {
            self.forget(p);
        }
    }

    /// `p` was dropped on link direction `d`: lost on the link (`on_link`),
    /// or refused by its full queue.
    pub(crate) fn dropped(&mut self, d: u32, p: &Packet, on_link: bool) {
        let w = &self.flows[p.flow as usize];
        let origin = if p.toward_receiver() { w.src } else { w.dst };
        // A fragment its source's own queue refused never got an identity.
        if on_link || self.dirs[d as usize].0 != origin {
            self.forget(p);
        }
    }

    fn forget(&mut self, p: &Packet) {
        let key = Datagram::of(p);
        if let Some(e) = self.ids.get_mut(&key) {
            e.1 -= 1;
            if e.1 == 0 {
                self.ids.remove(&key);
            }
        }
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
        let orig_len = frame(
            &self.flows[p.flow as usize],
            p,
            id,
            hop,
            self.payload,
            &mut self.buf,
        );
        let ts = std::time::Duration::from_nanos(now.0);
        let packet = PcapPacket::new(ts, orig_len, &self.buf);
        for &f in files {
            let file = &mut self.files[f];
            if let Some(w) = file.writer.as_mut() {
                match w.write_packet(&packet) {
                    Ok(_) => file.packets += 1,
                    Err(e) => {
                        self.error = Some(format!("cannot write {}: {e}", file.path.display()));
                        return;
                    }
                }
            }
        }
    }

    /// Flush and close every file.
    pub(crate) fn finish(mut self) -> CaptureReport {
        for f in &mut self.files {
            if let Some(w) = f.writer.take() {
                if let Err(e) = w.into_writer().flush() {
                    self.error
                        .get_or_insert_with(|| format!("cannot write {}: {e}", f.path.display()));
                }
            }
        }
        CaptureReport {
            files: self
                .files
                .into_iter()
                .map(|f| (f.path, f.packets))
                .collect(),
            error: self.error,
        }
    }
}

fn open_file(path: &Path) -> Result<CaptureFile, SpecError> {
    let fail = |e: String| SpecError::new("pcap", format!("cannot write {}: {e}", path.display()));
    let file = File::create(path).map_err(|e| fail(e.to_string()))?;
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
    let writer =
        PcapWriter::with_header(BufWriter::new(file), header).map_err(|e| fail(e.to_string()))?;
    Ok(CaptureFile {
        path: path.to_owned(),
        writer: Some(writer),
        packets: 0,
    })
}
