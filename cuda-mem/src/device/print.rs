//! Printing from a kernel: [`device_printf!`](crate::device_printf), CUDA's
//! `printf`, through the driver's `vprintf`.
//!
//! `vprintf(format, args)` takes the format string and a buffer holding the
//! arguments as a C variadic call would pass them: each at its natural
//! alignment, `float` promoted to `double` and small integers to `int`. The
//! macro builds that buffer from the argument types ([`PrintfArg`]) and
//! checks **at compile time** that every conversion of the (literal) format
//! matches its argument: `%d %i %u %o %x %X %c` take a 32-bit integer (or
//! smaller, or `bool`), the same with `ll`, `z`, `j` or `t` a 64-bit one
//! (`%lld`, `%zu`, ...), `%f %F %e %E %g %G %a %A` an `f32` or `f64`, `%p`
//! a raw pointer and `%s` a `&CStr`. `%n`, `*` widths and precisions, `%l`
//! on integers (`long` differs between Linux and Windows: write `%lld`) and
//! `%L` are refused. So a call can never read past its arguments.
//!
//! The output appears on the host's standard output when the kernel ends
//! (at the next synchronisation), also after a kernel that traps. The
//! device's buffer for it is 1 MiB by default (`cuCtxSetLimit` with
//! `CU_LIMIT_PRINTF_FIFO_SIZE`); what does not fit is dropped.
//!
//! On other targets (the one-thread model) the macro calls the C library's
//! `printf` with the same promoted arguments on Unix, and prints nothing
//! elsewhere.

use core::ffi::CStr;

#[cfg(target_arch = "nvptx64")]
extern "C" {
    /// The driver's `vprintf` (ptxas resolves it): prints `format` with
    /// arguments packed in `args` (see the module docs).
    fn vprintf(format: *const u8, args: *const u8) -> i32;
}

#[cfg(all(not(target_arch = "nvptx64"), unix))]
extern "C" {
    /// The C library's `printf`.
    #[doc(hidden)]
    pub fn printf(format: *const core::ffi::c_char, ...) -> core::ffi::c_int;
}

/// What a conversion of the format, or an argument, is.
#[doc(hidden)]
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `int`/`unsigned` (4 bytes).
    Int32,
    /// `long long`/`size_t` (8 bytes).
    Int64,
    /// `double` (8 bytes; `float` is promoted).
    Float,
    /// A pointer printed with `%p`.
    Ptr,
    /// A NUL-terminated string for `%s`.
    Str,
}

mod sealed {
    pub trait Sealed {}
}

/// A value [`device_printf!`](crate::device_printf) can print, and what C's
/// variadic call would turn it into: `i8`, `i16`, `i32`, `u8`, `u16`, `u32`,
/// `bool`, `char` become a 4-byte integer; `i64`, `u64`, `isize`, `usize` an
/// 8-byte one; `f32` and `f64` a `double`; `*const T` and `*mut T` a pointer
/// (`%p`); `&CStr` a string (`%s`). Sealed.
///
/// ```
/// use cuda_mem::device::PrintfArg;
/// assert_eq!(1.5f32.promote(), 1.5f64);
/// assert_eq!(7u8.promote(), 7u32);
/// ```
pub trait PrintfArg: sealed::Sealed + Copy {
    /// The C-promoted type.
    type Promoted: Copy;
    #[doc(hidden)]
    const KIND: Kind;
    /// The value as C passes it to a variadic function.
    fn promote(self) -> Self::Promoted;
}

macro_rules! printf_arg {
    ($($t:ty => $p:ty, $kind:ident, |$v:ident| $e:expr;)*) => {$(
        impl sealed::Sealed for $t {}
        impl PrintfArg for $t {
            type Promoted = $p;
            const KIND: Kind = Kind::$kind;
            #[inline(always)]
            fn promote(self) -> $p {
                let $v = self;
                $e
            }
        }
    )*};
}

printf_arg! {
    i8 => i32, Int32, |v| v as i32;
    i16 => i32, Int32, |v| v as i32;
    i32 => i32, Int32, |v| v;
    u8 => u32, Int32, |v| v as u32;
    u16 => u32, Int32, |v| v as u32;
    u32 => u32, Int32, |v| v;
    bool => u32, Int32, |v| v as u32;
    char => u32, Int32, |v| v as u32;
    i64 => i64, Int64, |v| v;
    u64 => u64, Int64, |v| v;
    isize => i64, Int64, |v| v as i64;
    usize => u64, Int64, |v| v as u64;
    f32 => f64, Float, |v| v as f64;
    f64 => f64, Float, |v| v;
}

impl<T> sealed::Sealed for *const T {}
impl<T> PrintfArg for *const T {
    type Promoted = *const core::ffi::c_void;
    const KIND: Kind = Kind::Ptr;
    #[inline(always)]
    fn promote(self) -> Self::Promoted {
        self.cast()
    }
}

impl<T> sealed::Sealed for *mut T {}
impl<T> PrintfArg for *mut T {
    type Promoted = *const core::ffi::c_void;
    const KIND: Kind = Kind::Ptr;
    #[inline(always)]
    fn promote(self) -> Self::Promoted {
        self.cast_const().cast()
    }
}

impl sealed::Sealed for &CStr {}
impl PrintfArg for &CStr {
    type Promoted = *const core::ffi::c_char;
    const KIND: Kind = Kind::Str;
    #[inline(always)]
    fn promote(self) -> Self::Promoted {
        self.as_ptr()
    }
}

/// The format string of one `device_printf!` call, as a type (so that the
/// argument checks can be constant evaluations).
#[doc(hidden)]
pub trait Format {
    /// The format, NUL-terminated.
    const TEXT: &'static str;
}

/// The kind the conversion number `index` of `format` takes, or why the
/// format is refused; `Ok(None)` when there are fewer conversions.
#[doc(hidden)]
pub const fn conversion(format: &str, index: usize) -> Result<Option<Kind>, &'static str> {
    let b = format.as_bytes();
    let mut i = 0;
    let mut n = 0;
    while i < b.len() {
        if b[i] != b'%' {
            i += 1;
            continue;
        }
        i += 1;
        if i >= b.len() || b[i] == 0 {
            return Err("device_printf!: the format ends with a lone `%`");
        }
        if b[i] == b'%' {
            i += 1;
            continue;
        }
        while i < b.len() && matches!(b[i], b'-' | b'+' | b' ' | b'#' | b'0') {
            i += 1;
        }
        if i < b.len() && b[i] == b'*' {
            return Err(
                "device_printf!: `*` widths are not supported; write the width in the format",
            );
        }
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i < b.len() && b[i] == b'.' {
            i += 1;
            if i < b.len() && b[i] == b'*' {
                return Err("device_printf!: `.*` precisions are not supported; write the precision in the format");
            }
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
        }
        // Length modifiers: 0 none, 1 `h`/`hh`, 2 `l`, 8 the 64-bit ones.
        let mut length = 0;
        if i < b.len() {
            match b[i] {
                b'h' => {
                    length = 1;
                    i += 1;
                    if i < b.len() && b[i] == b'h' {
                        i += 1;
                    }
                }
                b'l' => {
                    i += 1;
                    if i < b.len() && b[i] == b'l' {
                        length = 8;
                        i += 1;
                    } else {
                        length = 2;
                    }
                }
                b'z' | b'j' | b't' => {
                    length = 8;
                    i += 1;
                }
                b'L' => return Err("device_printf!: `%L` (long double) is not supported"),
                _ => {}
            }
        }
        if i >= b.len() {
            return Err("device_printf!: the format ends inside a conversion");
        }
        let kind = match b[i] {
            b'd' | b'i' | b'u' | b'o' | b'x' | b'X' | b'c' => match length {
                2 => return Err("device_printf!: `%l` on an integer is not portable (`long` is 32-bit on Windows); write `%lld`, `%llu` or `%zu`"),
                8 => Kind::Int64,
                _ => Kind::Int32,
            },
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => match length {
                0 | 2 => Kind::Float,
                _ => return Err("device_printf!: a length modifier on a floating-point conversion"),
            },
            b'p' | b's' if length != 0 => {
                return Err("device_printf!: a length modifier on `%p` or `%s`")
            }
            b'p' => Kind::Ptr,
            b's' => Kind::Str,
            b'n' => return Err("device_printf!: `%n` is not supported"),
            _ => return Err("device_printf!: an unknown conversion in the format"),
        };
        i += 1;
        if n == index {
            return Ok(Some(kind));
        }
        n += 1;
    }
    Ok(None)
}

/// The arguments of one `device_printf!` call, packed as `vprintf` reads
/// them: `N` slots of 8 bytes is room for any `N` arguments.
#[doc(hidden)]
#[repr(C, align(8))]
pub struct Args<F, const N: usize> {
    bytes: [u64; N],
    len: usize,
    _format: core::marker::PhantomData<F>,
}

impl<F: Format, const N: usize> Args<F, N> {
    /// No arguments yet; checks the format against the argument count.
    #[allow(clippy::new_without_default)]
    #[inline(always)]
    pub fn new() -> Self {
        const {
            match conversion(F::TEXT, N) {
                Ok(None) => {}
                Ok(Some(_)) => {
                    panic!("device_printf!: the format has more conversions than arguments")
                }
                Err(e) => panic!("{}", e),
            }
        };
        Self {
            bytes: [0; N],
            len: 0,
            _format: core::marker::PhantomData,
        }
    }

    /// Appends argument number `I`, checking it against conversion `I`.
    #[inline(always)]
    pub fn push<const I: usize, A: PrintfArg>(&mut self, arg: A) {
        const {
            match conversion(F::TEXT, I) {
                Ok(Some(kind)) => {
                    if !matches!(
                        (kind, A::KIND),
                        (Kind::Int32, Kind::Int32)
                            | (Kind::Int64, Kind::Int64)
                            | (Kind::Float, Kind::Float)
                            | (Kind::Ptr, Kind::Ptr)
                            | (Kind::Str, Kind::Str)
                    ) {
                        panic!("device_printf!: an argument does not match its conversion (%d %u %x %c: 32-bit integers; %lld %llu %zu: 64-bit; %f %e %g: f32 or f64; %p: a raw pointer; %s: a &CStr)");
                    }
                }
                Ok(None) => panic!("device_printf!: more arguments than conversions in the format"),
                Err(e) => panic!("{}", e),
            }
        };
        let value = arg.promote();
        let align = align_of::<A::Promoted>();
        let at = self.len.div_ceil(align) * align;
        assert!(at + size_of::<A::Promoted>() <= N * 8);
        // SAFETY: `at + size <= N * 8` (checked; it always holds, as each
        // argument takes at most 8 bytes at an alignment of at most 8), and
        // `at` is aligned for the value (the buffer is 8-aligned).
        unsafe {
            (self.bytes.as_mut_ptr() as *mut u8)
                .add(at)
                .cast::<A::Promoted>()
                .write(value)
        };
        self.len = at + size_of::<A::Promoted>();
    }

    /// Calls `vprintf`.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub fn print(&self) -> i32 {
        let args = if N == 0 {
            core::ptr::null()
        } else {
            self.bytes.as_ptr() as *const u8
        };
        // SAFETY: the format is NUL-terminated (the macro appends the NUL)
        // and every conversion matches an argument packed in `args` (checked
        // at compile time above), so vprintf reads inside the buffer.
        unsafe { vprintf(F::TEXT.as_ptr(), args) }
    }
}

/// Prints from a kernel with a C format: CUDA's `printf`, checked at
/// compile time (see the [module docs](crate::device::print) for the
/// conversions and types). Each argument is evaluated once. Returns what
/// `vprintf` returns (the number of arguments, or a negative value on
/// error); on the host, what `printf` returns.
///
/// ```
/// use cuda_mem::{device::global_linear_idx, device_printf};
/// let i = global_linear_idx();
/// let x = 0.5f32;
/// device_printf!("thread %llu: x = %f, %s\n", i as u64, x, c"ok");
/// ```
///
/// A mismatch does not compile:
///
/// ```compile_fail
/// cuda_mem::device_printf!("%d\n", 1.5f64); // %d wants a 32-bit integer
/// ```
#[macro_export]
macro_rules! device_printf {
    ($format:literal $(, $arg:expr)* $(,)?) => {{
        struct __Format;
        impl $crate::device::print::Format for __Format {
            const TEXT: &'static str = ::core::concat!($format, "\0");
        }
        $crate::__device_printf_bind!(__Format; []; $($arg),*)
    }};
}

/// Binds each argument to a variable of its own (each expansion's `__arg` is
/// a different variable: macro hygiene), then prints them.
#[doc(hidden)]
#[macro_export]
macro_rules! __device_printf_bind {
    ($format:ty; [$($bound:ident)*]; ) => {{
        let mut __args = $crate::device::print::Args::<
            $format,
            { [$(::core::stringify!($bound)),*].len() },
        >::new();
        $crate::__device_printf_push!(__args, 0usize; $($bound)*);
        $crate::__device_printf_emit!(__args, $format; $($bound)*)
    }};
    ($format:ty; [$($bound:ident)*]; $first:expr $(, $rest:expr)*) => {{
        let __arg = $first;
        $crate::__device_printf_bind!($format; [$($bound)* __arg]; $($rest),*)
    }};
}

/// Pushes each argument with its index (the compile-time checks).
#[doc(hidden)]
#[macro_export]
macro_rules! __device_printf_push {
    ($args:ident, $index:expr; ) => {};
    ($args:ident, $index:expr; $first:ident $($rest:ident)*) => {
        $args.push::<{ $index }, _>($first);
        $crate::__device_printf_push!($args, $index + 1; $($rest)*);
    };
}

/// `vprintf` on the device.
#[doc(hidden)]
#[cfg(target_arch = "nvptx64")]
#[macro_export]
macro_rules! __device_printf_emit {
    ($args:ident, $format:ty; $($bound:ident)*) => {
        $args.print()
    };
}

/// The C library's `printf` on a Unix host.
#[doc(hidden)]
#[cfg(all(not(target_arch = "nvptx64"), unix))]
#[macro_export]
macro_rules! __device_printf_emit {
    ($args:ident, $format:ty; $($bound:ident)*) => {{
        let _ = &$args;
        // SAFETY: the format is NUL-terminated and its conversions match the
        // promoted arguments (checked at compile time by `Args::push`).
        unsafe {
            $crate::device::print::printf(
                <$format as $crate::device::print::Format>::TEXT.as_ptr().cast(),
                $($crate::device::print::PrintfArg::promote($bound)),*
            )
        }
    }};
}

/// Nothing on other hosts.
#[doc(hidden)]
#[cfg(all(not(target_arch = "nvptx64"), not(unix)))]
#[macro_export]
macro_rules! __device_printf_emit {
    ($args:ident, $format:ty; $($bound:ident)*) => {{
        let _ = (&$args, $(&$bound),*);
        0
    }};
}
