//! Differential harness for `vcvt`, shared by the cargo-fuzz targets (`fuzz/fuzz_targets/`) and
//! the stable replay test `tests/fuzz_replay.rs`, which includes this file with `#[path]`, so
//! that the comparison logic exists once.
//!
//! # What one input does
//!
//! An input picks a pair (one of the 16 supported source/destination pairs), an overflow
//! mode, a length, a source and a destination offset, a few variant bits and the source values.
//! The source is copied into its own allocation that ends exactly where the source ends, so an
//! over-read leaves the allocation (AddressSanitizer reports it); the bytes in front of it are
//! poisoned when the caller passes ASan [`Hooks`]. Then every API call of the target runs, and
//! each destination is checked:
//!
//! * it lives inside a larger buffer with [`GUARD`] bytes on both sides; the call runs twice,
//!   over two canary fills that differ in every byte, with the guards poisoned under ASan;
//! * no byte outside the destination may change, and a call that fails must leave the whole
//!   buffer untouched;
//! * both runs must give the same bytes: a byte that differs kept its canary, so the element
//!   holding it was never written;
//! * the result must equal, bit for bit, the element-wise codec (`F16::from_f32_with`,
//!   `to_f32`, ... -- the specification). `Backend::Scalar`'s kernels run first, so a mismatch
//!   on any other path is a mismatch with Scalar.
//!
//! Target `slices` drives the typed APIs: `convert_slice_on` on every backend of
//! `Backend::available()` (and `Err(BackendUnavailable)` for the others), then one group of
//! entry points chosen by the variant byte: `convert_slice(_with)`, `try_convert_slice(_with)`,
//! `convert_slice_uninit(_with)` or `convert_to_vec(_with)`; and length mismatches. Target `bytes` drives
//! `convert_from_bytes(_with)` and `convert_to_bytes(_with)` on byte slices at any offset, with
//! byte counts that are not whole elements (`Err(ByteLength)`, checked before the element
//! count) and element counts that differ (`Err(LengthMismatch)`).
//!
//! # Input format
//!
//! Every byte string is a valid input; missing header bytes read as zero.
//!
//! | byte | meaning |
//! |---|---|
//! | 0 | pair, `% 16`, in the order of [`PAIRS`] |
//! | 1 | overflow mode, `% 3`: 0 = `Options::new()`, 1 = `Saturate`, 2 = `NonSaturating` |
//! | 2, 3 | length: `byte2 % 131` if byte 2 is below 240 (short lengths, the vector tails, get 94 % of inputs), else `131 + ((byte2 - 240) * 256 + byte3) % 3970` (up to 4100) |
//! | 4 | source offset: typed sources `% (64 / size)` elements, byte sources `% 64` bytes |
//! | 5 | destination offset, likewise |
//! | 6 | variant. `slices`: bits 0-1 pick the group of entry points run besides `convert_slice_on` (0: `convert_slice(_with)`, 1: `try_convert_slice(_with)`, 2: `convert_slice_uninit(_with)`, 3: `convert_to_vec(_with)`), bit 2 adds the length-mismatch calls. `bytes`: bits 0-2 extra source bytes (`% size`), bits 3-4 element-count change (1: +1, 2: -1), bits 5-7 extra destination bytes (`% size`) |
//! | 7.. | payload: source values, little-endian, repeated to fill the length (a fixed pseudo-random pattern if it holds no whole value) |
//!
//! [`seeds`] builds the committed corpus in this format.

use std::alloc::{self, Layout};
use std::mem::{MaybeUninit, size_of};
use std::ptr::NonNull;

use vcvt::{BF16, Backend, ConvertTo, Element, Error, F8E4M3, F8E5M2, F16, Options, Overflow};

/// The fuzz targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// Typed slices: every backend and every typed entry point.
    Slices,
    /// Unaligned little-endian byte slices: `convert_from_bytes(_with)`, `convert_to_bytes(_with)`.
    Bytes,
}

impl Target {
    /// Both targets.
    pub const ALL: [Target; 2] = [Target::Slices, Target::Bytes];

    /// The target's name: its binary in `fuzz/fuzz_targets/` and its corpus directory.
    pub fn name(self) -> &'static str {
        match self {
            Target::Slices => "slices",
            Target::Bytes => "bytes",
        }
    }

    /// The target with this name.
    pub fn from_name(name: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == name)
    }
}

/// Memory-checker hooks: mark bytes as off limits while a conversion runs, and back.
/// The fuzz targets pass AddressSanitizer's manual poisoning; the replay test passes
/// [`NO_HOOKS`] and relies on the canaries alone.
#[derive(Clone, Copy)]
pub struct Hooks {
    /// Makes `len` bytes at the pointer inaccessible.
    pub poison: fn(*const u8, usize),
    /// Makes them accessible again.
    pub unpoison: fn(*const u8, usize),
}

fn no_hook(_: *const u8, _: usize) {}

/// Hooks that do nothing.
pub const NO_HOOKS: Hooks = Hooks {
    poison: no_hook,
    unpoison: no_hook,
};

/// The 16 pairs, indexed by input byte 0.
pub const PAIRS: [&str; 16] = [
    "f32->F16",
    "f32->BF16",
    "f32->F8E4M3",
    "f32->F8E5M2",
    "f64->F16",
    "f64->BF16",
    "f64->F8E4M3",
    "f64->F8E5M2",
    "F16->f32",
    "BF16->f32",
    "F8E4M3->f32",
    "F8E5M2->f32",
    "F16->f64",
    "BF16->f64",
    "F8E4M3->f64",
    "F8E5M2->f64",
];

/// Guard bytes on each side of every destination.
pub const GUARD: usize = 128;

/// Header length of an input; the payload follows.
pub const HEADER: usize = 7;

/// Longest length an input can ask for.
pub const MAX_LEN: usize = 131 + 3969;

/// The overflow mode of a call with options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `Options::new()`: the destination format's default policy.
    Default,
    /// `Overflow::Saturate`.
    Saturate,
    /// `Overflow::NonSaturating`.
    NonSaturating,
}

impl Mode {
    fn options(self) -> Options {
        match self {
            Mode::Default => Options::new(),
            Mode::Saturate => Options::new().overflow(Overflow::Saturate),
            Mode::NonSaturating => Options::new().overflow(Overflow::NonSaturating),
        }
    }

    fn policy<D: Val>(self) -> Overflow {
        match self {
            Mode::Default => D::DEFAULT,
            Mode::Saturate => Overflow::Saturate,
            Mode::NonSaturating => Overflow::NonSaturating,
        }
    }

    fn byte(self) -> u8 {
        match self {
            Mode::Default => 0,
            Mode::Saturate => 1,
            Mode::NonSaturating => 2,
        }
    }
}

/// A parsed input.
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    /// Index into [`PAIRS`].
    pub pair: usize,
    /// Overflow mode of the calls that take options.
    pub mode: Mode,
    /// Number of source elements.
    pub len: usize,
    /// Source offset selector (byte 4).
    pub src_sel: u8,
    /// Destination offset selector (byte 5).
    pub dst_sel: u8,
    /// `bytes` variant bits (byte 6).
    pub variant: u8,
    /// Source values.
    pub payload: &'a [u8],
}

impl<'a> Input<'a> {
    /// Parses any byte string.
    pub fn parse(data: &'a [u8]) -> Input<'a> {
        let h = |i: usize| data.get(i).copied().unwrap_or(0);
        let len = match h(2) {
            b @ 0..240 => usize::from(b % 131),
            b => 131 + ((usize::from(b - 240) << 8) | usize::from(h(3))) % 3970,
        };
        Input {
            pair: usize::from(h(0) % 16),
            mode: match h(1) % 3 {
                0 => Mode::Default,
                1 => Mode::Saturate,
                _ => Mode::NonSaturating,
            },
            len,
            src_sel: h(4),
            dst_sel: h(5),
            variant: h(6),
            payload: data.get(HEADER..).unwrap_or(&[]),
        }
    }

    /// Encodes the input; `Input::parse(&x.encode())` gives `x` back.
    pub fn encode(&self) -> Vec<u8> {
        assert!(self.pair < 16 && self.len <= MAX_LEN);
        let (b2, b3) = if self.len <= 130 {
            (self.len as u8, 0)
        } else {
            let v = self.len - 131;
            ((240 + (v >> 8)) as u8, (v & 0xFF) as u8)
        };
        let mut out = vec![
            self.pair as u8,
            self.mode.byte(),
            b2,
            b3,
            self.src_sel,
            self.dst_sel,
            self.variant,
        ];
        out.extend_from_slice(self.payload);
        out
    }
}

/// Runs one parsed input; returns a description of the first failure.
pub fn try_run_input(target: Target, input: &Input, hooks: Hooks) -> Result<(), String> {
    let visit = Visit {
        target,
        input,
        hooks,
    };
    dispatch(input.pair % 16, visit)
}

// ---------------------------------------------------------------------------------------------
// Element types and the reference codec.

/// A slice element: its bits, little-endian encoding and default overflow policy.
pub trait Val: Element {
    /// Policy that `Options::new()` applies when narrowing into this type (unused for f32/f64).
    const DEFAULT: Overflow;
    /// Decodes one value from `size_of::<Self>()` little-endian bytes.
    fn from_le(b: &[u8]) -> Self;
    /// The value's bits.
    fn bits(self) -> u64;
}

macro_rules! val {
    ($t:ty, $bits:ty, $default:expr) => {
        impl Val for $t {
            const DEFAULT: Overflow = $default;
            fn from_le(b: &[u8]) -> Self {
                <$t>::from_bits(<$bits>::from_le_bytes(b.try_into().unwrap()))
            }
            fn bits(self) -> u64 {
                u64::from(self.to_bits())
            }
        }
    };
}
// Widening ignores the policy; f32/f64 never are narrowing destinations.
val!(f32, u32, Overflow::Saturate);
val!(f64, u64, Overflow::Saturate);
val!(F16, u16, F16::DEFAULT_OVERFLOW);
val!(BF16, u16, BF16::DEFAULT_OVERFLOW);
val!(F8E4M3, u8, F8E4M3::DEFAULT_OVERFLOW);
val!(F8E5M2, u8, F8E5M2::DEFAULT_OVERFLOW);

/// The element-wise reference conversion `Self -> D` (the crate's scalar codec through its
/// per-value API, which does not go through any slice kernel).
pub trait Refer<D>: Val {
    /// Converts one value with the given policy.
    fn refer(self, overflow: Overflow) -> D;
}

macro_rules! refer {
    ($n:ty) => {
        impl Refer<$n> for f32 {
            fn refer(self, overflow: Overflow) -> $n {
                <$n>::from_f32_with(self, overflow)
            }
        }
        impl Refer<$n> for f64 {
            fn refer(self, overflow: Overflow) -> $n {
                <$n>::from_f64_with(self, overflow)
            }
        }
        impl Refer<f32> for $n {
            fn refer(self, _: Overflow) -> f32 {
                self.to_f32()
            }
        }
        impl Refer<f64> for $n {
            fn refer(self, _: Overflow) -> f64 {
                self.to_f64()
            }
        }
    };
}
refer!(F16);
refer!(BF16);
refer!(F8E4M3);
refer!(F8E5M2);

/// Little-endian bytes of the reference conversion of `src`.
fn reference<S: Refer<D>, D: Val>(src: &[S], overflow: Overflow) -> Vec<u8> {
    let mut out = Vec::with_capacity(src.len() * size_of::<D>());
    for &x in src {
        out.extend_from_slice(&x.refer(overflow).bits().to_le_bytes()[..size_of::<D>()]);
    }
    out
}

/// `n` source values of `size` bytes: the payload's whole values repeated, or a fixed
/// pseudo-random pattern if the payload holds none.
fn source_bytes(payload: &[u8], size: usize, n: usize) -> Vec<u8> {
    let total = n * size;
    let whole = &payload[..payload.len() / size * size];
    let mut out = Vec::with_capacity(total + 8);
    if whole.is_empty() {
        let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
        while out.len() < total {
            // xorshift64: any fixed sequence with varied bits will do.
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            out.extend_from_slice(&s.to_le_bytes());
        }
        out.truncate(total);
    } else {
        while out.len() < total {
            let take = whole.len().min(total - out.len());
            out.extend_from_slice(&whole[..take]);
        }
    }
    out
}

fn decode<T: Val>(bytes: &[u8]) -> Vec<T> {
    bytes.chunks_exact(size_of::<T>()).map(T::from_le).collect()
}

// ---------------------------------------------------------------------------------------------
// Buffers.

/// Alignment of every buffer's base, so that offsets select the alignment modulo 64 exactly.
const BASE_ALIGN: usize = 64;

#[repr(align(64))]
struct Align64;

/// A source in its own allocation of exactly `off + data.len()` bytes (64-aligned), the data at
/// its end: a read past the data leaves the allocation, and the `off` bytes in front of it are
/// poisoned while the buffer lives.
struct SrcBuf {
    base: NonNull<u8>,
    layout: Option<Layout>,
    off: usize,
    len: usize,
    hooks: Hooks,
}

impl SrcBuf {
    fn new(data: &[u8], off: usize, hooks: Hooks) -> SrcBuf {
        let size = off + data.len();
        let (base, layout) = if size == 0 {
            // Nothing to allocate; a dangling, 64-aligned pointer that must never be read.
            (NonNull::<Align64>::dangling().cast::<u8>(), None)
        } else {
            let layout = Layout::from_size_align(size, BASE_ALIGN).unwrap();
            // SAFETY: `layout` has a non-zero size.
            let p = unsafe { alloc::alloc(layout) };
            let Some(base) = NonNull::new(p) else {
                alloc::handle_alloc_error(layout)
            };
            // SAFETY: the allocation holds `size` bytes; the prefix gets 0xFF (NaN bits in
            // every format, should a faulty kernel read it without ASan) and the rest the data.
            unsafe {
                base.as_ptr().write_bytes(0xFF, off);
                base.as_ptr()
                    .add(off)
                    .copy_from_nonoverlapping(data.as_ptr(), data.len());
            }
            (hooks.poison)(base.as_ptr(), off);
            (base, Some(layout))
        };
        SrcBuf {
            base,
            layout,
            off,
            len: data.len(),
            hooks,
        }
    }

    fn ptr(&self) -> *const u8 {
        // SAFETY: `off <= size` of the allocation (or both are zero for the dangling pointer).
        unsafe { self.base.as_ptr().add(self.off) }
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `len` initialized bytes at `ptr()` (or zero bytes at a non-null pointer),
        // not mutated while `self` is borrowed.
        unsafe { std::slice::from_raw_parts(self.ptr(), self.len) }
    }

    fn typed<T: Val>(&self) -> &[T] {
        assert!(self.off.is_multiple_of(size_of::<T>()) && self.len.is_multiple_of(size_of::<T>()));
        // SAFETY: the base is 64-aligned and `off` a multiple of the element size, which is
        // the alignment of every `Val` type; the bytes are initialized and every bit pattern
        // is a valid value of these plain-bits types.
        unsafe { std::slice::from_raw_parts(self.ptr().cast::<T>(), self.len / size_of::<T>()) }
    }
}

impl Drop for SrcBuf {
    fn drop(&mut self) {
        if let Some(layout) = self.layout {
            (self.hooks.unpoison)(self.base.as_ptr(), self.off);
            // SAFETY: allocated in `new` with this layout.
            unsafe { alloc::dealloc(self.base.as_ptr(), layout) };
        }
    }
}

/// A destination of `len` bytes at `GUARD + off` inside a 64-aligned buffer with `GUARD`
/// bytes after it.
struct DstBuf {
    base: NonNull<u8>,
    layout: Layout,
    start: usize,
    len: usize,
    hooks: Hooks,
}

/// Canary byte `i` of fill `run` (0 or 1): the two fills differ in every byte, and repeat every
/// 256 bytes.
fn canary(i: usize, run: usize) -> u8 {
    CANARY[run][i % 256]
}

const CANARY: [[u8; 256]; 2] = {
    let mut t = [[0u8; 256]; 2];
    let mut i = 0;
    while i < 256 {
        t[0][i] = (i as u8).wrapping_mul(0x1D) ^ 0xA5;
        t[1][i] = !t[0][i];
        i += 1;
    }
    t
};

/// The first byte in `range` of `all` that does not hold fill `run`'s canary.
fn first_changed(all: &[u8], range: std::ops::Range<usize>, run: usize) -> Option<usize> {
    let mut i = range.start;
    while i < range.end {
        // Compare up to the next multiple of 256, where the canary pattern restarts.
        let j = ((i / 256 + 1) * 256).min(range.end);
        if all[i..j] != CANARY[run][i % 256..i % 256 + (j - i)] {
            return (i..j).find(|&k| all[k] != canary(k, run));
        }
        i = j;
    }
    None
}

impl DstBuf {
    fn new(off: usize, len: usize, hooks: Hooks) -> DstBuf {
        let layout = Layout::from_size_align(2 * GUARD + off + len, BASE_ALIGN).unwrap();
        // SAFETY: the size is at least 2 * GUARD > 0. Zeroed, so the bytes are initialized
        // from the start and `all_mut` may hand them out.
        let p = unsafe { alloc::alloc_zeroed(layout) };
        let Some(base) = NonNull::new(p) else {
            alloc::handle_alloc_error(layout)
        };
        DstBuf {
            base,
            layout,
            start: GUARD + off,
            len,
            hooks,
        }
    }

    fn fill(&mut self, run: usize) {
        for chunk in self.all_mut().chunks_mut(256) {
            chunk.copy_from_slice(&CANARY[run][..chunk.len()]);
        }
    }

    fn region(&self) -> *mut u8 {
        // SAFETY: `start + len <= size`.
        unsafe { self.base.as_ptr().add(self.start) }
    }

    /// Poisons the guards (the destination stays writable).
    fn arm(&self) {
        let end = self.start + self.len;
        (self.hooks.poison)(self.base.as_ptr(), self.start);
        // SAFETY: `end <= size`.
        (self.hooks.poison)(
            unsafe { self.base.as_ptr().add(end) },
            self.layout.size() - end,
        );
    }

    fn disarm(&self) {
        (self.hooks.unpoison)(self.base.as_ptr(), self.layout.size());
    }

    fn all(&self) -> &[u8] {
        // SAFETY: the allocation is initialized (zeroed, then written), and unpoisoned
        // (`disarm`) whenever the harness uses it; the borrow of `self` excludes writers.
        unsafe { std::slice::from_raw_parts(self.base.as_ptr(), self.layout.size()) }
    }

    fn all_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `all`, and `&mut self` makes this the only access.
        unsafe { std::slice::from_raw_parts_mut(self.base.as_ptr(), self.layout.size()) }
    }
}

impl Drop for DstBuf {
    fn drop(&mut self) {
        self.disarm();
        // SAFETY: allocated in `new` with this layout.
        unsafe { alloc::dealloc(self.base.as_ptr(), self.layout) };
    }
}

// ---------------------------------------------------------------------------------------------
// The checker.

/// Description of the case, for failure messages.
struct Ctx<'a> {
    target: Target,
    pair: usize,
    mode: Mode,
    len: usize,
    src_off: usize,
    src_bits: &'a [u64],
    src_size: usize,
    hooks: Hooks,
}

impl Ctx<'_> {
    fn fail(&self, api: &str, dst_off: usize, msg: String) -> String {
        format!(
            "vcvt fuzz failure in `{api}`\n  target {}, pair {}, mode {:?}, len {}, source offset {} B, destination offset {} B\n  {msg}\n  (save the input under fuzz/regressions/{}/ and run `cargo test --test fuzz_replay` to replay it)",
            self.target.name(),
            PAIRS[self.pair],
            self.mode,
            self.len,
            self.src_off,
            dst_off,
            self.target.name(),
        )
    }

    fn src_hex(&self, i: usize) -> String {
        match self.src_bits.get(i) {
            Some(b) => format!("{b:#0w$x}", w = 2 + 2 * self.src_size),
            None => "-".into(),
        }
    }
}

/// What a call must do.
#[derive(Clone, Copy)]
enum Expect<'a> {
    /// Return `Ok` and write exactly these bytes.
    Write(&'a [u8]),
    /// Return this error and touch nothing.
    Fail(Error),
}

fn hex(bytes: &[u8]) -> String {
    let mut v = [0u8; 8];
    v[..bytes.len()].copy_from_slice(bytes);
    format!("{:#0w$x}", u64::from_le_bytes(v), w = 2 + 2 * bytes.len())
}

/// Runs `call` twice on a guarded destination of `len` bytes at offset `dst_off` and checks it
/// against `expect` (see the module docs). `call` gets the destination's first byte.
fn check_call(
    ctx: &Ctx,
    api: &str,
    dst_off: usize,
    len: usize,
    elem: usize,
    expect: Expect,
    call: &mut dyn FnMut(*mut u8) -> Result<(), Error>,
) -> Result<(), String> {
    let fail = |msg: String| Err(ctx.fail(api, dst_off, msg));
    let mut buf = DstBuf::new(dst_off, len, ctx.hooks);
    let mut outs: [Vec<u8>; 2] = [Vec::new(), Vec::new()];
    for (run, out) in outs.iter_mut().enumerate() {
        buf.fill(run);
        buf.arm();
        let got = call(buf.region());
        buf.disarm();
        match (expect, got) {
            (Expect::Write(_), Ok(())) => {}
            (Expect::Fail(want), Err(e)) if e == want => {}
            (Expect::Write(_), got) => return fail(format!("returned {got:?}, expected Ok(())")),
            (Expect::Fail(want), got) => {
                return fail(format!("returned {got:?}, expected Err({want:?})"));
            }
        }
        // Bytes that must keep their canary: the guards, or everything after a failure.
        let (lo, hi) = match expect {
            Expect::Write(_) => (buf.start, buf.start + len),
            Expect::Fail(_) => (buf.start, buf.start),
        };
        let all = buf.all();
        let changed = first_changed(all, 0..lo, run).or(first_changed(all, hi..all.len(), run));
        if let Some(i) = changed {
            let pos = i as isize - buf.start as isize;
            let where_ = if matches!(expect, Expect::Fail(_)) {
                format!("byte {pos} relative to the destination start although the call failed")
            } else if pos < 0 {
                format!("byte {pos} before the destination")
            } else {
                format!("byte {} after the end of the destination", i - hi)
            };
            return fail(format!(
                "wrote outside its destination: {where_} changed from {:#04x} to {:#04x} (canary run {run})",
                canary(i, run),
                all[i]
            ));
        }
        *out = all[buf.start..buf.start + len].to_vec();
    }
    let Expect::Write(want) = expect else {
        return Ok(());
    };
    if outs[0] == outs[1] {
        return compare(ctx, api, dst_off, &outs[0], want, elem);
    }
    if let Some(i) = (0..len).find(|&i| outs[0][i] != outs[1][i]) {
        let e = i / elem;
        let r = e * elem..(e + 1) * elem;
        let kept = r.clone().all(|j| {
            outs[0][j] == canary(buf.start + j, 0) && outs[1][j] == canary(buf.start + j, 1)
        });
        return fail(if kept {
            format!(
                "element {e} of {} was not written (it kept the canary of both runs: {} / {})",
                len / elem,
                hex(&outs[0][r.clone()]),
                hex(&outs[1][r])
            )
        } else {
            format!(
                "element {e} differs between two identical calls: {} then {} (byte {} kept a canary or the call reads its destination)",
                hex(&outs[0][r.clone()]),
                hex(&outs[1][r]),
                i % elem
            )
        });
    }
    compare(ctx, api, dst_off, &outs[0], want, elem)
}

/// Compares an output with the reference bytes.
fn compare(
    ctx: &Ctx,
    api: &str,
    dst_off: usize,
    got: &[u8],
    want: &[u8],
    elem: usize,
) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(ctx.fail(
            api,
            dst_off,
            format!("output has {} bytes, expected {}", got.len(), want.len()),
        ));
    }
    if got == want {
        return Ok(());
    }
    let bad: Vec<usize> = (0..got.len() / elem)
        .filter(|&e| got[e * elem..(e + 1) * elem] != want[e * elem..(e + 1) * elem])
        .collect();
    let Some(&e) = bad.first() else {
        return Ok(());
    };
    let r = e * elem..(e + 1) * elem;
    Err(ctx.fail(
        api,
        dst_off,
        format!(
            "element {e} (source bits {}): got {}, the scalar codec gives {} ({} of {} elements differ)",
            ctx.src_hex(e),
            hex(&got[r.clone()]),
            hex(&want[r]),
            bad.len(),
            got.len() / elem
        ),
    ))
}

/// The expectation of a call that fails with `err`, or else writes `want`.
fn expect(err: Option<Error>, want: &[u8]) -> Expect<'_> {
    match err {
        Some(e) => Expect::Fail(e),
        None => Expect::Write(want),
    }
}

/// `check_call` for a typed destination of `n` elements of `D` at `dst_off` bytes (a multiple
/// of the element size).
fn typed<D: Val>(
    ctx: &Ctx,
    api: &str,
    dst_off: usize,
    n: usize,
    expect: Expect,
    mut call: impl FnMut(&mut [D]) -> Result<(), Error>,
) -> Result<(), String> {
    assert_eq!(dst_off % size_of::<D>(), 0);
    check_call(
        ctx,
        api,
        dst_off,
        n * size_of::<D>(),
        size_of::<D>(),
        expect,
        &mut |p| {
            // SAFETY: `check_call` passes a writable region of `n * size_of::<D>()` initialized
            // bytes, 64-aligned plus `GUARD + dst_off` (a multiple of the element size, which is
            // `D`'s alignment); every bit pattern is a valid `D`; nothing else uses the region
            // during the call.
            let d = unsafe { std::slice::from_raw_parts_mut(p.cast::<D>(), n) };
            call(d)
        },
    )
}

// ---------------------------------------------------------------------------------------------
// Dispatch over the pairs.

struct Visit<'a, 'b> {
    target: Target,
    input: &'a Input<'b>,
    hooks: Hooks,
}

impl Visit<'_, '_> {
    fn go<S: Refer<D> + ConvertTo<D>, D: Val>(self) -> Result<(), String> {
        match self.target {
            Target::Slices => slices::<S, D>(self.input, self.hooks),
            Target::Bytes => bytes::<S, D>(self.input, self.hooks),
        }
    }
}

fn dispatch(pair: usize, v: Visit) -> Result<(), String> {
    match pair {
        0 => v.go::<f32, F16>(),
        1 => v.go::<f32, BF16>(),
        2 => v.go::<f32, F8E4M3>(),
        3 => v.go::<f32, F8E5M2>(),
        4 => v.go::<f64, F16>(),
        5 => v.go::<f64, BF16>(),
        6 => v.go::<f64, F8E4M3>(),
        7 => v.go::<f64, F8E5M2>(),
        8 => v.go::<F16, f32>(),
        9 => v.go::<BF16, f32>(),
        10 => v.go::<F8E4M3, f32>(),
        11 => v.go::<F8E5M2, f32>(),
        12 => v.go::<F16, f64>(),
        13 => v.go::<BF16, f64>(),
        14 => v.go::<F8E4M3, f64>(),
        15 => v.go::<F8E5M2, f64>(),
        _ => unreachable!("pair index is taken % 16"),
    }
}

/// Typed offset: `sel % (64 / size)` elements, in bytes.
fn typed_off(sel: u8, size: usize) -> usize {
    usize::from(sel) % (BASE_ALIGN / size) * size
}

/// The `slices` target for one pair.
fn slices<S: Refer<D> + ConvertTo<D>, D: Val>(inp: &Input, hooks: Hooks) -> Result<(), String> {
    let (ss, ds) = (size_of::<S>(), size_of::<D>());
    let n = inp.len;
    let src_off = typed_off(inp.src_sel, ss);
    let dst_off = typed_off(inp.dst_sel, ds);
    let src_buf = SrcBuf::new(&source_bytes(inp.payload, ss, n), src_off, hooks);
    let src: &[S] = src_buf.typed();
    let src_bits: Vec<u64> = src.iter().map(|x| x.bits()).collect();
    let ctx = Ctx {
        target: Target::Slices,
        pair: inp.pair,
        mode: inp.mode,
        len: n,
        src_off,
        src_bits: &src_bits,
        src_size: ss,
        hooks,
    };
    let opts = inp.mode.options();
    let want_mode = reference::<S, D>(src, inp.mode.policy::<D>());
    let want_default = reference::<S, D>(src, D::DEFAULT);
    let (wm, wd) = (Expect::Write(&want_mode), Expect::Write(&want_default));

    // Every backend, Scalar (always available, listed last) first.
    let mut backends: Vec<Backend> = Backend::available().collect();
    if backends.last() != Some(&Backend::Scalar) {
        return Err(ctx.fail(
            "Backend::available",
            0,
            format!("{backends:?} does not end with Scalar"),
        ));
    }
    backends.rotate_right(1);
    for b in backends {
        let api = format!("convert_slice_on(Backend::{b:?})");
        typed::<D>(&ctx, &api, dst_off, n, wm, |d| {
            vcvt::convert_slice_on(b, src, d, opts)
        })?;
    }
    for &b in Backend::ALL.iter().filter(|b| !b.is_available()) {
        let api = format!("convert_slice_on(Backend::{b:?}) (unavailable)");
        let e = Error::BackendUnavailable { backend: b };
        typed::<D>(&ctx, &api, dst_off, n, Expect::Fail(e), |d| {
            vcvt::convert_slice_on(b, src, d, opts)
        })?;
    }

    // The entry points that use the active backend: one group per input (variant bits 0-1);
    // they are thin wrappers around the same kernels, so spreading them over inputs keeps the
    // rate of executions up.
    match inp.variant % 4 {
        0 => {
            typed::<D>(&ctx, "convert_slice", dst_off, n, wd, |d| {
                vcvt::convert_slice(src, d);
                Ok(())
            })?;
            typed::<D>(&ctx, "convert_slice_with", dst_off, n, wm, |d| {
                vcvt::convert_slice_with(src, d, opts);
                Ok(())
            })?;
        }
        1 => {
            typed::<D>(&ctx, "try_convert_slice", dst_off, n, wd, |d| {
                vcvt::try_convert_slice(src, d)
            })?;
            typed::<D>(&ctx, "try_convert_slice_with", dst_off, n, wm, |d| {
                vcvt::try_convert_slice_with(src, d, opts)
            })?;
        }
        2 => {
            for (api, with) in [
                ("convert_slice_uninit", false),
                ("convert_slice_uninit_with", true),
            ] {
                let want = if with { wm } else { wd };
                check_call(&ctx, api, dst_off, n * ds, ds, want, &mut |p| {
                    // SAFETY: as in `typed`; `MaybeUninit<D>` has `D`'s layout.
                    let u =
                        unsafe { std::slice::from_raw_parts_mut(p.cast::<MaybeUninit<D>>(), n) };
                    let out = if with {
                        vcvt::convert_slice_uninit_with(src, u, opts)
                    } else {
                        vcvt::convert_slice_uninit(src, u)
                    };
                    assert!(
                        out.as_ptr().cast::<u8>() == p.cast_const() && out.len() == n,
                        "{api} returned a slice that is not its destination"
                    );
                    Ok(())
                })?;
            }
        }
        _ => {
            for (api, with) in [("convert_to_vec", false), ("convert_to_vec_with", true)] {
                let (v, want): (Vec<D>, &[u8]) = if with {
                    (vcvt::convert_to_vec_with(src, opts), &want_mode)
                } else {
                    (vcvt::convert_to_vec(src), &want_default)
                };
                let mut got = Vec::with_capacity(v.len() * ds);
                for x in v {
                    got.extend_from_slice(&x.bits().to_le_bytes()[..ds]);
                }
                compare(&ctx, api, 0, &got, want, ds)?;
            }
        }
    }
    if inp.variant & 4 == 0 {
        return Ok(());
    }

    // Length mismatches (variant bit 2) fail and touch nothing.
    let mut other_lens = vec![n + 1];
    if n > 0 {
        other_lens.push(n - 1);
    }
    for m in other_lens {
        let e = Expect::Fail(Error::LengthMismatch { src: n, dst: m });
        typed::<D>(
            &ctx,
            "try_convert_slice (length mismatch)",
            dst_off,
            m,
            e,
            |d| vcvt::try_convert_slice(src, d),
        )?;
        typed::<D>(
            &ctx,
            "try_convert_slice_with (length mismatch)",
            dst_off,
            m,
            e,
            |d| vcvt::try_convert_slice_with(src, d, opts),
        )?;
        for b in Backend::available() {
            let api = format!("convert_slice_on(Backend::{b:?}) (length mismatch)");
            typed::<D>(&ctx, &api, dst_off, m, e, |d| {
                vcvt::convert_slice_on(b, src, d, opts)
            })?;
        }
    }
    Ok(())
}

/// The `bytes` target for one pair.
fn bytes<S: Refer<D> + ConvertTo<D>, D: Val>(inp: &Input, hooks: Hooks) -> Result<(), String> {
    let (ss, ds) = (size_of::<S>(), size_of::<D>());
    let n = inp.len;
    let v = inp.variant;
    let extra_src = usize::from(v & 7) % ss;
    let m = match (v >> 3) & 3 {
        1 => n + 1,
        2 if n > 0 => n - 1,
        _ => n,
    };
    let extra_dst = usize::from(v >> 5) % ds;
    let opts = inp.mode.options();
    let values = source_bytes(inp.payload, ss, n);
    let src_vals: Vec<S> = decode(&values);
    let src_bits: Vec<u64> = src_vals.iter().map(|x| x.bits()).collect();
    let want_mode = reference::<S, D>(&src_vals, inp.mode.policy::<D>());
    let want_default = reference::<S, D>(&src_vals, D::DEFAULT);

    // Bytes -> typed: the source at any byte offset, possibly with a partial value at the end.
    let src_off = usize::from(inp.src_sel) % BASE_ALIGN;
    let mut raw = values.clone();
    raw.resize(values.len() + extra_src, 0x5A);
    let src_buf = SrcBuf::new(&raw, src_off, hooks);
    let src_bytes = src_buf.bytes();
    let mut ctx = Ctx {
        target: Target::Bytes,
        pair: inp.pair,
        mode: inp.mode,
        len: n,
        src_off,
        src_bits: &src_bits,
        src_size: ss,
        hooks,
    };
    let dst_off = typed_off(inp.dst_sel, ds);
    // A partial value is reported before the element count is compared.
    let from_err = if extra_src != 0 {
        Some(Error::ByteLength {
            bytes: raw.len(),
            element_size: ss,
        })
    } else if m != n {
        Some(Error::LengthMismatch { src: n, dst: m })
    } else {
        None
    };
    let want = expect(from_err, &want_default);
    typed::<D>(&ctx, "convert_from_bytes", dst_off, m, want, |d| {
        vcvt::convert_from_bytes::<S, D>(src_bytes, d)
    })?;
    let want = expect(from_err, &want_mode);
    typed::<D>(&ctx, "convert_from_bytes_with", dst_off, m, want, |d| {
        vcvt::convert_from_bytes_with::<S, D>(src_bytes, d, opts)
    })?;
    drop(src_buf);

    // Typed -> bytes: the destination at any byte offset, possibly not a whole number of values.
    let src_off = typed_off(inp.src_sel, ss);
    let src_buf = SrcBuf::new(&values, src_off, hooks);
    let src: &[S] = src_buf.typed();
    ctx.src_off = src_off;
    let dst_off = usize::from(inp.dst_sel) % BASE_ALIGN;
    let nbytes = m * ds + extra_dst;
    let to_err = if extra_dst != 0 {
        Some(Error::ByteLength {
            bytes: nbytes,
            element_size: ds,
        })
    } else if m != n {
        Some(Error::LengthMismatch { src: n, dst: m })
    } else {
        None
    };
    let to_bytes = |api: &str, want: &[u8], with: bool| {
        check_call(
            &ctx,
            api,
            dst_off,
            nbytes,
            ds,
            expect(to_err, want),
            &mut |p| {
                // SAFETY: `check_call` passes a writable region of `nbytes` initialized bytes that
                // nothing else uses during the call.
                let out = unsafe { std::slice::from_raw_parts_mut(p, nbytes) };
                if with {
                    vcvt::convert_to_bytes_with::<S, D>(src, out, opts)
                } else {
                    vcvt::convert_to_bytes::<S, D>(src, out)
                }
            },
        )
    };
    to_bytes("convert_to_bytes", &want_default, false)?;
    to_bytes("convert_to_bytes_with", &want_mode, true)?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Self-test of the checker.

/// Checks that the checker itself reports each kind of fault (a checker that cannot fail
/// would make every fuzz run pass). Returns the list of faults it missed.
pub fn self_test() -> Vec<&'static str> {
    let ctx = Ctx {
        target: Target::Slices,
        pair: 0,
        mode: Mode::Default,
        len: 4,
        src_off: 0,
        src_bits: &[1, 2, 3, 4],
        src_size: 4,
        hooks: NO_HOOKS,
    };
    let want: Vec<u8> = (1..=8).collect();
    let good = |p: *mut u8| {
        // SAFETY: `p` is the 8-byte destination `check_call` hands out.
        unsafe { p.copy_from_nonoverlapping(want.as_ptr(), 8) };
        Ok(())
    };
    type Fault<'a> = (
        &'static str,
        Expect<'a>,
        Box<dyn Fn(*mut u8) -> Result<(), Error> + 'a>,
    );
    let faults: Vec<Fault> = vec![
        (
            "last element not written",
            Expect::Write(&want),
            Box::new(|p| {
                // SAFETY: the first 6 of the 8 destination bytes.
                unsafe { p.copy_from_nonoverlapping(want.as_ptr(), 6) };
                Ok(())
            }),
        ),
        (
            "one byte written after the end",
            Expect::Write(&want),
            Box::new(|p| {
                good(p)?;
                // SAFETY: inside the trailing guard of the test buffer.
                unsafe { p.add(8).write(0) };
                Ok(())
            }),
        ),
        (
            "one byte written before the start",
            Expect::Write(&want),
            Box::new(|p| {
                good(p)?;
                // SAFETY: inside the leading guard of the test buffer.
                unsafe { p.sub(1).write(0) };
                Ok(())
            }),
        ),
        (
            "wrong value",
            Expect::Write(&want),
            Box::new(|p| {
                good(p)?;
                // SAFETY: byte 5 of the destination.
                unsafe { p.add(5).write(0xEE) };
                Ok(())
            }),
        ),
        (
            "destination read back (output depends on its old contents)",
            Expect::Write(&want),
            Box::new(|p| {
                // SAFETY: byte 7 of the destination, read before and written after `good`.
                let old = unsafe { p.add(7).read() };
                good(p)?;
                // SAFETY: as above.
                unsafe { p.add(7).write(want[7] ^ old) };
                Ok(())
            }),
        ),
        (
            "Ok where an error is due",
            Expect::Fail(Error::LengthMismatch { src: 4, dst: 4 }),
            Box::new(|_| Ok(())),
        ),
        (
            "wrong error",
            Expect::Fail(Error::LengthMismatch { src: 4, dst: 4 }),
            Box::new(|_| {
                Err(Error::ByteLength {
                    bytes: 4,
                    element_size: 2,
                })
            }),
        ),
        (
            "destination written by a failing call",
            Expect::Fail(Error::LengthMismatch { src: 4, dst: 4 }),
            Box::new(|p| {
                good(p)?;
                Err(Error::LengthMismatch { src: 4, dst: 4 })
            }),
        ),
    ];
    let mut missed = Vec::new();
    if check_call(&ctx, "good", 3, 8, 2, Expect::Write(&want), &mut |p| {
        good(p)
    })
    .is_err()
    {
        missed.push("a correct call was reported");
    }
    for (name, expect, f) in faults {
        if check_call(&ctx, name, 3, 8, 2, expect, &mut |p| f(p)).is_ok() {
            missed.push(name);
        }
    }
    missed
}

// ---------------------------------------------------------------------------------------------
// The seed corpus.

/// One seed input.
pub struct Seed {
    /// Target whose corpus holds it.
    pub target: Target,
    /// File name.
    pub name: String,
    /// Contents.
    pub data: Vec<u8>,
}

/// `2^e` for `-1022 <= e <= 1023`, built from its bits: exact everywhere, also under Miri,
/// which makes `powi` deliberately imprecise.
fn pow2(e: i32) -> f64 {
    assert!((-1022..=1023).contains(&e));
    f64::from_bits(((e + 1023) as u64) << 52)
}

/// Field widths and largest finite code of a narrow format, for the threshold values.
struct Fmt {
    exp_bits: i32,
    man_bits: i32,
    max: u32,
}

const FMTS: [Fmt; 4] = [
    Fmt {
        exp_bits: 5,
        man_bits: 10,
        max: 0x7BFF,
    }, // F16
    Fmt {
        exp_bits: 8,
        man_bits: 7,
        max: 0x7F7F,
    }, // BF16
    Fmt {
        exp_bits: 4,
        man_bits: 3,
        max: 0x7E,
    }, // F8E4M3
    Fmt {
        exp_bits: 5,
        man_bits: 2,
        max: 0x7B,
    }, // F8E5M2
];

impl Fmt {
    /// The value of a positive finite code (exact in f64).
    fn value(&self, code: u32) -> f64 {
        let bias = (1 << (self.exp_bits - 1)) - 1;
        let e = (code >> self.man_bits) as i32;
        let m = f64::from(code & ((1 << self.man_bits) - 1));
        if e == 0 {
            m * pow2(1 - bias - self.man_bits)
        } else {
            (1.0 + m * pow2(-self.man_bits)) * pow2(e - bias)
        }
    }

    /// Values on and between the format's representable numbers where rounding decides:
    /// every one is exact in f32.
    fn thresholds(&self) -> Vec<f64> {
        let v = |c| self.value(c);
        let min_normal = 1u32 << self.man_bits;
        vec![
            v(1),                                                          // smallest subnormal
            v(1) / 2.0,                                // tie with zero: rounds to 0 (even)
            v(1) * 1.5,                                // tie between 1 and 2 quanta: rounds to 2
            v(min_normal - 1),                         // largest subnormal
            (v(min_normal - 1) + v(min_normal)) / 2.0, // tie: rounds up to the smallest normal
            v(min_normal),                             // smallest normal
            (v(self.max - 1) + v(self.max)) / 2.0,     // tie just below MAX
            v(self.max),                               // MAX
            v(self.max) + (v(self.max) - v(self.max - 1)) / 2.0, // overflow threshold (tie above MAX)
            v(self.max) * 2.0,                                   // clear overflow
            1.0 + (v(min_normal * 2 + 1) / v(min_normal * 2) - 1.0) / 2.0, // 1 + ulp/2: rounds to 1
            1.0 + 1.5 * (v(min_normal * 2 + 1) / v(min_normal * 2) - 1.0), // 1 + 3ulp/2: rounds up
        ]
    }
}

/// f32 special values (bits) for every format.
pub fn f32_specials() -> Vec<u32> {
    let mut v: Vec<u32> = vec![
        0x0000_0000, // +0
        0x8000_0000, // -0
        0x7F80_0000, // +Inf
        0xFF80_0000, // -Inf
        0x7FC0_0000, // quiet NaN
        0xFFC0_0000, // -quiet NaN
        0x7FC0_0001, // quiet NaN, payload only in the lowest bit
        0x7F80_0001, // signalling NaN, lowest payload bit
        0xFF80_0001, // -signalling NaN
        0x7FA0_0000, // signalling NaN, top payload bit
        0x7F80_2000, // sNaN, payload in bit 13 (lowest bit F16 keeps)
        0x7F80_1FFF, // sNaN, payload only below bit 13 (F16 keeps none)
        0x7F80_8000, // sNaN, payload only below bit 16 (BF16 keeps none)
        0x7F81_0000, // sNaN, payload in bit 16 (lowest bit BF16 keeps)
        0x7FBF_FFFF, // sNaN, full payload
        0xFFFF_FFFF, // -quiet NaN, full payload
        0x0000_0001, // smallest f32 subnormal
        0x8000_0001,
        0x007F_FFFF, // largest f32 subnormal
        0x0080_0000, // smallest f32 normal
        0x7F7F_FFFF, // f32::MAX
        0xFF7F_FFFF,
        0x3F80_0000, // 1
        0xBFC0_0000, // -1.5
        0x3DCC_CCCD, // 0.1
    ];
    for f in &FMTS {
        for t in f.thresholds() {
            let b = (t as f32).to_bits();
            if f64::from(f32::from_bits(b)) != t {
                continue; // only BF16's 2 * MAX, beyond f32's range
            }
            // The value, its f32 neighbours, and the negatives.
            for x in [b - 1, b, b + 1] {
                v.push(x);
                v.push(x | 0x8000_0000);
            }
        }
    }
    v
}

/// f64 special values (bits): the f32 ones widened, plus double-rounding traps and values
/// outside f32's range.
pub fn f64_specials() -> Vec<u64> {
    let mut v: Vec<u64> = vec![
        0x0000_0000_0000_0000,
        0x8000_0000_0000_0000,
        0x7FF0_0000_0000_0000,
        0xFFF0_0000_0000_0000,
        0x7FF8_0000_0000_0000, // quiet NaN
        0xFFF8_0000_0000_0000,
        0x7FF0_0000_0000_0001, // sNaN, payload only in the lowest bit
        0x7FF4_0000_0000_0000, // sNaN, top payload bit
        0x7FF0_0400_0000_0000, // sNaN, payload in bit 42 (lowest bit F16 keeps)
        0x7FF0_0200_0000_0000, // sNaN, payload only below bit 42
        0x7FF0_0000_2000_0000, // sNaN, payload in bit 29 (lowest bit f32 keeps)
        0xFFFF_FFFF_FFFF_FFFF,
        0x0000_0000_0000_0001, // smallest f64 subnormal
        0x0010_0000_0000_0000, // smallest f64 normal
        0x7FEF_FFFF_FFFF_FFFF, // f64::MAX
        0xFFEF_FFFF_FFFF_FFFF,
        1e39f64.to_bits(),               // above f32::MAX
        1e-46f64.to_bits(),              // below f32's smallest subnormal
        (65520.0 - pow2(-30)).to_bits(), // F16: just below the overflow tie
        (65520.0 + pow2(-30)).to_bits(),
        (464.0 - pow2(-30)).to_bits(), // E4M3: just below the tie above 448
        (464.0 + pow2(-30)).to_bits(), // E4M3: just above it: overflows
        (61440.0 - pow2(-30)).to_bits(), // E5M2 overflow tie
        (1.0 + pow2(-11) + pow2(-40)).to_bits(), // F16: above a tie, rounds up
        f64::from(f32::MAX).to_bits() + 1,
    ];
    for f in &FMTS {
        for t in f.thresholds() {
            let b = t.to_bits();
            // Double-rounding traps: 1 and 2^20 f64 ulps from the threshold, all of which an
            // intermediate f32 rounding would merge into the threshold itself.
            for x in [b - (1 << 20), b - 1, b, b + 1, b + (1 << 20)] {
                v.push(x);
                v.push(x | (1 << 63));
            }
        }
    }
    v
}

/// Codes of a narrow format worth widening: all of them for 8-bit formats, specials plus a
/// stride through the rest for 16-bit ones.
fn narrow_codes(fmt: usize) -> Vec<u16> {
    match fmt {
        0 => {
            let mut v: Vec<u16> = vec![
                0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00,
                0x7C01, 0x7D00, 0x7DFF, 0x7E00, 0x7E01, 0x7FFF, 0xFC01, 0xFE00, 0xFFFF, 0x3C00,
                0x3C01,
            ];
            v.extend((0..=255u16).map(|k| k * 257));
            v
        }
        1 => {
            let mut v: Vec<u16> = vec![
                0x0000, 0x8000, 0x0001, 0x8001, 0x007F, 0x0080, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80,
                0x7F81, 0x7FA0, 0x7FBF, 0x7FC0, 0x7FC1, 0x7FFF, 0xFF81, 0xFFC0, 0x3F80, 0x3F81,
            ];
            v.extend((0..=255u16).map(|k| k * 257));
            v
        }
        _ => (0..=255).collect(),
    }
}

/// The committed seed corpus (`fuzz/corpus/<target>/<name>`), written by
/// `cargo run --manifest-path fuzz/Cargo.toml --example gen_corpus` and compared with the
/// files on disk by `tests/fuzz_replay.rs`.
pub fn seeds() -> Vec<Seed> {
    let payload_for = |pair: usize| -> Vec<u8> {
        match pair {
            0..=3 => f32_specials()
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect(),
            4..=7 => f64_specials()
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect(),
            _ => {
                let fmt = pair % 4;
                let codes = narrow_codes(fmt);
                if fmt >= 2 {
                    codes.iter().map(|&c| c as u8).collect()
                } else {
                    codes.iter().flat_map(|x| x.to_le_bytes()).collect()
                }
            }
        }
    };
    let elem = |pair: usize| match pair {
        0..=3 => 4,
        4..=7 => 8,
        8..=9 | 12..=13 => 2,
        _ => 1,
    };
    let name = |pair: usize| PAIRS[pair].to_lowercase().replace("->", "-to-");
    let mut out = Vec::new();
    let mut push = |target: Target, name: String, input: Input| {
        out.push(Seed {
            target,
            name,
            data: input.encode(),
        })
    };
    for pair in 0..16 {
        let payload = payload_for(pair);
        let count = (payload.len() / elem(pair)).min(MAX_LEN);
        let base = Input {
            pair,
            mode: Mode::Default,
            len: count,
            src_sel: pair as u8,
            dst_sel: 3 * pair as u8 + 1,
            variant: 0,
            payload: &payload,
        };
        // slices: each special value once; narrowing under both explicit policies (the
        // default one runs on every input anyway); the entry-point groups in turn, with the
        // length-mismatch calls.
        if pair < 8 {
            for (k, mode) in [Mode::Saturate, Mode::NonSaturating]
                .into_iter()
                .enumerate()
            {
                let variant = ((pair + k) as u8 % 4) | 4;
                let tag = if mode == Mode::Saturate {
                    "sat"
                } else {
                    "nonsat"
                };
                push(
                    Target::Slices,
                    format!("{}-{tag}", name(pair)),
                    Input {
                        mode,
                        variant,
                        ..base
                    },
                );
            }
        } else {
            let variant = (pair as u8 % 4) | 4;
            let input = Input { variant, ..base };
            push(Target::Slices, format!("{}-codes", name(pair)), input);
        }
        // bytes: misaligned source and destination bytes.
        push(
            Target::Bytes,
            format!("{}-misaligned", name(pair)),
            Input {
                mode: if pair < 8 {
                    Mode::NonSaturating
                } else {
                    Mode::Default
                },
                src_sel: 2 * pair as u8 + 1,
                dst_sel: 5 * pair as u8 + 3,
                ..base
            },
        );
    }
    // Long slices with the specials at every lane position, at odd offsets.
    for (k, (pair, src_sel, dst_sel)) in [(0, 3, 5), (5, 1, 7), (8, 9, 2), (14, 33, 6)]
        .into_iter()
        .enumerate()
    {
        let payload = payload_for(pair);
        let input = Input {
            pair,
            mode: Mode::Saturate,
            len: MAX_LEN,
            src_sel,
            dst_sel,
            variant: k as u8,
            payload: &payload,
        };
        push(Target::Slices, format!("{}-long", name(pair)), input);
    }
    // Empty slices.
    let empty = Input {
        pair: 2,
        mode: Mode::Default,
        len: 0,
        src_sel: 0,
        dst_sel: 0,
        variant: 4,
        payload: &[],
    };
    push(Target::Slices, "empty".into(), empty);
    push(Target::Bytes, "empty".into(), empty);
    // Byte-count and element-count errors: (pair, extra source bytes, count change, extra
    // destination bytes, what), see the variant byte of the `bytes` target.
    let payload = (0u8..=255).collect::<Vec<u8>>();
    for (pair, extra_src, count, extra_dst, what) in [
        (0, 3, 0, 0, "odd-source-bytes"), // f32 source, 3 extra bytes
        (8, 1, 0, 0, "odd-source-bytes"), // F16 source, 1 extra byte
        (12, 0, 0, 5, "odd-dest-bytes"),  // f64 destination, 5 extra bytes
        (1, 0, 0, 1, "odd-dest-bytes"),   // BF16 destination, 1 extra byte
        (5, 0, 1, 0, "dest-one-longer"),
        (11, 0, 2, 0, "dest-one-shorter"),
        (4, 7, 1, 1, "every-error"), // all three at once
    ] {
        let variant = extra_src | (count << 3) | (extra_dst << 5);
        let input = Input {
            pair,
            mode: Mode::Default,
            len: 37,
            src_sel: 7,
            dst_sel: 9,
            variant,
            payload: &payload,
        };
        push(Target::Bytes, format!("{}-{what}", name(pair)), input);
    }
    out
}
