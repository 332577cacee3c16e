//! A TAP device: Ethernet frames in and out of the kernel through
//! `/dev/net/tun` (or the device the caller names), non-blocking. The device
//! lives as long as its file descriptor: closing it (also when the process is
//! killed) removes the interface.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;

pub struct Tap {
    fd: OwnedFd,
    pub name: String,
}

impl Tap {
    /// Create TAP interface `name` (at most 15 bytes) through the clone
    /// device `tun`.
    pub fn open(tun: &Path, name: &str) -> io::Result<Tap> {
        if name.is_empty() || name.len() >= libc::IFNAMSIZ {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("interface name '{name}' is not 1 to 15 bytes"),
            ));
        }
        let path = CString::new(tun.as_os_str().as_encoded_bytes())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        // SAFETY: a valid NUL-terminated path; the result is checked.
        let raw = unsafe {
            libc::open(
                path.as_ptr(),
                libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
            )
        };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a descriptor we just opened and own.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: an all-zero ifreq is valid; the name fits (checked above).
        let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
        for (dst, src) in req.ifr_name.iter_mut().zip(name.bytes()) {
            *dst = src as libc::c_char;
        }
        req.ifr_ifru.ifru_flags = (libc::IFF_TAP | libc::IFF_NO_PI) as libc::c_short;
        // SAFETY: TUNSETIFF reads and writes one ifreq.
        if unsafe { libc::ioctl(fd.as_raw_fd(), libc::TUNSETIFF, &mut req) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Tap {
            fd,
            name: name.to_string(),
        })
    }

    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Read one frame into `buf`; `None` when none is waiting.
    pub fn read(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        // SAFETY: `buf` is valid for `buf.len()` bytes.
        let n = unsafe { libc::read(self.raw(), buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(Some(n as usize));
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
            _ => Err(e),
        }
    }

    /// Hand one frame to the kernel; `false` when the kernel refused it
    /// (its queue toward the namespace is full, or the interface is down).
    pub fn write(&self, frame: &[u8]) -> io::Result<bool> {
        // SAFETY: `frame` is valid for `frame.len()` bytes.
        let n = unsafe { libc::write(self.raw(), frame.as_ptr().cast(), frame.len()) };
        if n >= 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EAGAIN | libc::EINTR | libc::ENOBUFS | libc::EIO) => Ok(false),
            _ => Err(e),
        }
    }
}
