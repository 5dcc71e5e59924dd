//! Printing from a kernel: [`device_printf!`](crate::device_printf), CUDA's
//! `printf`, through the driver's `vprintf`.
//!
//! `vprintf(format, args)` takes the format string and a buffer holding the
//! arguments as a C variadic call would pass them: each at its natural
//! alignment, `float` promoted to `double` and small integers to `int`. The
//! macro builds that buffer from the argument types ([`PrintfArg`]) and
//! checks **at compile time**, where `cargo check` sees it too, that every
//! conversion of the (literal) format matches its argument: `%d %i %u %o %x %X %c` take a 32-bit integer (or
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
//! `printf` with the same promoted arguments on 64-bit Unix, and prints
//! nothing elsewhere (on a 32-bit host, `size_t` and `ptrdiff_t` are 4
//! bytes, so `%zu` and `%td` would read half of the 8-byte argument the
//! device's conversions take, and the rest as the next one).

use core::ffi::CStr;

#[cfg(target_arch = "nvptx64")]
extern "C" {
    /// The driver's `vprintf` (ptxas resolves it): prints `format` with
    /// arguments packed in `args` (see the module docs).
    fn vprintf(format: *const u8, args: *const u8) -> i32;
}

#[cfg(all(not(target_arch = "nvptx64"), unix, target_pointer_width = "64"))]
extern "C" {
    /// The C library's `printf`.
    fn printf(format: *const core::ffi::c_char, ...) -> core::ffi::c_int;
}

/// What a conversion of the format, or an argument, is.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

impl Kind {
    /// The kind's number in a [`Conversions`] list (0 is "no conversion").
    #[doc(hidden)]
    #[must_use]
    pub const fn code(self) -> u8 {
        match self {
            Self::Int32 => 1,
            Self::Int64 => 2,
            Self::Float => 3,
            Self::Ptr => 4,
            Self::Str => 5,
        }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// The kinds of a format's first 16 conversions as a type, one
/// [`Kind::code`] per parameter (0 past the last conversion): what
/// [`device_printf!`](crate::device_printf) checks its arguments against
/// with trait bounds, so that `cargo check` sees a mismatch (a constant in a
/// generic function is evaluated only when the function is compiled).
#[doc(hidden)]
pub struct Conversions<
    const C0: u8,
    const C1: u8,
    const C2: u8,
    const C3: u8,
    const C4: u8,
    const C5: u8,
    const C6: u8,
    const C7: u8,
    const C8: u8,
    const C9: u8,
    const C10: u8,
    const C11: u8,
    const C12: u8,
    const C13: u8,
    const C14: u8,
    const C15: u8,
>;

/// A [`PrintfArg`] that the conversion numbered `CODE` ([`Kind::code`])
/// prints. Every argument matches 0 (no conversion at its place: the count
/// check of [`check_text`] reports that, once).
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "device_printf!: `{Self}` does not match its conversion in the format",
    label = "not what its conversion prints",
    note = "%d %i %u %o %x %X %c take a 32-bit (or smaller) integer, `bool` or `char`; \
            %lld %llu %zu %jd %td a 64-bit integer (`i64`, `u64`, `isize`, `usize`); \
            %f %e %g %a an `f32` or `f64`; %p a raw pointer; %s a `&CStr` (`c\"text\"`)",
    note = "cast the argument (`x as u64` for %llu), or change the conversion"
)]
pub trait Converts<const CODE: u8>: PrintfArg {}

impl<T: PrintfArg> Converts<0> for T {}

/// Arguments (a tuple) that match the conversions `L` (a [`Conversions`]),
/// place by place.
#[doc(hidden)]
pub trait ArgsMatch<L> {}

/// The code of conversion number `index` of `format` ([`Kind::code`]), or 0
/// when there is none there or the format is refused (which
/// [`check_text`] reports).
///
/// ```
/// use cuda_mem::device::print::{code, Kind};
/// assert_eq!(code("%d %s\0", 1), Kind::Str.code());
/// assert_eq!(code("%d %s\0", 2), 0);
/// assert_eq!(code("%n\0", 0), 0);
/// ```
#[doc(hidden)]
#[must_use]
pub const fn code(format: &str, index: usize) -> u8 {
    match conversion(format, index) {
        Ok(Some(kind)) => kind.code(),
        _ => 0,
    }
}

/// Panics (at compile time, where it is called in a constant) unless
/// `format` ends with a NUL, every conversion in it is one that
/// [`device_printf!`](crate::device_printf) checks, and it has exactly
/// `args` conversions. The kinds of the arguments are checked by trait
/// bounds ([`ArgsMatch`]).
///
/// ```
/// cuda_mem::device::print::check_text("%d and %s\0", 2);
/// ```
#[doc(hidden)]
pub const fn check_text(format: &str, args: usize) {
    let b = format.as_bytes();
    if b.is_empty() || b[b.len() - 1] != 0 {
        panic!("device_printf!: the format is not NUL-terminated");
    }
    let mut i = 0;
    loop {
        match conversion(format, i) {
            Err(e) => panic!("{}", e),
            Ok(None) if i < args => {
                panic!("device_printf!: more arguments than conversions in the format")
            }
            Ok(Some(_)) if i >= args => {
                panic!("device_printf!: the format has more conversions than arguments")
            }
            Ok(None) => return,
            Ok(Some(_)) => {}
        }
        i += 1;
    }
}

/// `args`, once they match the conversions `L`: a bound that `cargo check`
/// checks. Called by [`device_printf!`](crate::device_printf).
#[doc(hidden)]
#[inline(always)]
pub fn matched<L, A: ArgsMatch<L>>(args: A) -> A {
    args
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
        impl Converts<{ Kind::$kind.code() }> for $t {}
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
impl<T> Converts<{ Kind::Ptr.code() }> for *const T {}
impl<T> PrintfArg for *const T {
    type Promoted = *const core::ffi::c_void;
    const KIND: Kind = Kind::Ptr;
    #[inline(always)]
    fn promote(self) -> Self::Promoted {
        self.cast()
    }
}

impl<T> sealed::Sealed for *mut T {}
impl<T> Converts<{ Kind::Ptr.code() }> for *mut T {}
impl<T> PrintfArg for *mut T {
    type Promoted = *const core::ffi::c_void;
    const KIND: Kind = Kind::Ptr;
    #[inline(always)]
    fn promote(self) -> Self::Promoted {
        self.cast_const().cast()
    }
}

impl sealed::Sealed for &CStr {}
impl Converts<{ Kind::Str.code() }> for &CStr {}
impl PrintfArg for &CStr {
    type Promoted = *const core::ffi::c_char;
    const KIND: Kind = Kind::Str;
    #[inline(always)]
    fn promote(self) -> Self::Promoted {
        self.as_ptr()
    }
}

/// The format string of one `device_printf!` call, as a type (so that the
/// argument checks are constant evaluations). Any implementation is checked:
/// the text must end with a NUL.
#[doc(hidden)]
pub trait Format {
    /// The format, NUL-terminated.
    const TEXT: &'static str;
}

/// The kind the conversion number `index` of `format` takes, or why the
/// format is refused; `Ok(None)` when there are fewer conversions. Anything
/// it does not know is refused, so it never finds fewer conversions than
/// `printf` reads.
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
                _ => {
                    return Err(
                        "device_printf!: a length modifier on a floating-point conversion",
                    )
                }
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

/// Panics (at compile time, where it is called in a constant) unless
/// `format` ends with a NUL and its conversions are exactly `kinds`.
#[doc(hidden)]
pub const fn check_format(format: &str, kinds: &[Kind]) {
    let b = format.as_bytes();
    if b.is_empty() || b[b.len() - 1] != 0 {
        panic!("device_printf!: the format is not NUL-terminated");
    }
    let mut i = 0;
    while i <= kinds.len() {
        match conversion(format, i) {
            Err(e) => panic!("{}", e),
            Ok(None) if i < kinds.len() => {
                panic!("device_printf!: more arguments than conversions in the format")
            }
            Ok(Some(_)) if i == kinds.len() => {
                panic!("device_printf!: the format has more conversions than arguments")
            }
            Ok(Some(kind)) => {
                let same = matches!(
                    (kind, kinds[i]),
                    (Kind::Int32, Kind::Int32)
                        | (Kind::Int64, Kind::Int64)
                        | (Kind::Float, Kind::Float)
                        | (Kind::Ptr, Kind::Ptr)
                        | (Kind::Str, Kind::Str)
                );
                if !same {
                    panic!("device_printf!: an argument does not match its conversion (%d %u %x %c: 32-bit integers; %lld %llu %zu: 64-bit; %f %e %g: f32 or f64; %p: a raw pointer; %s: a &CStr)");
                }
            }
            Ok(None) => {}
        }
        i += 1;
    }
}

/// The arguments of one `device_printf!` call, packed as `vprintf` reads
/// them: `N` slots of 8 bytes is room for any `N` arguments.
#[cfg(target_arch = "nvptx64")]
#[repr(C, align(8))]
struct Packed<const N: usize> {
    bytes: core::mem::MaybeUninit<[u64; N]>,
    len: usize,
}

#[cfg(target_arch = "nvptx64")]
impl<const N: usize> Packed<N> {
    #[inline(always)]
    fn new() -> Self {
        Self {
            bytes: core::mem::MaybeUninit::uninit(),
            len: 0,
        }
    }

    /// Appends a value at its natural alignment.
    #[inline(always)]
    fn push<P: Copy>(&mut self, value: P) {
        let align = align_of::<P>();
        let at = self.len.div_ceil(align) * align;
        assert!(at + size_of::<P>() <= N * 8 && align <= 8);
        // SAFETY: `at + size <= N * 8` (checked), and `at` is a multiple of
        // the value's alignment in an 8-aligned buffer.
        unsafe {
            (self.bytes.as_mut_ptr() as *mut u8)
                .add(at)
                .cast::<P>()
                .write(value)
        };
        self.len = at + size_of::<P>();
    }

    #[inline(always)]
    fn as_ptr(&self) -> *const u8 {
        if N == 0 {
            core::ptr::null()
        } else {
            self.bytes.as_ptr() as *const u8
        }
    }
}

/// The arguments of a `device_printf!` call: a tuple of up to 16
/// [`PrintfArg`]s (sealed). Printing checks the format against their types
/// at compile time.
#[doc(hidden)]
pub trait PrintfArgs: sealed::Sealed {
    /// Prints `F::TEXT` with these arguments.
    fn __print<F: Format>(self) -> i32;
}

macro_rules! printf_args {
    ($n:literal; $($t:ident $i:tt $c:ident),*) => {
        impl<$($t: PrintfArg),*> sealed::Sealed for ($($t,)*) {}

        impl<
            $($t: Converts<$c>,)*
            const C0: u8, const C1: u8, const C2: u8, const C3: u8,
            const C4: u8, const C5: u8, const C6: u8, const C7: u8,
            const C8: u8, const C9: u8, const C10: u8, const C11: u8,
            const C12: u8, const C13: u8, const C14: u8, const C15: u8,
        > ArgsMatch<Conversions<C0, C1, C2, C3, C4, C5, C6, C7, C8, C9, C10, C11, C12, C13, C14, C15>>
            for ($($t,)*)
        {
        }

        impl<$($t: PrintfArg),*> PrintfArgs for ($($t,)*) {
            #[inline(always)]
            #[allow(unused_variables, unused_mut)]
            fn __print<F: Format>(self) -> i32 {
                const { check_format(F::TEXT, &[$($t::KIND),*]) };
                #[cfg(target_arch = "nvptx64")]
                {
                    let mut packed = Packed::<$n>::new();
                    $(packed.push(self.$i.promote());)*
                    // SAFETY: the format is NUL-terminated and each of its
                    // conversions matches the argument packed for it (both
                    // checked at compile time above), so vprintf reads inside
                    // the buffer and the string.
                    unsafe { vprintf(F::TEXT.as_ptr(), packed.as_ptr()) }
                }
                #[cfg(all(not(target_arch = "nvptx64"), unix, target_pointer_width = "64"))]
                // SAFETY: as on the device: the promoted arguments are what
                // the checked conversions read (64-bit Unix: `size_t`,
                // `ptrdiff_t`, `intmax_t` and `long long` are 8 bytes, as on
                // the device).
                unsafe {
                    printf(F::TEXT.as_ptr().cast() $(, self.$i.promote())*)
                }
                #[cfg(all(
                    not(target_arch = "nvptx64"),
                    not(all(unix, target_pointer_width = "64"))
                ))]
                {
                    0
                }
            }
        }
    };
}

printf_args!(0;);
printf_args!(1; A 0 C0);
printf_args!(2; A 0 C0, B 1 C1);
printf_args!(3; A 0 C0, B 1 C1, C 2 C2);
printf_args!(4; A 0 C0, B 1 C1, C 2 C2, D 3 C3);
printf_args!(5; A 0 C0, B 1 C1, C 2 C2, D 3 C3, E 4 C4);
printf_args!(6; A 0 C0, B 1 C1, C 2 C2, D 3 C3, E 4 C4, G 5 C5);
printf_args!(7; A 0 C0, B 1 C1, C 2 C2, D 3 C3, E 4 C4, G 5 C5, H 6 C6);
printf_args!(8; A 0 C0, B 1 C1, C 2 C2, D 3 C3, E 4 C4, G 5 C5, H 6 C6, I 7 C7);
printf_args!(9; A 0 C0, B 1 C1, C 2 C2, D 3 C3, E 4 C4, G 5 C5, H 6 C6, I 7 C7, J 8 C8);
printf_args!(10; A 0 C0, B 1 C1, C 2 C2, D 3 C3, E 4 C4, G 5 C5, H 6 C6, I 7 C7, J 8 C8, K 9 C9);
printf_args!(11; A 0 C0, B 1 C1, C 2 C2, D 3 C3, E 4 C4, G 5 C5, H 6 C6, I 7 C7, J 8 C8, K 9 C9, L 10 C10);
printf_args!(12; A 0 C0, B 1 C1, C 2 C2, D 3 C3, E 4 C4, G 5 C5, H 6 C6, I 7 C7, J 8 C8, K 9 C9, L 10 C10, M 11 C11);
printf_args!(13; A 0 C0, B 1 C1, C 2 C2, D 3 C3, E 4 C4, G 5 C5, H 6 C6, I 7 C7, J 8 C8, K 9 C9, L 10 C10, M 11 C11, N 12 C12);
printf_args!(14; A 0 C0, B 1 C1, C 2 C2, D 3 C3, E 4 C4, G 5 C5, H 6 C6, I 7 C7, J 8 C8, K 9 C9, L 10 C10, M 11 C11, N 12 C12, O 13 C13);
printf_args!(15; A 0 C0, B 1 C1, C 2 C2, D 3 C3, E 4 C4, G 5 C5, H 6 C6, I 7 C7, J 8 C8, K 9 C9, L 10 C10, M 11 C11, N 12 C12, O 13 C13, P 14 C14);
printf_args!(16; A 0 C0, B 1 C1, C 2 C2, D 3 C3, E 4 C4, G 5 C5, H 6 C6, I 7 C7, J 8 C8, K 9 C9, L 10 C10, M 11 C11, N 12 C12, O 13 C13, P 14 C14, Q 15 C15);

/// Prints from a kernel with a C format: CUDA's `printf`, checked at
/// compile time, `cargo check` included (see the
/// [module docs](crate::device::print) for the conversions and types). At most 16 arguments, each evaluated once.
/// Returns what `vprintf` returns (the number of arguments, or a negative
/// value on error); on the host, what `printf` returns. Expands to no
/// `unsafe` code.
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
            const TEXT: &'static str = $crate::__private::core::concat!($format, "\0");
        }
        // The format and the number of arguments, in a constant that `cargo
        // check` evaluates (the arguments are not evaluated: only counted).
        const _: () = $crate::device::print::check_text(
            <__Format as $crate::device::print::Format>::TEXT,
            <[&'static str]>::len(&[$($crate::__private::core::stringify!($arg)),*]),
        );
        $crate::device::print::PrintfArgs::__print::<__Format>(
            // The arguments' kinds, by trait bounds (which `cargo check`
            // checks) against the format's conversions as a type.
            $crate::device::print::matched::<
                $crate::device::print::Conversions<
                    { $crate::device::print::code(<__Format as $crate::device::print::Format>::TEXT, 0) },
                    { $crate::device::print::code(<__Format as $crate::device::print::Format>::TEXT, 1) },
                    { $crate::device::print::code(<__Format as $crate::device::print::Format>::TEXT, 2) },
                    { $crate::device::print::code(<__Format as $crate::device::print::Format>::TEXT, 3) },
                    { $crate::device::print::code(<__Format as $crate::device::print::Format>::TEXT, 4) },
                    { $crate::device::print::code(<__Format as $crate::device::print::Format>::TEXT, 5) },
                    { $crate::device::print::code(<__Format as $crate::device::print::Format>::TEXT, 6) },
                    { $crate::device::print::code(<__Format as $crate::device::print::Format>::TEXT, 7) },
                    { $crate::device::print::code(<__Format as $crate::device::print::Format>::TEXT, 8) },
                    { $crate::device::print::code(<__Format as $crate::device::print::Format>::TEXT, 9) },
                    { $crate::device::print::code(<__Format as $crate::device::print::Format>::TEXT, 10) },
                    { $crate::device::print::code(<__Format as $crate::device::print::Format>::TEXT, 11) },
                    { $crate::device::print::code(<__Format as $crate::device::print::Format>::TEXT, 12) },
                    { $crate::device::print::code(<__Format as $crate::device::print::Format>::TEXT, 13) },
                    { $crate::device::print::code(<__Format as $crate::device::print::Format>::TEXT, 14) },
                    { $crate::device::print::code(<__Format as $crate::device::print::Format>::TEXT, 15) },
                >,
                _,
            >(($($arg,)*)),
        )
    }};
}

#[cfg(test)]
mod tests {
    use super::{check_format, conversion, Kind};

    fn kinds(format: &str) -> Result<Vec<Kind>, &'static str> {
        let mut out = Vec::new();
        for i in 0.. {
            match conversion(format, i)? {
                Some(k) => out.push(k),
                None => return Ok(out),
            }
        }
        unreachable!()
    }

    #[test]
    fn conversions_are_typed_by_their_length_modifier() {
        use Kind::*;
        let k = kinds("%d %5i %-3u %#x %08X %c %hhd %hu %lld %llu %zu %jd %td %f %.3e %G %a %lf %p %s %% %o\0");
        assert_eq!(
            k.unwrap(),
            [
                Int32, Int32, Int32, Int32, Int32, Int32, Int32, Int32, Int64, Int64, Int64, Int64,
                Int64, Float, Float, Float, Float, Float, Ptr, Str, Int32
            ]
        );
        assert_eq!(kinds("no conversions\0").unwrap(), []);
    }

    #[test]
    fn anything_printf_might_read_differently_is_refused() {
        for bad in [
            "%n\0", "%*d\0", "%.*f\0", "%ld\0", "%Lf\0", "%hf\0", "%ls\0", "%1$d\0", "%'d\0",
            "%m\0", "%\0", "%ll\0",
        ] {
            assert!(kinds(bad).is_err(), "{bad:?} was accepted");
        }
    }

    /// The macro's checks are constants and bounds that do not depend on
    /// the enclosing function's generics: it works in a generic function,
    /// with every argument kind and with none.
    #[test]
    fn the_macro_works_in_generic_functions() {
        fn print<T: Copy>(value: T, n: u32) -> i32 {
            let _ = value;
            crate::device_printf!("")
                + crate::device_printf!(
                    "%u %lld %f %p %s %c\n",
                    n,
                    -1i64,
                    0.5f32,
                    core::ptr::null::<T>(),
                    c"ok",
                    b'x'
                )
        }
        let _ = print(1.0f64, 7);
    }

    #[test]
    fn the_text_check_counts_conversions() {
        super::check_text("%d %s\0", 2);
        super::check_text("none\0", 0);
        for (format, args) in [
            ("%d", 1),
            ("%d\0", 0),
            ("\0", 1),
            ("%n\0", 1),
            ("%d %d\0", 1),
        ] {
            let result = std::panic::catch_unwind(|| super::check_text(format, args));
            assert!(result.is_err(), "{format:?} with {args} arguments passed");
        }
    }

    #[test]
    fn the_format_check_wants_a_nul_and_matching_arguments() {
        check_format("%d %s\0", &[Kind::Int32, Kind::Str]);
        for (format, args) in [
            ("%d", &[Kind::Int32][..]),
            ("%d\0", &[][..]),
            ("\0", &[Kind::Int32][..]),
            ("%d\0", &[Kind::Int64][..]),
            ("%s\0", &[Kind::Ptr][..]),
        ] {
            let result = std::panic::catch_unwind(|| check_format(format, args));
            assert!(
                result.is_err(),
                "{format:?} with {} arguments passed",
                args.len()
            );
        }
    }
}
