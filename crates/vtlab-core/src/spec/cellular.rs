//! User input for a cellular link direction: a mahimahi trace (a file or inline
//! timestamps) or the LTE channel model, resolved into a checked
//! [`CapacityConf`].

use std::sync::Arc;

use serde::Deserialize;

use super::SpecError;
use crate::net::cellular::trace::{parse_mahimahi, MAHIMAHI_OPPORTUNITY_BYTES};
use crate::net::cellular::CapacityConf;

/// Largest trace file read (bytes): 1 GiB, checked before reading.
pub const MAX_TRACE_FILE_BYTES: u64 = 1 << 30;

/// One cellular direction's capacity: exactly one of `trace`, `trace_ms`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapacitySpec {
    /// Path of a mahimahi trace file (relative to the working directory).
    pub trace: Option<String>,
    /// The trace's timestamps inline (ms).
    pub trace_ms: Option<Vec<u64>>,
    /// Bytes per delivery opportunity (default 1504, mahimahi's).
    pub opportunity_bytes: Option<u32>,
}

/// Read and check a mahimahi trace file; errors name `path` (the field) and
/// the file's line.
pub fn read_trace_file(file: &str, path: &str) -> Result<Arc<[u64]>, SpecError> {
    let meta = std::fs::metadata(file)
        .map_err(|e| SpecError::new(path, format!("cannot read trace file '{file}': {e}")))?;
    if meta.len() > MAX_TRACE_FILE_BYTES {
        return Err(SpecError::new(
            path,
            format!(
                "trace file '{file}' has {} bytes, more than the {MAX_TRACE_FILE_BYTES} accepted",
                meta.len()
            ),
        ));
    }
    let text = std::fs::read_to_string(file)
        .map_err(|e| SpecError::new(path, format!("cannot read trace file '{file}': {e}")))?;
    parse_mahimahi(&text)
        .map(Arc::from)
        .map_err(|e| SpecError::new(path, format!("trace file '{file}': {e}")))
}

impl CapacitySpec {
    pub fn resolve(&self, path: &str) -> Result<CapacityConf, SpecError> {
        let bytes = self.opportunity_bytes.unwrap_or(MAHIMAHI_OPPORTUNITY_BYTES);
        if !(1..=1_000_000).contains(&bytes) {
            return Err(SpecError::new(
                format!("{path}.opportunity_bytes"),
                format!("{bytes} is outside [1, 1000000] bytes"),
            ));
        }
        match (&self.trace, &self.trace_ms) {
            (Some(file), None) => Ok(CapacityConf::Trace {
                source: file.clone(),
                opportunity_bytes: bytes,
                times_ms: read_trace_file(file, &format!("{path}.trace"))?,
            }),
            (None, Some(times)) => {
                let text: String = times.iter().map(|t| format!("{t}\n")).collect();
                let times = parse_mahimahi(&text).map_err(|e| {
                    let at = if e.line > 0 {
                        format!("[{}]", e.line - 1)
                    } else {
                        String::new()
                    };
                    let msg = e.message;
                    SpecError::new(format!("{path}.trace_ms{at}"), msg)
                })?;
                Ok(CapacityConf::Trace {
                    source: "inline".into(),
                    opportunity_bytes: bytes,
                    times_ms: Arc::from(times),
                })
            }
            _ => Err(SpecError::new(
                path,
                "give exactly one of trace (a mahimahi file) or trace_ms (its timestamps)".into(),
            )),
        }
    }
}

/// Resolve an optional capacity.
pub(crate) fn resolve_opt(
    spec: Option<&CapacitySpec>,
    path: &str,
) -> Result<Option<CapacityConf>, SpecError> {
    spec.map(|s| s.resolve(path)).transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactly_one_source() {
        let e = CapacitySpec::default().resolve("x").unwrap_err();
        assert!(e.message.starts_with("give exactly one of trace"));
        let s = CapacitySpec {
            trace: Some("a".into()),
            trace_ms: Some(vec![1]),
            ..Default::default()
        };
        assert!(s.resolve("x").is_err());
    }

    #[test]
    fn inline_errors_name_the_element() {
        let s = CapacitySpec {
            trace_ms: Some(vec![1, 5, 3]),
            ..Default::default()
        };
        let e = s.resolve("links[0].capacity_ab").unwrap_err();
        assert_eq!(e.path, "links[0].capacity_ab.trace_ms[2]");
        assert!(e.message.contains("must not decrease"), "{}", e.message);
    }

    #[test]
    fn file_errors_name_the_file_and_line() {
        let dir = std::env::temp_dir().join(format!("vtlab-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("bad.down");
        std::fs::write(&f, "1\n2\nbanana\n").unwrap();
        let s = CapacitySpec {
            trace: Some(f.to_string_lossy().into()),
            ..Default::default()
        };
        let e = s.resolve("capacity_down").unwrap_err();
        assert_eq!(e.path, "capacity_down.trace");
        assert!(
            e.message.contains("line 3: expected a time"),
            "{}",
            e.message
        );
        let missing = CapacitySpec {
            trace: Some(dir.join("nope").to_string_lossy().into()),
            ..Default::default()
        };
        assert!(missing
            .resolve("t")
            .unwrap_err()
            .message
            .contains("cannot read"));
        std::fs::remove_dir_all(&dir).ok();
    }
}
