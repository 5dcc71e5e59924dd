//! Ending a kernel on purpose ([`trap`]) and the opt-in printing panic
//! handler ([`printing_panic_handler!`](crate::printing_panic_handler)).
//!
//! By default kernels are built with `-Cpanic=immediate-abort`: a panic (an
//! index out of bounds, an `unwrap` of `None`, an overflow check, an
//! `assert!`) is a bare `trap`. The launch's next synchronisation returns
//! an error (`CUDA_ERROR_LAUNCH_FAILED` or `CUDA_ERROR_ILLEGAL_INSTRUCTION`),
//! the CUDA context is unusable from then on, and nothing says where.
//!
//! For development, a kernel crate can print the panic's location, the
//! block and thread, and the message before trapping:
//!
//! 1. declare the handler once, at the root of the kernel crate:
//!    `cuda_mem::printing_panic_handler!();` (it expands to nothing on
//!    other targets, so the crate still builds for the host);
//! 2. build it with `KernelCrate::new(..).printing_panics(true)` (feature
//!    `build`). Without a linker, a panic can only reach a handler if core's
//!    panic functions (`panic_fmt`, `#[inline(never)]`) end up in the PTX:
//!    that build uses `-Cpanic=abort`, compiles the crate as a `cdylib` with
//!    fat LTO (rustc merges every crate, `core` included, into one module
//!    and writes it as PTX) and skips the link step (`-Zno-link`). No extra
//!    rustup component is needed. The PTX is bigger (core's formatting
//!    code, and a stack), so keep it for debugging.
//!
//! The message is printed through `vprintf` (so it appears on the host's
//! standard output at the synchronisation that reports the error), then the
//! thread executes `trap`. The path is cut to its last 95 bytes and the
//! message to 159. Formatting the message runs core's formatting code on the
//! thread's stack: about 900 bytes at the deepest, within CUDA's default
//! stack of 1 KiB per thread; a panic deep inside non-inlined calls may
//! need a larger `CU_LIMIT_STACK_SIZE`.

/// Aborts the kernel: PTX `trap`. The launch fails (the host sees an error at
/// the next synchronisation) and the CUDA context cannot run anything
/// afterwards. In the one-thread model on the host it panics (the kernel's
/// abort, for a test to catch).
///
/// ```should_panic
/// cuda_mem::device::trap();
/// ```
#[inline(always)]
pub fn trap() -> ! {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: `trap` ends the kernel; nothing runs after it.
    unsafe {
        core::arch::asm!("trap;", options(noreturn, nostack))
    }
    #[cfg(not(target_arch = "nvptx64"))]
    panic!("cuda_mem::device::trap: the kernel aborted")
}

/// Up to `N - 1` bytes of text, NUL-terminated (for `%s`); longer text is cut.
struct Text<const N: usize> {
    bytes: [u8; N],
    len: usize,
}

impl<const N: usize> Text<N> {
    fn new() -> Self {
        Self {
            bytes: [0; N],
            len: 0,
        }
    }

    /// The last `N - 1` bytes of `s` (the end of a long path is the
    /// informative part), without NULs.
    fn from_tail(s: &str) -> Self {
        let mut text = Self::new();
        let bytes = s.as_bytes();
        let skip = bytes.len().saturating_sub(N - 1);
        for &b in &bytes[skip..] {
            if b != 0 {
                text.bytes[text.len] = b;
                text.len += 1;
            }
        }
        text
    }

    fn as_c_str(&self) -> &core::ffi::CStr {
        // The last byte is never written, so there is always a NUL.
        core::ffi::CStr::from_bytes_until_nul(&self.bytes).unwrap_or(c"")
    }
}

impl<const N: usize> core::fmt::Write for Text<N> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        for &b in s.as_bytes() {
            // Keep the terminating NUL; a NUL inside the text would cut it.
            if self.len + 1 < N && b != 0 {
                self.bytes[self.len] = b;
                self.len += 1;
            }
        }
        Ok(())
    }
}

/// Prints where and why the kernel panicked, with the block and thread
/// indices, then traps: the body of the handler that
/// [`printing_panic_handler!`](crate::printing_panic_handler) declares.
///
/// ```no_run
/// // The handler a kernel crate gets from `cuda_mem::printing_panic_handler!()`:
/// fn on_panic(info: &core::panic::PanicInfo<'_>) -> ! {
///     cuda_mem::device::panic::report_and_trap(info)
/// }
/// ```
#[inline]
pub fn report_and_trap(info: &core::panic::PanicInfo<'_>) -> ! {
    use core::fmt::Write as _;
    // Small buffers: this runs on the kernel's stack (1 KiB per thread by
    // default), under core's formatting code.
    let (file, line, column) = match info.location() {
        Some(l) => (Text::<96>::from_tail(l.file()), l.line(), l.column()),
        None => (Text::<96>::new(), 0, 0),
    };
    let mut message = Text::<160>::new();
    let _ = write!(message, "{}", info.message());
    let (b, t) = (super::block_idx(), super::thread_idx());
    crate::device_printf!(
        "kernel panicked at %s:%u:%u, block (%u, %u, %u), thread (%u, %u, %u):\n%s\n",
        file.as_c_str(),
        line,
        column,
        b.x,
        b.y,
        b.z,
        t.x,
        t.y,
        t.z,
        message.as_c_str()
    );
    // Make the printed record visible before the kernel ends abnormally.
    super::fence(super::Scope::System);
    trap()
}

/// Declares the kernel crate's `#[panic_handler]` as
/// [`report_and_trap`](crate::device::panic::report_and_trap): a panic
/// prints its location, block, thread and message, then traps. Write it once
/// at the root of the kernel crate and build with
/// `KernelCrate::printing_panics(true)` (see the
/// [module docs](crate::device::panic)); on other targets it expands to
/// nothing.
///
/// ```
/// cuda_mem::printing_panic_handler!();
/// ```
#[macro_export]
macro_rules! printing_panic_handler {
    () => {
        #[cfg(target_arch = "nvptx64")]
        #[panic_handler]
        fn __cuda_mem_printing_panic_handler(
            info: &$crate::__private::core::panic::PanicInfo<'_>,
        ) -> ! {
            $crate::device::panic::report_and_trap(info)
        }
    };
}
