//! The wire format of the handles that cross processes ([`Frame`]): magic,
//! version, what the driver's 64 bytes are ([`Kind`]), the element type's
//! size, alignment and fingerprint, the length, the exporter, and a
//! checksum.

use crate::error::{Error, Result};
use crate::memory::exporter::Exporter;

/// The wire format: magic, version, what the handle is.
pub(super) const MAGIC: [u8; 4] = *b"CMIP";
pub(super) const VERSION: u16 = 1;

/// What a handle's 64 driver bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// A `CUipcMemHandle` of `cuMemAlloc` memory.
    Memory = 1,
    /// A `CUmemPoolPtrExportData` of a shareable pool's allocation.
    PoolPointer = 2,
    /// A zero-length buffer: nothing to map.
    Empty = 3,
    /// A `CUipcEventHandle`.
    Event = 4,
}

impl Kind {
    pub(super) fn from_u8(b: u8) -> Option<Self> {
        [Self::Memory, Self::PoolPointer, Self::Empty, Self::Event]
            .into_iter()
            .find(|k| *k as u8 == b)
    }
}

/// Encoding and decoding of the common frame: header, the 64 driver bytes,
/// kind-specific numbers, the exporter, an FNV-1a checksum.
pub(super) struct Frame {
    pub(super) kind: Kind,
    pub(super) raw: [u8; 64],
    /// `[bytes, len, size_of::<T>, align_of::<T>, T::__LAYOUT]`; zeros for events.
    pub(super) numbers: [u64; 5],
    pub(super) exporter: Exporter,
}

/// Bytes of an encoded [`Frame`].
pub(super) const FRAME_BYTES: usize = 4 + 2 + 1 + 1 + 64 + 5 * 8 + 4 + 8 + 8 + 8;

pub(super) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

pub(super) fn corrupt(problem: String) -> Error {
    Error::Ipc {
        problem,
        remedy: "pass the exact bytes that `to_bytes` returned in the exporting process, \
                 exported by the same version of cuda-mem",
    }
}

impl Frame {
    pub(super) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(FRAME_BYTES);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.push(self.kind as u8);
        out.push(0);
        out.extend_from_slice(&self.raw);
        for n in self.numbers {
            out.extend_from_slice(&n.to_le_bytes());
        }
        out.extend_from_slice(&self.exporter.pid.to_le_bytes());
        out.extend_from_slice(&self.exporter.start.to_le_bytes());
        out.extend_from_slice(&self.exporter.pid_ns.to_le_bytes());
        let sum = fnv1a(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        debug_assert_eq!(out.len(), FRAME_BYTES);
        out
    }

    pub(super) fn decode(bytes: &[u8], what: &str) -> Result<Self> {
        if bytes.len() != FRAME_BYTES {
            return Err(corrupt(format!(
                "an encoded {what} is {FRAME_BYTES} bytes, these are {} (truncated or joined \
                 with other data?)",
                bytes.len()
            )));
        }
        if bytes[..4] != MAGIC {
            return Err(corrupt(format!(
                "these bytes are not a cuda-mem {what} (no magic)"
            )));
        }
        let (body, sum) = bytes.split_at(FRAME_BYTES - 8);
        if fnv1a(body).to_le_bytes() != sum {
            return Err(corrupt(format!(
                "the {what} bytes are corrupted (checksum mismatch)"
            )));
        }
        let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap_or_default());
        let version = u16::from_le_bytes([bytes[4], bytes[5]]);
        if version != VERSION {
            return Err(corrupt(format!(
                "the {what} has format version {version}, this cuda-mem reads version {VERSION}"
            )));
        }
        let kind = Kind::from_u8(bytes[6])
            .ok_or_else(|| corrupt(format!("unknown {what} kind {}", bytes[6])))?;
        let mut raw = [0u8; 64];
        raw.copy_from_slice(&bytes[8..72]);
        let numbers = [0, 1, 2, 3, 4].map(|i| u64_at(72 + 8 * i));
        let pid = u32::from_le_bytes(bytes[112..116].try_into().unwrap_or_default());
        Ok(Self {
            kind,
            raw,
            numbers,
            exporter: Exporter {
                pid,
                start: u64_at(116),
                pid_ns: u64_at(124),
            },
        })
    }
}
