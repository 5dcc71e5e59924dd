//! Host `memcpy` for staged copies, with stores that bypass the CPU caches,
//! and the hint that moves freshly written lines to the shared cache.
//!
//! A staged copy to the host writes every byte of the caller's buffer once
//! and does not read it again, and a staged copy to the device of up to
//! 64 MiB writes its pinned slots the same way where the CPU cannot demote
//! lines to the shared cache (`demote`, which `staging` prefers there;
//! larger copies use ordinary stores, which measured faster). Ordinary stores first
//! read each destination cache line in (a read for ownership), so a copy
//! moves half as many bytes again; glibc's
//! `memcpy` switches to non-temporal stores
//! only for single copies larger than a share of the last-level cache,
//! which the pieces of a staged copy (64 KiB) are not. On x86-64 this copy
//! streams 64 bytes at a time with `movntdq` (SSE2, which every x86-64 CPU
//! has) and ends with an `sfence`, so its stores are visible to other
//! threads and to the copy engine before anything the thread does next;
//! elsewhere it is `copy_nonoverlapping`.

/// Copies `len` bytes from `src` to `dst` like `copy_nonoverlapping`, with
/// non-temporal stores where the target has them (see the module docs).
///
/// # Safety
/// As for [`std::ptr::copy_nonoverlapping`]: `src` readable and `dst`
/// writable for `len` bytes, not overlapping.
pub(crate) unsafe fn copy_streaming(src: *const u8, dst: *mut u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
        let head = dst.align_offset(16).min(len);
        let body = (len - head) / 64 * 64;
        // SAFETY: the first `head <= len` bytes of both (the caller's
        // contract).
        unsafe { std::ptr::copy_nonoverlapping(src, dst, head) };
        let mut at = head;
        while at < head + body {
            // SAFETY: bytes `at..at + 64` lie in both (`at + 64 <= head +
            // body <= len`); `dst + at` is 16-byte aligned (`head` aligns it,
            // and `at - head` is a multiple of 64); SSE2 is part of x86-64.
            unsafe {
                let s = src.add(at).cast::<__m128i>();
                let d = dst.add(at).cast::<__m128i>();
                let (a, b) = (_mm_loadu_si128(s), _mm_loadu_si128(s.add(1)));
                let (c, e) = (_mm_loadu_si128(s.add(2)), _mm_loadu_si128(s.add(3)));
                _mm_stream_si128(d, a);
                _mm_stream_si128(d.add(1), b);
                _mm_stream_si128(d.add(2), c);
                _mm_stream_si128(d.add(3), e);
            }
            at += 64;
        }
        // SAFETY: the last `len - at` bytes of both.
        unsafe { std::ptr::copy_nonoverlapping(src.add(at), dst.add(at), len - at) };
        // SAFETY: a store fence, with no operands.
        unsafe { _mm_sfence() };
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: the caller's contract.
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, len)
    };
}

/// Whether the CPU has `cldemote` (CPUID leaf 7, ECX bit 25): asked once.
pub(crate) fn can_demote() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::sync::OnceLock;
        static HAS: OnceLock<bool> = OnceLock::new();
        *HAS.get_or_init(|| {
            // SAFETY: `cpuid` exists on every x86-64 CPU; leaf 7 reads as
            // zeros where the CPU has fewer leaves (then the bit is clear).
            // (The intrinsic is a safe function from Rust 1.89; the MSRV,
            // 1.88, still needs the block.)
            #[allow(unused_unsafe)]
            let leaf7 = unsafe { std::arch::x86_64::__cpuid_count(7, 0) };
            leaf7.ecx & (1 << 25) != 0
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Moves the cache lines of `ptr..ptr + len`, just written by this thread,
/// from its core's caches to the shared last-level cache (`cldemote`, a
/// hint), so that a DMA reading them finds them there rather than in a
/// core's private cache. Where the CPU lacks `cldemote` the instruction is
/// a no-op (it is encoded in the hint-NOP space), as it is elsewhere than
/// on x86-64.
///
/// # Safety
/// `ptr..ptr + len` is memory of this process (Intel documents the hint
/// as changing no architectural state; cuda-mem does not lean on how it
/// treats addresses outside the process).
pub(crate) unsafe fn demote(ptr: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let mut at = (ptr as usize) & !63;
        let end = ptr as usize + len;
        while at < end {
            // SAFETY: `cldemote m8` (0F 1C /0, here `[rax]`) is a hint
            // that changes no architectural state, on a line of the
            // caller's range (the caller's contract).
            unsafe {
                std::arch::asm!(
                    ".byte 0x0f, 0x1c, 0x00",
                    in("rax") at,
                    options(nostack, preserves_flags, readonly)
                );
            }
            at += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (ptr, len);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Demoting lines changes no byte, at any alignment and length (also
    /// where the CPU lacks `cldemote`, whose encoding is then a no-op).
    #[test]
    fn demoting_changes_nothing() {
        let mut rng = crate::test_rng::Rng::new(0xde_0073);
        let bytes: Vec<u8> = (0..9_000).map(|_| rng.next() as u8).collect();
        let before = bytes.clone();
        for _ in 0..100 {
            let at = rng.below(bytes.len());
            let len = rng.below(bytes.len() - at + 1);
            // SAFETY: the range lies in `bytes`.
            unsafe { demote(bytes[at..].as_ptr(), len) };
        }
        // SAFETY: an empty range at the start of `bytes`.
        unsafe { demote(bytes.as_ptr(), 0) };
        assert_eq!(bytes, before);
        let _ = can_demote();
    }

    /// Every byte of every offset and length lands, and no byte around.
    #[test]
    fn copies_every_byte_at_every_alignment() {
        let mut rng = crate::test_rng::Rng::new(0xc0_9e57);
        let src: Vec<u8> = (0..70_000).map(|_| rng.next() as u8).collect();
        let mut cases: Vec<(usize, usize, usize)> = (0..48)
            .flat_map(|a| {
                [
                    (a, 47 - a, 0),
                    (a, a / 3, 1),
                    (a, (5 * a) % 64, 200 + 63 * a),
                ]
            })
            .collect();
        cases.extend((0..200).map(|_| (rng.below(64), rng.below(64), rng.below(65_000))));
        for (from, to, len) in cases {
            let mut dst = vec![0xa5u8; len + 128];
            // SAFETY: `from + len` and `to + len` lie inside the vectors.
            unsafe { copy_streaming(src.as_ptr().add(from), dst.as_mut_ptr().add(to), len) };
            assert_eq!(
                &dst[to..to + len],
                &src[from..from + len],
                "{from} -> {to}, {len}"
            );
            assert!(dst[..to].iter().chain(&dst[to + len..]).all(|&b| b == 0xa5));
        }
    }
}
