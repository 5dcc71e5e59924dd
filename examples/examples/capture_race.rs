//! A reproducer of a CUDA driver crash, with no cuda-mem call in it: one
//! thread begins and ends graph captures on a stream `x` in a loop
//! (cudarc's safe `begin_capture` / `end_capture`), while the main thread
//! queues work on `x`.
//!
//!     cargo run --release --example capture_race -- MODE [ROUNDS]
//!
//! `MODE` is what the main thread queues on `x` each round:
//!
//! - `copy`: a device-to-device copy (`cuMemcpyDtoDAsync`);
//! - `cudarc`: the same copy through cudarc's safe `memcpy_dtod`: a safe
//!   Rust program of cudarc alone;
//! - `event`: only an event record, which a second stream `s` then waits
//!   for (what cuda-mem's ordering queues on the stream that last used
//!   memory, when another stream uses it next).
//!
//! Each mode prints one line when its rounds (default 3000) are done. With
//! driver 580.159.04 on an H100 (2026-12-06) every mode crashed the
//! process with SIGSEGV before that (a copy of this kind, under cuda-gdb:
//! inside `cuMemcpyAsync`, the other thread inside `cuStreamEndCapture`):
//! queueing on a stream while another thread ends a capture on it is
//! enough. cuda-mem cannot prevent this: it does not see cudarc's
//! captures begin. Its README's known issues say what follows for
//! programs that use both.
//!
//! Needs a CUDA device; without one it says so and exits with status 1.

use std::error::Error;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use cuda_mem::cudarc::driver::sys::{self, CUstreamCaptureStatus};
use cuda_mem_examples::gpu_or_exit;

/// What the main thread queues on `x` each round (see the module's notes).
#[derive(Clone, Copy, PartialEq, Debug)]
enum Mode {
    Copy,
    Cudarc,
    Event,
}

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let mode = match args.next().as_deref() {
        Some("copy") => Mode::Copy,
        Some("cudarc") => Mode::Cudarc,
        Some("event") => Mode::Event,
        other => {
            return Err(format!(
                "unknown mode {other:?}: pass `copy`, `cudarc` or `event` (and optionally a \
                 number of rounds), e.g. `cargo run --release --example capture_race -- copy 3000`"
            )
            .into())
        }
    };
    let rounds: usize = match args.next() {
        Some(text) => text
            .parse()
            .map_err(|e| format!("ROUNDS must be a whole number, not {text:?} ({e})"))?,
        None => 3000,
    };
    let ctx = gpu_or_exit("capture_race");
    ctx.bind_to_thread()?;
    let x = ctx.new_stream()?;
    let mut s = ctx.new_stream()?;
    let words = 4096;
    let src = x.alloc_zeros::<u32>(words)?;
    let mut dst = x.alloc_zeros::<u32>(words)?;
    x.synchronize()?;
    let mut event = std::ptr::null_mut();
    // SAFETY: a valid out-pointer; the context is current.
    unsafe {
        sys::cuEventCreate(
            &mut event,
            sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32,
        )
    }
    .result()?;
    let (stop, captures) = (AtomicBool::new(false), AtomicUsize::new(0));
    let (mut queued, mut refused, mut joins) = (0usize, 0usize, 0usize);
    std::thread::scope(|scope| -> Result<(), Box<dyn Error>> {
        scope.spawn(|| {
            let ended = cuda_mem_tests::capture_until(&x, &stop, None);
            captures.store(ended, Ordering::Relaxed);
        });
        for _ in 0..rounds {
            let ok = match mode {
                Mode::Copy => {
                    use cuda_mem::cudarc::driver::{DevicePtr, DevicePtrMut};
                    let (from, _a) = src.device_ptr(&x);
                    let (to, _b) = dst.device_ptr_mut(&x);
                    // SAFETY: two live allocations of `words` words that
                    // outlive the stream's work (synchronised below).
                    unsafe { sys::cuMemcpyDtoDAsync_v2(to, from, words * 4, x.cu_stream()) }
                        .result()
                        .is_ok()
                }
                Mode::Cudarc => x.memcpy_dtod(&src, &mut dst).is_ok(),
                Mode::Event => {
                    // SAFETY: a live event and streams.
                    let recorded = unsafe { sys::cuEventRecord(event, x.cu_stream()) }
                        .result()
                        .and_then(|()| {
                            unsafe { sys::cuStreamWaitEvent(s.cu_stream(), event, 0) }.result()
                        });
                    // `s` in a capture (or the driver could not say).
                    if recorded.is_ok()
                        && s.capture_status()
                            != Ok(CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE)
                    {
                        // `s` joined a capture: the capture will fail to
                        // end. Go on with a fresh stream.
                        joins += 1;
                        s = ctx.new_stream()?;
                    }
                    recorded.is_ok()
                }
            };
            if ok {
                queued += 1;
            } else {
                refused += 1;
            }
        }
        stop.store(true, Ordering::Relaxed);
        Ok(())
    })?;
    // A stream left in an ended or invalidated capture may refuse these.
    let _ = x.synchronize();
    let _ = s.synchronize();
    // SAFETY: created above; nothing waits for it any more.
    let _ = unsafe { sys::cuEventDestroy_v2(event) };
    println!(
        "capture_race {mode:?}: {rounds} rounds, {queued} queued, {refused} refused by the \
         driver, {joins} joins, {} captures meanwhile; no crash",
        captures.load(Ordering::Relaxed)
    );
    Ok(())
}
