//! The fill kernels of `cuda-mem`, written in Rust and compiled to PTX for
//! `nvptx64-nvidia-cuda`. The PTX ships inside the cuda-mem package
//! (`cuda-mem/ptx/fill-kernels.ptx`), so nobody who uses cuda-mem needs a
//! nightly toolchain; the `ptx` test of `tests/` rebuilds it with
//! `cuda_mem::build::KernelCrate` and fails when it differs from the shipped
//! file (`CUDA_MEM_BLESS_PTX=1` writes the fresh one instead).
//!
//! Each kernel fills `rows` rows of `row_bytes` bytes, `pitch` bytes apart,
//! starting at `base`, with a value of `size` bytes repeated from the start of
//! every row. Stores are 16-byte, coalesced (consecutive threads write
//! consecutive chunks). In the small and large kernels every thread writes
//! the same 16 bytes on each iteration: the host sizes the grid so that the
//! number of threads along a row is a multiple of the pattern's period in
//! chunks (or covers the row in one pass), which keeps each thread's phase
//! fixed. The medium kernel's threads may also step through the value
//! staged in shared memory (`ChunkCycle`), when the host sizes the grid
//! freely: the period of an odd element of thousands of bytes would
//! otherwise force thousands of blocks, each staging the whole value. The head of each row up to a
//! 256-byte boundary (`CHUNK_ALIGN`) and the tail after the last 16-byte chunk
//! are written byte by byte by the first threads (a row has at least 256).
//! The host guarantees `pitch % 256 == 0` when `rows > 1`, so every row splits
//! the same way.
//!
//! Nothing in this crate can panic: the arithmetic is division by values the
//! host checked to be non-zero, and the build uses `-Cpanic=immediate-abort`,
//! so the PTX holds no `.extern .func`.
//!
//! The kernels use cuda-mem's device std (`cuda_mem::device`) for the thread
//! indices, the grid-stride loops, the block's shared memory and barrier,
//! the shared-window loads and stores of the staged pattern
//! (`device::shared::{ld_shared, st_shared}`: `LDS` / `STS`, where the
//! shared array's plain accesses would go through generic addresses), and
//! the 16-byte and byte stores; the read of the pattern parameter by
//! address is assembly of its own.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

#[cfg(target_arch = "nvptx64")]
mod device {
    use core::arch::asm;
    use cuda_mem::device::shared::{ld_shared, st_shared, SharedWindow};
    use cuda_mem::device::{
        block_dim, block_idx, global_idx, grid_dim, grid_threads, store_global_u8, store_global_v4,
        sync_threads, thread_idx, GridStride,
    };
    use cuda_mem::fill_pattern::{
        byte_at, chunk_at, chunk_offset, pattern_words_read, split_row, ChunkCycle, MediumPattern,
        SmallPattern, FILL_BLOCK_THREADS, MEDIUM_PATTERN_WORDS, SMALL_PATTERN_WORDS,
    };
    use cuda_mem::launch::{__assume_block, __block_word};

    /// One 16-byte store to global memory.
    ///
    /// # Safety
    /// `addr` is 16-byte aligned and writable device memory.
    #[inline(always)]
    unsafe fn store16(addr: u64, v: [u32; 4]) {
        // SAFETY: forwarded from the caller.
        unsafe { store_global_v4(addr as *mut [u32; 4], v) }
    }

    /// Where word `i` of a staged pattern lies in its shared array: a
    /// padding word after every 32. A warp's lanes read windows into the
    /// pattern 16 bytes apart, so without the padding lanes 8 apart would
    /// read the same bank (four-way conflicts on each of a window's five
    /// loads); with it the 32 lanes read 32 banks. On an H100 (bench
    /// `--fill-only --quick`, eleven runs each over two machines,
    /// interleaved with the unpadded build) fills of 1000-byte elements
    /// went from 0.873-0.880 of `cuMemsetD32Async`'s speed to 0.889-0.896
    /// at 16 MiB, and from 0.743-0.765 to 0.732-0.786 at 1 MiB; the 12- to
    /// 256-byte rows and the 1 GiB rows stayed within each other's noise.
    /// (The medium kernel now takes 72 registers, not 64: three blocks per
    /// multiprocessor, which at these grids measured no slower.)
    #[inline(always)]
    const fn padded(i: u32) -> u32 {
        i + i / 32
    }

    /// One byte store to global memory.
    ///
    /// # Safety
    /// `addr` is writable device memory.
    #[inline(always)]
    unsafe fn store8(addr: u64, b: u8) {
        // SAFETY: forwarded from the caller.
        unsafe { store_global_u8(addr as *mut u8, b) }
    }

    /// The thread's index along a row and the number of threads along a row
    /// (the `x` axis of the grid; rows go along `y`, one block per row).
    #[inline(always)]
    fn thread_along_row() -> (u64, u64) {
        (global_idx().x as u64, grid_threads().x as u64)
    }

    /// Writes this thread's share of every row it owns: chunk `c` of a row
    /// gets `chunk(c)` (called for the thread's chunks in order, row after
    /// row).
    ///
    /// # Safety
    /// The region described by `base`, `pitch`, `row_bytes`, `rows` is writable
    /// device memory, `pitch % 256 == 0` when `rows > 1`, and `chunk(c)` is
    /// the value's bytes at chunk `c` (for the small and large kernels, a
    /// fixed chunk: the grid keeps the thread's phase fixed; see the crate
    /// docs).
    #[inline(always)]
    unsafe fn fill_rows(
        base: u64,
        pitch: u64,
        row_bytes: u64,
        rows: u64,
        mut chunk: impl FnMut(u64) -> [u32; 4],
        head_byte: impl Fn(u64) -> u8,
        tail_byte: impl Fn(u64) -> u8,
    ) {
        let split = split_row(base, row_bytes);
        let (tid, stride) = thread_along_row();
        let tail_at = row_bytes - split.tail + tid;
        // The head and tail bytes are worked out after the first row's
        // chunks are on their way (a division each, off the path to the
        // first store), then kept for the other rows.
        let (mut head, mut tail) = (None, None);
        let mut fill_row = |row_base: u64| {
            let first = row_base + split.head;
            // Four 16-byte stores in flight per iteration.
            GridStride::new(tid as usize, split.chunks as usize, stride as usize)
                .for_each_unrolled::<4>(|c| {
                    // SAFETY: the chunk is inside the row and 16-byte
                    // aligned by construction of `split`.
                    unsafe { store16(first + c as u64 * 16, chunk(c as u64)) }
                });
            if tid < split.head {
                let b = *head.get_or_insert_with(|| head_byte(tid));
                // SAFETY: the byte is inside the row.
                unsafe { store8(row_base + tid, b) };
            }
            if tid < split.tail {
                let b = *tail.get_or_insert_with(|| tail_byte(tail_at));
                // SAFETY: the byte is inside the row.
                unsafe { store8(row_base + tail_at, b) };
            }
        };
        // A linear fill (one row, the common case) skips the rows' loop and
        // its address arithmetic: on an H200, 1 MiB fills of 12 and 100 B
        // elements came 0.23-0.36 us over `cuMemsetD32Async` this way,
        // against 0.24-0.44 through the loop (1000 B: 0.76-0.82 against
        // 0.82-0.97).
        if rows == 1 {
            if block_idx().y == 0 {
                fill_row(base);
            }
        } else {
            let rows =
                GridStride::new(block_idx().y as usize, rows as usize, grid_dim().y as usize);
            for row in rows {
                fill_row(base + row as u64 * pitch);
            }
        }
    }

    /// Defines a by-parameter fill kernel `$name` whose last parameter is a
    /// `$pattern` of `$words` words (a multiple of 4). With `$cycling`, each
    /// thread's phase moves from chunk to chunk (`ChunkCycle`), so the grid
    /// may be any size; without, it is fixed.
    ///
    /// The block first copies the pattern words the fill reads into shared
    /// memory, 16 bytes per thread (laid out by [`padded`]), and every thread
    /// then reads its 16 bytes from there. Reading them straight from the
    /// parameter costs far more: the lanes of a warp start at up to `P`
    /// different offsets (`P` = the period in chunks, 25 for 100-byte
    /// elements), and the hardware serialises a warp's parameter reads by
    /// address, five reads per thread. The words are read by address from the
    /// kernel-parameter space (`ld.param` with a register address, which PTX
    /// allows for kernel parameters): indexing the Rust parameter would copy it
    /// to a local frame. A thread's offset into the value is worked out between
    /// its read and its write to shared memory, while the read is in flight.
    ///
    /// The copy is spread: 16-byte piece `q` goes to lane `q / warps` of warp
    /// `q % warps` rather than to thread `q`, so that a warp's lanes read a few
    /// addresses rather than up to 32 (a warp's parameter reads at different
    /// addresses go one after another). Measured on an H200 (1 MiB fills, GPU
    /// time over `cuMemsetD32Async`'s), it helps the small kernel (256-byte
    /// elements: 0.56-0.64 us over, against 0.72 with the plain order). For the
    /// medium one (H100, 2026-12-06, bench `--fill-only --quick`, three runs
    /// each, interleaved, medians): 1000-byte elements 0.67 us over at 1 MiB
    /// (0.77 in the plain order) and 0.874 of the memset at 16 MiB (0.858);
    /// over 1 GiB, 257-4013 B, 0.987-1.002 either way. (An early medium kernel
    /// measured the other way on an H200: 0.92 of the memset for 1000-byte
    /// elements over 1 GiB, against 0.97.) Capping the medium kernel's 64
    /// registers (`.maxnreg 40`: six blocks per multiprocessor rather than
    /// four) gained nothing in the same runs.
    ///
    /// The kernels assume their block size (`FILL_BLOCK_THREADS`, 256) and
    /// `size >= 1`, both promised by the launch, so the first read of the
    /// pattern waits only for `size` (which pieces to read), not for
    /// `blockDim` or a `size == 0` trap. On an H200 (bench `--fill-only
    /// --quick`, eight runs each, interleaved) that took the GPU time over
    /// `cuMemsetD32Async`'s from 0.34 to 0.25 us for 1 MiB fills of 12 and
    /// 100 B and from 0.44 to 0.33 us for 256 B; at 16 MiB from 0.39-0.46
    /// to 0.24-0.30 us for 12-256 B; and by 0.07-0.13 us for 1000 B.
    /// Reading every piece of the small pattern whatever `size` is, so that
    /// the read waits for no parameter, measured slower for 12 and 100 B
    /// (0.34 us over at 1 MiB): the extra reads and shared stores cost more
    /// than the wait they save. So did reading the whole parameter at an
    /// address from the thread index alone while the `blockDim` read stayed.
    macro_rules! by_parameter_fill {
        (
            $(#[$doc:meta])*
            $name:ident, $pattern:ty, $words:expr, $cycling:expr
        ) => {
            $(#[$doc])*
            ///
            /// # Safety
            /// See [`fill_rows`]; the launch has 1D blocks of
            /// [`FILL_BLOCK_THREADS`] (256), `1 <= size`, `(size - 1) / 4 + 5`
            /// is at most the pattern's words, and `row_bytes % size == 0`.
            #[no_mangle]
            pub unsafe extern "ptx-kernel" fn $name(
                base: u64,
                pitch: u64,
                row_bytes: u64,
                rows: u64,
                size: u32,
                pattern: $pattern,
            ) {
                // SAFETY: blocks of `FILL_BLOCK_THREADS` threads and
                // `size >= 1` are the caller's promises (`# Safety`).
                // Assumed, no read of `blockDim` and no `size == 0` check
                // stands before the first read of the pattern.
                unsafe {
                    __assume_block(__block_word(FILL_BLOCK_THREADS, 1, 1));
                    core::hint::assert_unchecked(size >= 1);
                }
                let staged = cuda_mem::shared_array![u32; padded($words as u32) as usize];
                // `from_ptr` converts the generic address (`cvta.to.shared`),
                // as these kernels always have: `staged.window()`, the
                // address the array already holds, saves the conversion
                // (32 fewer sm_90 instructions in the file) but measured no
                // faster (H200, bench --fill-only --quick, two runs each,
                // interleaved: 1 MiB fills 0.68-0.87 of memset either way).
                let at = SharedWindow::from_ptr(staged.as_ptr());
                // `pattern` is read by address, below.
                let _ = pattern;
                let read = pattern_words_read(size, $words as u32);
                let pieces = read.div_ceil(4);
                let load = |piece: u32| -> [u32; 4] {
                    let (a, b, c, d): (u32, u32, u32, u32);
                    // SAFETY: the callers keep `piece < pieces`, so `4 *
                    // piece + 3 < $words` (`read <= $words`, a multiple of
                    // 4): inside the parameter, which this kernel declares
                    // as its sixth (16-byte aligned); the asm only reads it.
                    unsafe {
                        asm!(
                            "{{",
                            ".reg .u64 %pattern_addr;",
                            concat!("mov.u64 %pattern_addr, ", stringify!($name), "_param_5;"),
                            "mad.wide.u32 %pattern_addr, {piece}, 16, %pattern_addr;",
                            "ld.param.v4.u32 {{{a}, {b}, {c}, {d}}}, [%pattern_addr];",
                            "}}",
                            piece = in(reg32) piece,
                            a = out(reg32) a,
                            b = out(reg32) b,
                            c = out(reg32) c,
                            d = out(reg32) d,
                            options(pure, readonly, nostack, preserves_flags)
                        );
                    }
                    [a, b, c, d]
                };
                // Four word stores, not one of 16 bytes: the padding leaves
                // a piece 4-byte aligned.
                let put = |piece: u32, v: [u32; 4]| {
                    for (j, w) in (4 * piece..).zip(v) {
                        // SAFETY: the callers keep `piece < pieces`, so `j <
                        // read <= $words`: `padded(j)` is inside the array.
                        // Each piece is written by one thread, and read only
                        // after the barrier.
                        unsafe { st_shared::<u32>(at + 4 * padded(j), w) };
                    }
                };
                let (t, block) = (thread_idx().x, block_dim().x);
                let first = if block % 32 == 0 {
                    (t % 32) * (block / 32) + t / 32
                } else {
                    t
                };
                // The first piece (the only one for blocks of at least
                // `$words / 4` threads, as the host launches): read now,
                // written once the offsets below are known.
                let mine = if first < pieces { Some(load(first)) } else { None };
                let split = split_row(base, row_bytes);
                let (tid, threads) = thread_along_row();
                let size64 = size as u64;
                let mut cycle = ChunkCycle::new(split.head, tid, threads, size64);
                let fixed_at = chunk_offset(split.head, tid, size64) as u32;
                if let Some(v) = mine {
                    put(first, v);
                }
                let mut piece = first + block;
                while piece < pieces {
                    put(piece, load(piece));
                    piece += block;
                }
                sync_threads();
                // SAFETY: every index below is under `read` (offsets are
                // below `size`, and a window reads words `offset / 4 ..=
                // offset / 4 + 4`), written above before the barrier.
                let word = |i: u32| unsafe { ld_shared::<u32>(at + 4 * padded(i)) };
                let byte = |at: u64| byte_at(word, (at % size64) as u32);
                // Uniform over the grid: the host keeps the phase fixed
                // unless that would take far more blocks than the work needs.
                if $cycling && cycle.moves() {
                    let chunk = |c: u64| {
                        if c == tid {
                            cycle.restart();
                        }
                        chunk_at(word, cycle.next_offset())
                    };
                    // SAFETY: forwarded from the caller; `chunk(c)` is the
                    // value at chunk `c` (the cycle follows the thread's
                    // chunks in order, from its first of each row).
                    unsafe { fill_rows(base, pitch, row_bytes, rows, chunk, byte, byte) }
                } else {
                    let chunk = chunk_at(word, fixed_at);
                    // SAFETY: forwarded from the caller (the grid keeps the
                    // phase fixed).
                    unsafe {
                        fill_rows(base, pitch, row_bytes, rows, |_| chunk, byte, byte)
                    }
                }
            }
        };
    }

    by_parameter_fill!(
        /// Fills with a value of at most 256 bytes passed in `pattern`
        /// (288 bytes).
        cuda_mem_fill_small,
        SmallPattern,
        SMALL_PATTERN_WORDS,
        false
    );

    by_parameter_fill!(
        /// Fills with a value of 257 to 4013 bytes passed in `pattern`
        /// (4032 bytes: with the other parameters, inside the 4 KiB every
        /// device accepts).
        cuda_mem_fill_medium,
        MediumPattern,
        MEDIUM_PATTERN_WORDS,
        true
    );

    /// Fills with a value of any size read from device memory at `src`.
    ///
    /// # Safety
    /// See [`fill_rows`]; the launch has 1D blocks of [`FILL_BLOCK_THREADS`]
    /// (256), `size >= 1`, `row_bytes % size == 0`, `src` points to `size`
    /// readable bytes that this launch does not write.
    #[no_mangle]
    pub unsafe extern "ptx-kernel" fn cuda_mem_fill_large(
        base: u64,
        pitch: u64,
        row_bytes: u64,
        rows: u64,
        size: u64,
        src: *const u8,
    ) {
        // SAFETY: blocks of `FILL_BLOCK_THREADS` threads and `size >= 1`
        // are the caller's promises (`# Safety`).
        unsafe {
            __assume_block(__block_word(FILL_BLOCK_THREADS, 1, 1));
            core::hint::assert_unchecked(size >= 1);
        }
        let split = split_row(base, row_bytes);
        let (tid, _) = thread_along_row();
        // SAFETY: `at % size < size`, inside the source value.
        let byte_at = |at: u64| unsafe { *src.add((at % size) as usize) };
        let mut bytes = [0u32; 4];
        let mut at = chunk_offset(split.head, tid, size);
        let mut j = 0;
        while j < 16 {
            // SAFETY: `at < size`, inside the source value.
            let b = unsafe { *src.add(at as usize) } as u32;
            bytes[j / 4] |= b << ((j % 4) * 8);
            at += 1;
            if at == size {
                at = 0;
            }
            j += 1;
        }
        // SAFETY: forwarded from the caller.
        unsafe { fill_rows(base, pitch, row_bytes, rows, |_| bytes, byte_at, byte_at) }
    }
}
