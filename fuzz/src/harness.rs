//! Differential harness for `vcvt`, shared by the cargo-fuzz targets (`fuzz/fuzz_targets/`) and
//! the stable replay test `tests/fuzz_replay.rs`, which includes this file with `#[path]`, so
//! that the comparison logic exists once.
//!
//! # What one input does
//!
//! An input picks a pair (one of the 60 pairs of the crate: `f32` and `f64` to and from each
//! of the 11 narrow types of [`FORMATS`]), an overflow mode, a NaN policy, a length, a source
//! and a destination offset, a few variant bits and the source values. The source is copied
//! into its own allocation that ends exactly where the source ends, so an over-read leaves the
//! allocation (AddressSanitizer reports it); the bytes in front of it are poisoned when the
//! caller passes ASan [`Hooks`]. Then every API call of the target runs, and each destination
//! is checked:
//!
//! * it lives inside a larger buffer with [`GUARD`] bytes on both sides; the call runs twice,
//!   over two canary fills that differ in every byte, with the guards poisoned under ASan;
//! * no byte outside the destination may change, and a call that fails must leave the whole
//!   buffer untouched;
//! * both runs must give the same bytes: a byte that differs kept its canary (or part of it:
//!   the spare high nibble of a packed byte, the high bits of an fp6/fp4 byte), so the element
//!   holding it was not fully written;
//! * the result must equal, bit for bit, the element-wise codec (the specification): each
//!   type's `from_f32_opts` / `from_f64_opts` with the call's [`Options`] (overflow mode and
//!   NaN policy) when narrowing, `to_f32` / `to_f64` of `from_bits(raw & mask)` when widening,
//!   so that the high bits of an fp6/fp4 source byte (mask `0x3F`/`0x0F`) must be ignored.
//!   `Backend::Scalar`'s kernels run first, so a mismatch on any other path is a mismatch
//!   with Scalar. Before that, the element functions are checked against each other (a
//!   narrowed code never sets bits above its width; with `NanPolicy::Preserve`,
//!   `from_f32_opts` agrees with `from_f32_with`).
//!
//! The packed type [`F4E2M1x2`] (two FP4 values per byte, value `2j` in the low nibble of
//! byte `j`) follows the crate's length rule: the input's length counts *values*, the wide
//! side's length, and the packed side has exactly `len.div_ceil(2)` bytes. Its expected bytes
//! are the element-wise `F4E2M1` codes packed in pairs, with `+0` in the last high nibble of
//! an odd count; widening expects `len` values and ignores that nibble. Any other packed
//! length is `Err(PackedLength { values, packed })` with nothing written, except that a
//! widening destination one value longer or shorter is valid when it needs the same bytes
//! (one longer than an odd count reads the last high nibble).
//!
//! Target `slices` drives the typed APIs: `convert_slice_on` on every backend of
//! `Backend::available()` (and `Err(BackendUnavailable)` for the others), then one group of
//! entry points chosen by the variant byte: `convert_slice(_with)`, `try_convert_slice(_with)`,
//! `convert_slice_uninit(_with)` or `convert_to_vec(_with)` (whose `Vec` holds one element
//! per source value: from `k` packed bytes, all `2 * k` nibbles); and other destination lengths
//! (`LengthMismatch`, `PackedLength`). Target `bytes` drives `convert_from_bytes(_with)` and
//! `convert_to_bytes(_with)` on byte slices at any offset, with byte counts that are not whole
//! elements (`Err(ByteLength)`, checked before the element count) and element counts that
//! differ (`Err(LengthMismatch)`, `Err(PackedLength)`).
//!
//! # Input format
//!
//! Every byte string is a valid input; missing header bytes read as zero.
//!
//! | byte | meaning |
//! |---|---|
//! | 0 | pair, `% 60`: `4 * t + d` for narrow type `t` in the order of [`FORMATS`] (`F16`, `BF16`, `F8E4M3`, `F8E5M2`, `F8E4M3FNUZ`, `F8E5M2FNUZ`, `F6E2M3`, `F6E3M2`, `F4E2M1`, `F4E2M1x2`, `F8E8M0`, `F8E3M4`, `F8E4M3IEEE`, `F8E4M3B11FNUZ`, `F8E5M3FNU`: the crate's registry order) and direction `d` (0: `f32 -> T`, 1: `f64 -> T`, 2: `T -> f32`, 3: `T -> f64`); see [`PAIRS`] |
//! | 1 | options. Overflow mode `% 3`: 0 = the format's default (`Options::new()`), 1 = `Saturate`, 2 = `NonSaturating`; NaN policy `/ 3 % 3`: 0 = `Preserve` (the default), 1 = `Canonical`, 2 = `ToMax` (see [`NANS`]). The entry points without options always use `Options::new()` |
//! | 2, 3 | length in values (the wide side's length): `byte2 % 131` if byte 2 is below 240 (short lengths, the vector tails, get 94 % of inputs), else `131 + ((byte2 - 240) * 256 + byte3) % 3970` (up to 4100) |
//! | 4 | source offset: typed sources `% (64 / size)` elements, byte sources `% 64` bytes |
//! | 5 | destination offset, likewise |
//! | 6 | variant. `slices`: bits 0-1 pick the group of entry points run besides `convert_slice_on` (0: `convert_slice(_with)`, 1: `try_convert_slice(_with)`, 2: `convert_slice_uninit(_with)`, 3: `convert_to_vec(_with)`), bit 2 adds the calls with other destination lengths (one element more and less, and for a packed pair the value count taken as a byte count or the other way round). `bytes`: bits 0-2 extra source bytes (`% size`), bits 3-4 destination element-count change (1: +1, 2: -1), bits 5-7 extra destination bytes (`% size`) |
//! | 7.. | payload: source elements, little-endian, used as they are (fp6/fp4 bytes with their high bits, packed bytes with both nibbles), repeated to fill the length (a fixed pseudo-random pattern if it holds no whole element) |
//!
//! [`seeds`] builds the committed corpus in this format.

use std::alloc::{self, Layout};
use std::mem::{MaybeUninit, size_of};
use std::ptr::NonNull;

use vcvt::{
    BF16, Backend, ConvertTo, Element, Error, F4E2M1, F4E2M1x2, F6E2M3, F6E3M2, F8E3M4, F8E4M3,
    F8E4M3B11FNUZ, F8E4M3FNUZ, F8E4M3IEEE, F8E5M2, F8E5M2FNUZ, F8E5M3FNU, F8E8M0, F16, NanPolicy,
    Options, Overflow,
};

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

/// Generates [`FORMATS`], [`PAIRS`] and the dispatch from pair index to types, from one list
/// of the narrow types.
macro_rules! pairs {
    ($($t:ident),* $(,)?) => {
        /// The narrow types, in the order of the crate's format registry.
        pub const FORMATS: [&str; 15] = [$(stringify!($t)),*];

        /// The 60 pairs, indexed by input byte 0: four per narrow type `T` of [`FORMATS`],
        /// in the order `f32 -> T`, `f64 -> T`, `T -> f32`, `T -> f64`.
        pub const PAIRS: [&str; 60] = [$(
            concat!("f32->", stringify!($t)),
            concat!("f64->", stringify!($t)),
            concat!(stringify!($t), "->f32"),
            concat!(stringify!($t), "->f64"),
        )*];

        fn dispatch(pair: usize, v: Visit) -> Result<(), String> {
            let mut t = 0;
            $(
                if pair / 4 == t {
                    return match pair % 4 {
                        0 => v.go::<f32, $t>(),
                        1 => v.go::<f64, $t>(),
                        2 => v.go::<$t, f32>(),
                        _ => v.go::<$t, f64>(),
                    };
                }
                t += 1;
            )*
            unreachable!("pair {pair} is not below 4 * {t}")
        }
    };
}

pairs!(
    F16,
    BF16,
    F8E4M3,
    F8E5M2,
    F8E4M3FNUZ,
    F8E5M2FNUZ,
    F6E2M3,
    F6E3M2,
    F4E2M1,
    F4E2M1x2,
    F8E8M0,
    F8E3M4,
    F8E4M3IEEE,
    F8E4M3B11FNUZ,
    F8E5M3FNU,
);

/// Guard bytes on each side of every destination.
pub const GUARD: usize = 128;

/// Header length of an input; the payload follows.
pub const HEADER: usize = 7;

/// Longest length an input can ask for.
pub const MAX_LEN: usize = 131 + 3969;

/// The NaN policies, indexed by `byte1 / 3 % 3`.
pub const NANS: [NanPolicy; 3] = [NanPolicy::Preserve, NanPolicy::Canonical, NanPolicy::ToMax];

/// The overflow mode of a call with options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// No overflow policy set: the destination format's default.
    Default,
    /// `Overflow::Saturate`.
    Saturate,
    /// `Overflow::NonSaturating`.
    NonSaturating,
}

impl Mode {
    /// The three modes, indexed by `byte1 % 3`.
    pub const ALL: [Mode; 3] = [Mode::Default, Mode::Saturate, Mode::NonSaturating];

    /// The options of a call with this mode and NaN policy.
    pub fn options(self, nan: NanPolicy) -> Options {
        let o = Options::new().nan(nan);
        match self {
            Mode::Default => o,
            Mode::Saturate => o.overflow(Overflow::Saturate),
            Mode::NonSaturating => o.overflow(Overflow::NonSaturating),
        }
    }

    /// The overflow policy this mode resolves to for a format whose default is `default`.
    fn resolve(self, default: Overflow) -> Overflow {
        match self {
            Mode::Default => default,
            Mode::Saturate => Overflow::Saturate,
            Mode::NonSaturating => Overflow::NonSaturating,
        }
    }

    fn index(self) -> u8 {
        Mode::ALL.iter().position(|&m| m == self).unwrap() as u8
    }
}

fn nan_index(nan: NanPolicy) -> u8 {
    NANS.iter().position(|&n| n == nan).unwrap() as u8
}

/// A parsed input.
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    /// Index into [`PAIRS`].
    pub pair: usize,
    /// Overflow mode of the calls that take options.
    pub mode: Mode,
    /// NaN policy of the calls that take options.
    pub nan: NanPolicy,
    /// Number of values: the length of the wide (`f32`/`f64`) side.
    pub len: usize,
    /// Source offset selector (byte 4).
    pub src_sel: u8,
    /// Destination offset selector (byte 5).
    pub dst_sel: u8,
    /// Variant bits (byte 6).
    pub variant: u8,
    /// Source elements.
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
            pair: usize::from(h(0)) % PAIRS.len(),
            mode: Mode::ALL[usize::from(h(1) % 3)],
            nan: NANS[usize::from(h(1) / 3 % 3)],
            len,
            src_sel: h(4),
            dst_sel: h(5),
            variant: h(6),
            payload: data.get(HEADER..).unwrap_or(&[]),
        }
    }

    /// Encodes the input; `Input::parse(&x.encode())` gives `x` back.
    pub fn encode(&self) -> Vec<u8> {
        assert!(self.pair < PAIRS.len() && self.len <= MAX_LEN);
        let (b2, b3) = if self.len <= 130 {
            (self.len as u8, 0)
        } else {
            let v = self.len - 131;
            ((240 + (v >> 8)) as u8, (v & 0xFF) as u8)
        };
        let mut out = vec![
            self.pair as u8,
            self.mode.index() + 3 * nan_index(self.nan),
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
    dispatch(input.pair % PAIRS.len(), visit)
}

// ---------------------------------------------------------------------------------------------
// Element types and the reference codec.

/// A slice element: `f32`, `f64` or a narrow type.
pub trait Val: Element {
    /// The value's stored bits (for fp6/fp4, the high bits too).
    fn bits(self) -> u64;
}

macro_rules! val {
    ($($t:ty),*) => {
        $(impl Val for $t {
            fn bits(self) -> u64 {
                u64::from(self.to_bits())
            }
        })*
    };
}
val!(
    f32,
    f64,
    F16,
    BF16,
    F8E4M3,
    F8E5M2,
    F8E4M3FNUZ,
    F8E5M2FNUZ,
    F6E2M3,
    F6E3M2,
    F4E2M1,
    F4E2M1x2,
    F8E8M0,
    F8E3M4,
    F8E4M3IEEE,
    F8E4M3B11FNUZ,
    F8E5M3FNU
);

/// A narrow type with one value per element, and its element functions (the specification).
pub trait Narrow: Val {
    /// The bits a code uses (from the format's definition: 6 for fp6, 4 for fp4); widening
    /// ignores the others, narrowing writes them as zero.
    const MASK: u64;
    /// The format's default overflow policy.
    const DEFAULT: Overflow;
    /// `T::from_bits`.
    fn from_raw(bits: u64) -> Self;
    /// `T::from_f32_opts`.
    fn f32_opts(x: f32, o: Options) -> Self;
    /// `T::from_f64_opts`.
    fn f64_opts(x: f64, o: Options) -> Self;
    /// `T::from_f32_with`.
    fn f32_with(x: f32, o: Overflow) -> Self;
    /// `T::from_f64_with`.
    fn f64_with(x: f64, o: Overflow) -> Self;
    /// `T::to_f32`.
    fn to32(self) -> f32;
    /// `T::to_f64`.
    fn to64(self) -> f64;
}

macro_rules! narrow {
    ($($t:ident($bits:ty, $mask:expr)),* $(,)?) => {
        $(impl Narrow for $t {
            const MASK: u64 = $mask;
            const DEFAULT: Overflow = $t::DEFAULT_OVERFLOW;
            fn from_raw(bits: u64) -> Self {
                $t::from_bits(bits as $bits)
            }
            fn f32_opts(x: f32, o: Options) -> Self {
                $t::from_f32_opts(x, o)
            }
            fn f64_opts(x: f64, o: Options) -> Self {
                $t::from_f64_opts(x, o)
            }
            fn f32_with(x: f32, o: Overflow) -> Self {
                $t::from_f32_with(x, o)
            }
            fn f64_with(x: f64, o: Overflow) -> Self {
                $t::from_f64_with(x, o)
            }
            fn to32(self) -> f32 {
                self.to_f32()
            }
            fn to64(self) -> f64 {
                self.to_f64()
            }
        })*
    };
}
narrow!(
    F16(u16, 0xFFFF),
    BF16(u16, 0xFFFF),
    F8E4M3(u8, 0xFF),
    F8E5M2(u8, 0xFF),
    F8E4M3FNUZ(u8, 0xFF),
    F8E5M2FNUZ(u8, 0xFF),
    F6E2M3(u8, 0x3F),
    F6E3M2(u8, 0x3F),
    F4E2M1(u8, 0x0F),
    F8E8M0(u8, 0xFF),
    F8E3M4(u8, 0xFF),
    F8E4M3IEEE(u8, 0xFF),
    F8E4M3B11FNUZ(u8, 0xFF),
    F8E5M3FNU(u8, 0xFF),
);

/// `f32` or `f64`: the wide side of every pair.
pub trait Wide: Val {
    /// Decodes one value from its little-endian bytes.
    fn from_le(b: &[u8]) -> Self;
    /// `N::from_f32_opts` or `N::from_f64_opts`.
    fn narrow<N: Narrow>(self, o: Options) -> N;
    /// `N::from_f32_with` or `N::from_f64_with`.
    fn narrow_with<N: Narrow>(self, o: Overflow) -> N;
    /// `N::to_f32` or `N::to_f64`.
    fn widen<N: Narrow>(x: N) -> Self;
}

impl Wide for f32 {
    fn from_le(b: &[u8]) -> f32 {
        f32::from_le_bytes(b.try_into().unwrap())
    }
    fn narrow<N: Narrow>(self, o: Options) -> N {
        N::f32_opts(self, o)
    }
    fn narrow_with<N: Narrow>(self, o: Overflow) -> N {
        N::f32_with(self, o)
    }
    fn widen<N: Narrow>(x: N) -> f32 {
        x.to32()
    }
}

impl Wide for f64 {
    fn from_le(b: &[u8]) -> f64 {
        f64::from_le_bytes(b.try_into().unwrap())
    }
    fn narrow<N: Narrow>(self, o: Options) -> N {
        N::f64_opts(self, o)
    }
    fn narrow_with<N: Narrow>(self, o: Overflow) -> N {
        N::f64_with(self, o)
    }
    fn widen<N: Narrow>(x: N) -> f64 {
        x.to64()
    }
}

/// Which side of a pair is packed FP4 ([`F4E2M1x2`]), if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Packed {
    /// Neither: one value per element on both sides.
    No,
    /// The destination (narrowing into packed bytes).
    Dst,
    /// The source (widening packed bytes).
    Src,
}

impl Packed {
    /// Source and destination element counts of a conversion of `n` values.
    pub fn elems(self, n: usize) -> (usize, usize) {
        match self {
            Packed::No => (n, n),
            Packed::Dst => (n, n.div_ceil(2)),
            Packed::Src => (n.div_ceil(2), n),
        }
    }

    /// The crate's length rule, written from its documentation: the number of values a
    /// conversion between `src` and `dst` elements converts, or the error it must return.
    pub fn rule(self, src: usize, dst: usize) -> Result<usize, Error> {
        match self {
            Packed::No if src == dst => Ok(src),
            Packed::No => Err(Error::LengthMismatch { src, dst }),
            Packed::Dst if dst == src.div_ceil(2) => Ok(src),
            Packed::Dst => Err(Error::PackedLength {
                values: src,
                packed: dst,
            }),
            Packed::Src if src == dst.div_ceil(2) => Ok(dst),
            Packed::Src => Err(Error::PackedLength {
                values: dst,
                packed: src,
            }),
        }
    }
}

/// The element-wise reference of the pair `Self -> D`: the crate's element functions, which
/// do not go through any slice kernel.
pub trait Refer<D: Val>: Val + ConvertTo<D> {
    /// Which side is packed.
    const PACKED: Packed;
    /// The little-endian destination bytes of `values` values converted from `src`, the
    /// little-endian source elements that hold them, with options `o`.
    fn refer(src: &[u8], values: usize, o: Options) -> Vec<u8>;
    /// Checks the element functions against each other on the source values (narrowing
    /// only); returns what disagrees.
    fn check(_src: &[u8], _values: usize, _mode: Mode, _nan: NanPolicy) -> Result<(), String> {
        Ok(())
    }
}

/// The bits of a little-endian element of 1, 2, 4 or 8 bytes.
fn le_bits(b: &[u8]) -> u64 {
    let mut v = [0u8; 8];
    v[..b.len()].copy_from_slice(b);
    u64::from_le_bytes(v)
}

/// Narrowing `W -> N`, element by element.
fn narrow_ref<W: Wide, N: Narrow>(src: &[u8], values: usize, o: Options) -> Vec<u8> {
    let ns = size_of::<N>();
    let mut out = Vec::with_capacity(values * ns);
    for c in src.chunks_exact(size_of::<W>()).take(values) {
        let code = W::from_le(c).narrow::<N>(o).bits();
        out.extend_from_slice(&code.to_le_bytes()[..ns]);
    }
    out
}

/// Widening `N -> W`, element by element: `to_f32`/`to_f64` of `from_bits(raw & MASK)`.
fn widen_ref<N: Narrow, W: Wide>(src: &[u8], values: usize) -> Vec<u8> {
    let ws = size_of::<W>();
    let mut out = Vec::with_capacity(values * ws);
    for c in src.chunks_exact(size_of::<N>()).take(values) {
        let x = N::from_raw(le_bits(c) & N::MASK);
        out.extend_from_slice(&W::widen(x).bits().to_le_bytes()[..ws]);
    }
    out
}

/// Narrowing `W -> F4E2M1x2`: the `F4E2M1` codes, value `2j` in the low nibble of byte `j`,
/// value `2j + 1` in its high nibble, `+0` in the last high nibble of an odd count.
fn pack_ref<W: Wide>(src: &[u8], values: usize, o: Options) -> Vec<u8> {
    let codes: Vec<u8> = src
        .chunks_exact(size_of::<W>())
        .take(values)
        .map(|c| W::from_le(c).narrow::<F4E2M1>(o).to_bits())
        .collect();
    codes
        .chunks(2)
        .map(|p| p[0] | p.get(1).map_or(0, |hi| hi << 4))
        .collect()
}

/// Widening `F4E2M1x2 -> W`: value `i` is nibble `i % 2` of byte `i / 2`, as an `F4E2M1`.
fn unpack_ref<W: Wide>(src: &[u8], values: usize) -> Vec<u8> {
    let ws = size_of::<W>();
    let mut out = Vec::with_capacity(values * ws);
    for i in 0..values {
        let nibble = (src[i / 2] >> (4 * (i % 2))) & 0xF;
        let x = F4E2M1::from_raw(u64::from(nibble));
        out.extend_from_slice(&W::widen(x).bits().to_le_bytes()[..ws]);
    }
    out
}

/// The element functions of `W -> N` agree with each other on every source value: no code
/// sets bits above the format's width, and under `NanPolicy::Preserve`, `from_f32_opts`
/// with the resolved overflow policy equals `from_f32_with` (likewise for f64).
fn narrow_check<W: Wide, N: Narrow>(
    src: &[u8],
    values: usize,
    mode: Mode,
    nan: NanPolicy,
) -> Result<(), String> {
    let ws = size_of::<W>();
    let (o, default) = (mode.options(nan), Options::new());
    let overflow = mode.resolve(N::DEFAULT);
    let name = std::any::type_name::<N>().rsplit("::").next().unwrap();
    let wide = std::any::type_name::<W>();
    for (i, c) in src.chunks_exact(ws).take(values).enumerate() {
        let x = W::from_le(c);
        let bits = || hex(c);
        for (what, opts) in [("options", o), ("Options::new()", default)] {
            let code = x.narrow::<N>(opts).bits();
            if code & !N::MASK != 0 {
                return Err(format!(
                    "element functions: {name}::from_{wide}_opts(source element {i}, bits {}, {what}) = {code:#x} sets bits above the format's width (mask {:#x})",
                    bits(),
                    N::MASK
                ));
            }
        }
        if nan == NanPolicy::Preserve {
            let (a, b) = (x.narrow::<N>(o).bits(), x.narrow_with::<N>(overflow).bits());
            if a != b {
                return Err(format!(
                    "element functions: for source element {i} (bits {}), {name}::from_{wide}_opts gives {a:#x} but {name}::from_{wide}_with({overflow:?}) gives {b:#x}",
                    bits()
                ));
            }
        }
    }
    Ok(())
}

/// The four pairs of each narrow type with one value per element.
macro_rules! refer_plain {
    ($($n:ident),* $(,)?) => {$(
        refer_plain!(@wide $n, f32);
        refer_plain!(@wide $n, f64);
    )*};
    (@wide $n:ident, $w:ty) => {
        impl Refer<$n> for $w {
            const PACKED: Packed = Packed::No;
            fn refer(src: &[u8], values: usize, o: Options) -> Vec<u8> {
                narrow_ref::<$w, $n>(src, values, o)
            }
            fn check(src: &[u8], values: usize, mode: Mode, nan: NanPolicy) -> Result<(), String> {
                narrow_check::<$w, $n>(src, values, mode, nan)
            }
        }
        impl Refer<$w> for $n {
            const PACKED: Packed = Packed::No;
            fn refer(src: &[u8], values: usize, _: Options) -> Vec<u8> {
                widen_ref::<$n, $w>(src, values)
            }
        }
    };
}
refer_plain!(
    F16,
    BF16,
    F8E4M3,
    F8E5M2,
    F8E4M3FNUZ,
    F8E5M2FNUZ,
    F6E2M3,
    F6E3M2,
    F4E2M1,
    F8E8M0,
    F8E3M4,
    F8E4M3IEEE,
    F8E4M3B11FNUZ,
    F8E5M3FNU
);

/// The four pairs of the packed type.
macro_rules! refer_packed {
    ($($w:ty),*) => {$(
        impl Refer<F4E2M1x2> for $w {
            const PACKED: Packed = Packed::Dst;
            fn refer(src: &[u8], values: usize, o: Options) -> Vec<u8> {
                pack_ref::<$w>(src, values, o)
            }
            fn check(src: &[u8], values: usize, mode: Mode, nan: NanPolicy) -> Result<(), String> {
                narrow_check::<$w, F4E2M1>(src, values, mode, nan)
            }
        }
        impl Refer<$w> for F4E2M1x2 {
            const PACKED: Packed = Packed::Src;
            fn refer(src: &[u8], values: usize, _: Options) -> Vec<u8> {
                unpack_ref::<$w>(src, values)
            }
        }
    )*};
}
refer_packed!(f32, f64);

/// `n` source elements of `size` bytes: the payload's whole elements repeated, or a fixed
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

// ---------------------------------------------------------------------------------------------
// Buffers.

/// Alignment of every buffer's base, so that offsets select the alignment modulo 64 exactly.
pub(crate) const BASE_ALIGN: usize = 64;

#[repr(align(64))]
struct Align64;

/// A source in its own allocation of exactly `off + data.len()` bytes (64-aligned), the data at
/// its end: a read past the data leaves the allocation, and the `off` bytes in front of it are
/// poisoned while the buffer lives.
pub(crate) struct SrcBuf {
    base: NonNull<u8>,
    layout: Option<Layout>,
    off: usize,
    len: usize,
    hooks: Hooks,
}

impl SrcBuf {
    pub(crate) fn new(data: &[u8], off: usize, hooks: Hooks) -> SrcBuf {
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

    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY: `len` initialized bytes at `ptr()` (or zero bytes at a non-null pointer),
        // not mutated while `self` is borrowed.
        unsafe { std::slice::from_raw_parts(self.ptr(), self.len) }
    }

    pub(crate) fn typed<T: Val>(&self) -> &[T] {
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
pub(crate) struct DstBuf {
    base: NonNull<u8>,
    layout: Layout,
    pub(crate) start: usize,
    pub(crate) len: usize,
    hooks: Hooks,
}

/// Canary byte `i` of fill `run` (0 or 1): the two fills differ in every byte, and repeat every
/// 256 bytes.
pub(crate) fn canary(i: usize, run: usize) -> u8 {
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
pub(crate) fn first_changed(
    all: &[u8],
    range: std::ops::Range<usize>,
    run: usize,
) -> Option<usize> {
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
    pub(crate) fn new(off: usize, len: usize, hooks: Hooks) -> DstBuf {
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

    pub(crate) fn fill(&mut self, run: usize) {
        for chunk in self.all_mut().chunks_mut(256) {
            chunk.copy_from_slice(&CANARY[run][..chunk.len()]);
        }
    }

    pub(crate) fn region(&self) -> *mut u8 {
        // SAFETY: `start + len <= size`.
        unsafe { self.base.as_ptr().add(self.start) }
    }

    /// Poisons the guards (the destination stays writable).
    pub(crate) fn arm(&self) {
        let end = self.start + self.len;
        (self.hooks.poison)(self.base.as_ptr(), self.start);
        // SAFETY: `end <= size`.
        (self.hooks.poison)(
            unsafe { self.base.as_ptr().add(end) },
            self.layout.size() - end,
        );
    }

    pub(crate) fn disarm(&self) {
        (self.hooks.unpoison)(self.base.as_ptr(), self.layout.size());
    }

    pub(crate) fn all(&self) -> &[u8] {
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
    nan: NanPolicy,
    /// Number of values.
    len: usize,
    src_off: usize,
    /// The source elements, little-endian, as the kernels see them.
    src: &'a [u8],
    src_size: usize,
    packed: Packed,
    hooks: Hooks,
}

impl Ctx<'_> {
    fn fail(&self, api: &str, dst_off: usize, msg: String) -> String {
        let (ns, nd) = self.packed.elems(self.len);
        let elems = if self.packed == Packed::No {
            String::new()
        } else {
            format!(" ({ns} source and {nd} destination elements)")
        };
        format!(
            "vcvt fuzz failure in `{api}`\n  target {}, pair {}, mode {:?}, NaN policy {:?}, len {}{elems}, source offset {} B, destination offset {} B\n  {msg}\n  (save the input under fuzz/regressions/{}/ and run `cargo test --test fuzz_replay` to replay it)",
            self.target.name(),
            PAIRS[self.pair],
            self.mode,
            self.nan,
            self.len,
            self.src_off,
            dst_off,
            self.target.name(),
        )
    }

    /// Source element `i`'s bits.
    fn src_hex(&self, i: usize) -> String {
        let s = self.src_size;
        match self.src.get(i * s..(i + 1) * s) {
            Some(b) => hex(b),
            None => "-".into(),
        }
    }

    /// What destination element `e` is made from.
    fn src_of(&self, e: usize) -> String {
        match self.packed {
            Packed::No => format!("source bits {}", self.src_hex(e)),
            Packed::Dst => format!(
                "values {} and {}, source bits {} and {}",
                2 * e,
                2 * e + 1,
                self.src_hex(2 * e),
                self.src_hex(2 * e + 1)
            ),
            Packed::Src => format!(
                "the {} nibble of source byte {} = {}",
                ["low", "high"][e % 2],
                e / 2,
                self.src_hex(e / 2)
            ),
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

pub(crate) fn hex(bytes: &[u8]) -> String {
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
            "element {e} ({}): got {}, the element-wise codec gives {} ({} of {} elements differ)",
            ctx.src_of(e),
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
    call: &mut dyn FnMut(&mut [D]) -> Result<(), Error>,
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
// The targets.

struct Visit<'a, 'b> {
    target: Target,
    input: &'a Input<'b>,
    hooks: Hooks,
}

impl Visit<'_, '_> {
    fn go<S: Refer<D>, D: Val>(self) -> Result<(), String> {
        match self.target {
            Target::Slices => slices::<S, D>(self.input, self.hooks),
            Target::Bytes => bytes::<S, D>(self.input, self.hooks),
        }
    }
}

/// Typed offset: `sel % (64 / size)` elements, in bytes.
pub(crate) fn typed_off(sel: u8, size: usize) -> usize {
    usize::from(sel) % (BASE_ALIGN / size) * size
}

/// The `slices` target for one pair.
fn slices<S: Refer<D>, D: Val>(inp: &Input, hooks: Hooks) -> Result<(), String> {
    let (ss, ds) = (size_of::<S>(), size_of::<D>());
    let n = inp.len;
    let (ns, nd) = S::PACKED.elems(n);
    let src_off = typed_off(inp.src_sel, ss);
    let dst_off = typed_off(inp.dst_sel, ds);
    let raw = source_bytes(inp.payload, ss, ns);
    let src_buf = SrcBuf::new(&raw, src_off, hooks);
    let src: &[S] = src_buf.typed();
    let ctx = Ctx {
        target: Target::Slices,
        pair: inp.pair,
        mode: inp.mode,
        nan: inp.nan,
        len: n,
        src_off,
        src: &raw,
        src_size: ss,
        packed: S::PACKED,
        hooks,
    };
    S::check(&raw, n, inp.mode, inp.nan).map_err(|m| ctx.fail("element functions", 0, m))?;
    let opts = inp.mode.options(inp.nan);
    let want_opts = S::refer(&raw, n, opts);
    let want_default = S::refer(&raw, n, Options::new());
    let (wo, wd) = (Expect::Write(&want_opts), Expect::Write(&want_default));

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
        typed::<D>(&ctx, &api, dst_off, nd, wo, &mut |d| {
            vcvt::convert_slice_on(b, src, d, opts)
        })?;
    }
    for &b in Backend::ALL.iter().filter(|b| !b.is_available()) {
        let api = format!("convert_slice_on(Backend::{b:?}) (unavailable)");
        let e = Expect::Fail(Error::BackendUnavailable { backend: b });
        typed::<D>(&ctx, &api, dst_off, nd, e, &mut |d| {
            vcvt::convert_slice_on(b, src, d, opts)
        })?;
    }

    // The entry points that use the active backend: one group per input (variant bits 0-1);
    // they are thin wrappers around the same kernels, so spreading them over inputs keeps the
    // rate of executions up.
    match inp.variant % 4 {
        0 => {
            typed::<D>(&ctx, "convert_slice", dst_off, nd, wd, &mut |d| {
                vcvt::convert_slice(src, d);
                Ok(())
            })?;
            typed::<D>(&ctx, "convert_slice_with", dst_off, nd, wo, &mut |d| {
                vcvt::convert_slice_with(src, d, opts);
                Ok(())
            })?;
        }
        1 => {
            typed::<D>(&ctx, "try_convert_slice", dst_off, nd, wd, &mut |d| {
                vcvt::try_convert_slice(src, d)
            })?;
            typed::<D>(&ctx, "try_convert_slice_with", dst_off, nd, wo, &mut |d| {
                vcvt::try_convert_slice_with(src, d, opts)
            })?;
        }
        2 => {
            for (api, with) in [
                ("convert_slice_uninit", false),
                ("convert_slice_uninit_with", true),
            ] {
                let want = if with { wo } else { wd };
                check_call(&ctx, api, dst_off, nd * ds, ds, want, &mut |p| {
                    // SAFETY: as in `typed`; `MaybeUninit<D>` has `D`'s layout.
                    let u =
                        unsafe { std::slice::from_raw_parts_mut(p.cast::<MaybeUninit<D>>(), nd) };
                    let out = if with {
                        vcvt::convert_slice_uninit_with(src, u, opts)
                    } else {
                        vcvt::convert_slice_uninit(src, u)
                    };
                    assert!(
                        out.as_ptr().cast::<u8>() == p.cast_const() && out.len() == nd,
                        "{api} returned a slice that is not its destination"
                    );
                    Ok(())
                })?;
            }
        }
        _ => {
            // A `Vec` holds one element per source value; from packed bytes that is every
            // nibble, the spare last one of an odd count included: `2 * ns` values.
            let every_nibble = |o| S::refer(&raw, 2 * ns, o);
            let (vec_opts, vec_default) = match S::PACKED {
                Packed::Src => (every_nibble(opts), every_nibble(Options::new())),
                _ => (want_opts.clone(), want_default.clone()),
            };
            for (api, with) in [("convert_to_vec", false), ("convert_to_vec_with", true)] {
                let (v, want): (Vec<D>, &[u8]) = if with {
                    (vcvt::convert_to_vec_with(src, opts), &vec_opts)
                } else {
                    (vcvt::convert_to_vec(src), &vec_default)
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

    // Other destination lengths (variant bit 2): one element more and less, and for a packed
    // pair the value count where the byte count belongs or the other way round. Most fail
    // and touch nothing; a packed widening destination one value longer or shorter that needs
    // the same bytes converts that many values.
    let mut others = vec![nd + 1, nd.saturating_sub(1)];
    match S::PACKED {
        Packed::No => {}
        Packed::Dst => others.push(n),
        Packed::Src => others.push(ns),
    }
    others.sort_unstable();
    others.dedup();
    others.retain(|&m| m != nd);
    for m in others {
        let wants = match S::PACKED.rule(ns, m) {
            Ok(values) => Ok((
                S::refer(&raw, values, opts),
                S::refer(&raw, values, Options::new()),
            )),
            Err(e) => Err(e),
        };
        let (what, eo, ed) = match &wants {
            Ok((o, d)) => ("other length", Expect::Write(o), Expect::Write(d)),
            Err(e) => ("length mismatch", Expect::Fail(*e), Expect::Fail(*e)),
        };
        let api = format!("try_convert_slice ({what}: {m} destination elements)");
        typed::<D>(&ctx, &api, dst_off, m, ed, &mut |d| {
            vcvt::try_convert_slice(src, d)
        })?;
        let api = format!("try_convert_slice_with ({what}: {m} destination elements)");
        typed::<D>(&ctx, &api, dst_off, m, eo, &mut |d| {
            vcvt::try_convert_slice_with(src, d, opts)
        })?;
        for b in Backend::available() {
            let api =
                format!("convert_slice_on(Backend::{b:?}) ({what}: {m} destination elements)");
            typed::<D>(&ctx, &api, dst_off, m, eo, &mut |d| {
                vcvt::convert_slice_on(b, src, d, opts)
            })?;
        }
    }
    Ok(())
}

/// The `bytes` target for one pair.
fn bytes<S: Refer<D>, D: Val>(inp: &Input, hooks: Hooks) -> Result<(), String> {
    let (ss, ds) = (size_of::<S>(), size_of::<D>());
    let n = inp.len;
    let (ns, nd) = S::PACKED.elems(n);
    let v = inp.variant;
    let extra_src = usize::from(v & 7) % ss;
    let m = match (v >> 3) & 3 {
        1 => nd + 1,
        2 if nd > 0 => nd - 1,
        _ => nd,
    };
    let extra_dst = usize::from(v >> 5) % ds;
    let opts = inp.mode.options(inp.nan);
    let values = source_bytes(inp.payload, ss, ns);
    // What a call between the `ns` source and `m` destination elements must do: convert
    // this many values (for a packed widening, `m` may differ from `n` and still fit), or
    // fail with this error.
    let counted = S::PACKED.rule(ns, m);
    let (want_opts, want_default) = match counted {
        Ok(k) => (
            S::refer(&values, k, opts),
            S::refer(&values, k, Options::new()),
        ),
        Err(_) => (Vec::new(), Vec::new()),
    };

    // Bytes -> typed: the source at any byte offset, possibly with a partial element at the
    // end.
    let src_off = usize::from(inp.src_sel) % BASE_ALIGN;
    let mut raw = values.clone();
    raw.resize(values.len() + extra_src, 0x5A);
    let src_buf = SrcBuf::new(&raw, src_off, hooks);
    let src_bytes = src_buf.bytes();
    let mut ctx = Ctx {
        target: Target::Bytes,
        pair: inp.pair,
        mode: inp.mode,
        nan: inp.nan,
        len: n,
        src_off,
        src: &values,
        src_size: ss,
        packed: S::PACKED,
        hooks,
    };
    S::check(&values, n, inp.mode, inp.nan).map_err(|e| ctx.fail("element functions", 0, e))?;
    let dst_off = typed_off(inp.dst_sel, ds);
    // A partial element is reported before the element count is compared.
    let from_err = if extra_src != 0 {
        Some(Error::ByteLength {
            bytes: raw.len(),
            element_size: ss,
        })
    } else {
        counted.err()
    };
    let want = expect(from_err, &want_default);
    typed::<D>(&ctx, "convert_from_bytes", dst_off, m, want, &mut |d| {
        vcvt::convert_from_bytes::<S, D>(src_bytes, d)
    })?;
    let want = expect(from_err, &want_opts);
    typed::<D>(
        &ctx,
        "convert_from_bytes_with",
        dst_off,
        m,
        want,
        &mut |d| vcvt::convert_from_bytes_with::<S, D>(src_bytes, d, opts),
    )?;
    drop(src_buf);

    // Typed -> bytes: the destination at any byte offset, possibly not a whole number of
    // elements.
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
    } else {
        counted.err()
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
    to_bytes("convert_to_bytes_with", &want_opts, true)?;
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
        nan: NanPolicy::Preserve,
        len: 4,
        src_off: 0,
        src: &[1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0],
        src_size: 4,
        packed: Packed::No,
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
            "spare high nibble of the last byte kept (packed read-modify-write)",
            Expect::Write(&want),
            Box::new(|p| {
                // SAFETY: byte 7 of the destination, read before and written after `good`.
                let old = unsafe { p.add(7).read() };
                good(p)?;
                // SAFETY: as above.
                unsafe { p.add(7).write((old & 0xF0) | (want[7] & 0x0F)) };
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
            "wrong packed length error",
            Expect::Fail(Error::PackedLength {
                values: 5,
                packed: 2,
            }),
            Box::new(|_| Err(Error::LengthMismatch { src: 5, dst: 2 })),
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
    let mut missed = reference_self_test();
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

/// Known answers of the reference side (the packing, the masks, the length rule, the options
/// byte): a reference that ignored the NaN policy or the high bits would agree with faulty
/// kernels. Returns the checks that failed.
fn reference_self_test() -> Vec<&'static str> {
    let f32s = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let nan = f32s(&[f32::from_bits(0xFFC0_1234)]);
    let canonical = Options::new().nan(NanPolicy::Canonical);
    let to_max = Options::new().nan(NanPolicy::ToMax);
    let packed = Packed::Dst.rule(3, 3);
    let checks: [(&'static str, bool); 14] = [
        (
            "packing: [0.5, -6, 2.9] packs to [0xF1, 0x05]",
            pack_ref::<f32>(&f32s(&[0.5, -6.0, 2.9]), 3, Options::new()) == [0xF1, 0x05],
        ),
        (
            "unpacking: the spare high nibble of an odd count is ignored",
            unpack_ref::<f32>(&[0xF1, 0x75], 3) == f32s(&[0.5, -6.0, 3.0]),
        ),
        (
            "unpacking: an even count reads the high nibble",
            unpack_ref::<f64>(&[0x75], 2)
                == [3.0f64, 6.0]
                    .iter()
                    .flat_map(|x| x.to_le_bytes())
                    .collect::<Vec<u8>>(),
        ),
        (
            "widening fp6: the high bits of a source byte are ignored",
            widen_ref::<F6E2M3, f32>(&[0xC8], 1) == f32s(&[1.0]),
        ),
        (
            "widening fp4: the high bits of a source byte are ignored",
            widen_ref::<F4E2M1, f64>(&[0xF2], 1) == 1.0f64.to_le_bytes(),
        ),
        (
            "NaN policy Canonical reaches the reference",
            narrow_ref::<f32, F16>(&nan, 1, canonical) == [0x00, 0xFE],
        ),
        (
            "NaN policy ToMax reaches the reference",
            narrow_ref::<f32, F16>(&nan, 1, to_max) == [0xFF, 0xFB]
                && narrow_ref::<f32, F8E4M3>(&f32s(&[f32::NAN]), 1, to_max) == [0x7E],
        ),
        (
            "length rule: 3 values into 2 packed bytes",
            Packed::Dst.rule(3, 2) == Ok(3),
        ),
        (
            "length rule: 3 values into 3 packed bytes is an error",
            packed
                == Err(Error::PackedLength {
                    values: 3,
                    packed: 3,
                }),
        ),
        (
            "length rule: 2 packed bytes into 3 or 4 values",
            Packed::Src.rule(2, 3) == Ok(3) && Packed::Src.rule(2, 4) == Ok(4),
        ),
        (
            "length rule: 2 packed bytes into 5 values is an error",
            Packed::Src.rule(2, 5)
                == Err(Error::PackedLength {
                    values: 5,
                    packed: 2,
                }),
        ),
        (
            "length rule: unpacked lengths must be equal",
            Packed::No.rule(3, 4) == Err(Error::LengthMismatch { src: 3, dst: 4 }),
        ),
        ("options byte: 5 is NonSaturating with Canonical", {
            let i = Input::parse(&[0, 5]);
            (i.mode, i.nan) == (Mode::NonSaturating, NanPolicy::Canonical)
        }),
        ("options byte: 6 is the default mode with ToMax", {
            let i = Input::parse(&[0, 6]);
            (i.mode, i.nan) == (Mode::Default, NanPolicy::ToMax)
        }),
    ];
    checks
        .into_iter()
        .filter(|&(_, ok)| !ok)
        .map(|(name, _)| name)
        .collect()
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

/// Field widths, bias and largest finite code of a signed narrow format, for the threshold
/// values.
struct Fmt {
    exp_bits: i32,
    man_bits: i32,
    bias: i32,
    max: u32,
}

/// Every signed format (E8M0, unsigned and powers of two only, has its own thresholds; the
/// unsigned F8E5M3FNU has none here).
const FMTS: [Fmt; 12] = [
    Fmt {
        exp_bits: 5,
        man_bits: 10,
        bias: 15,
        max: 0x7BFF,
    }, // F16: 65504
    Fmt {
        exp_bits: 8,
        man_bits: 7,
        bias: 127,
        max: 0x7F7F,
    }, // BF16
    Fmt {
        exp_bits: 4,
        man_bits: 3,
        bias: 7,
        max: 0x7E,
    }, // F8E4M3: 448
    Fmt {
        exp_bits: 5,
        man_bits: 2,
        bias: 15,
        max: 0x7B,
    }, // F8E5M2: 57344
    Fmt {
        exp_bits: 4,
        man_bits: 3,
        bias: 8,
        max: 0x7F,
    }, // F8E4M3FNUZ: 240
    Fmt {
        exp_bits: 5,
        man_bits: 2,
        bias: 16,
        max: 0x7F,
    }, // F8E5M2FNUZ: 57344
    Fmt {
        exp_bits: 2,
        man_bits: 3,
        bias: 1,
        max: 0x1F,
    }, // F6E2M3: 7.5
    Fmt {
        exp_bits: 3,
        man_bits: 2,
        bias: 3,
        max: 0x1F,
    }, // F6E3M2: 28
    Fmt {
        exp_bits: 2,
        man_bits: 1,
        bias: 1,
        max: 0x7,
    }, // F4E2M1 (and F4E2M1x2): 6
    Fmt {
        exp_bits: 3,
        man_bits: 4,
        bias: 3,
        max: 0x6F,
    }, // F8E3M4: 15.5
    Fmt {
        exp_bits: 4,
        man_bits: 3,
        bias: 7,
        max: 0x77,
    }, // F8E4M3IEEE: 240
    Fmt {
        exp_bits: 4,
        man_bits: 3,
        bias: 11,
        max: 0x7F,
    }, // F8E4M3B11FNUZ: 30
];

impl Fmt {
    /// The value of a positive finite code (exact in f64).
    fn value(&self, code: u32) -> f64 {
        let e = (code >> self.man_bits) as i32;
        let m = f64::from(code & ((1 << self.man_bits) - 1));
        debug_assert!(e < 1 << self.exp_bits);
        if e == 0 {
            m * pow2(1 - self.bias - self.man_bits)
        } else {
            (1.0 + m * pow2(-self.man_bits)) * pow2(e - self.bias)
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

/// E8M0's thresholds: its smallest and largest powers of two and the ties (`1.5 * 2^k`, which
/// round up) around them and at 1.
fn e8m0_thresholds() -> Vec<f64> {
    vec![
        pow2(-127),       // smallest code, an f32 subnormal
        1.5 * pow2(-127), // tie: up to 2^-126
        pow2(-128),       // below the smallest code: still 0x00
        pow2(-126),
        1.5, // tie: up to 2
        3.0, // tie: up to 4
        pow2(127),
        1.5 * pow2(127), // tie above the largest code: overflow
    ]
}

/// Every format's thresholds.
fn thresholds() -> Vec<f64> {
    let mut t: Vec<f64> = FMTS.iter().flat_map(Fmt::thresholds).collect();
    t.extend(e8m0_thresholds());
    t
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
        0xFFC0_1234, // -quiet NaN with a payload (Canonical drops it, ToMax gives -MAX)
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
    for t in thresholds() {
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
        0xFFF8_0246_8000_0000, // -quiet NaN with a payload
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
        (248.0 - pow2(-30)).to_bits(), // E4M3FNUZ: just below the tie above 240
        (1.0 + pow2(-11) + pow2(-40)).to_bits(), // F16: above a tie, rounds up
        (1.5 - pow2(-40)).to_bits(),   // E8M0: below the tie, rounds to 1 (f32 would give 2)
        ((1.5 - pow2(-40)) * pow2(-127)).to_bits(), // E8M0: rounds to 2^-127
        pow2(-200).to_bits(),          // E8M0: far below 2^-127, gives 0x00
        f64::from(f32::MAX).to_bits() + 1,
    ];
    for t in thresholds() {
        let b = t.to_bits();
        // Double-rounding traps: 1 and 2^20 f64 ulps from the threshold, all of which an
        // intermediate f32 rounding would merge into the threshold itself.
        for x in [b - (1 << 20), b - 1, b, b + 1, b + (1 << 20)] {
            v.push(x);
            v.push(x | (1 << 63));
        }
    }
    v
}

/// Codes of a narrow type worth widening: all 256 bytes for the 1-byte types (for fp6 and
/// fp4 these include every pattern of the high bits, which widening must ignore; for the
/// packed type every pair of nibbles), specials plus a stride through the rest for the
/// 16-bit ones. Little-endian bytes.
fn narrow_codes(fmt: usize) -> Vec<u8> {
    let codes: Vec<u16> = match fmt {
        0 => vec![
            0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7C01,
            0x7D00, 0x7DFF, 0x7E00, 0x7E01, 0x7FFF, 0xFC01, 0xFE00, 0xFFFF, 0x3C00, 0x3C01,
        ],
        1 => vec![
            0x0000, 0x8000, 0x0001, 0x8001, 0x007F, 0x0080, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x7F81,
            0x7FA0, 0x7FBF, 0x7FC0, 0x7FC1, 0x7FFF, 0xFF81, 0xFFC0, 0x3F80, 0x3F81,
        ],
        _ => return (0..=255).collect(),
    };
    codes
        .into_iter()
        .chain((0..=255u16).map(|k| k * 257))
        .flat_map(u16::to_le_bytes)
        .collect()
}

/// Index of the narrow type `name` in [`FORMATS`].
fn format_index(name: &str) -> usize {
    FORMATS.iter().position(|&f| f == name).unwrap()
}

/// Index of the pair `name` (as in [`PAIRS`]).
fn pair_index(name: &str) -> usize {
    PAIRS.iter().position(|&p| p == name).unwrap()
}

/// Element size of the narrow type number `fmt`.
fn narrow_size(fmt: usize) -> usize {
    if fmt < 2 { 2 } else { 1 }
}

/// The committed seed corpus (`fuzz/corpus/<target>/<name>`), written by
/// `cargo run --manifest-path fuzz/Cargo.toml --example gen_corpus` and compared with the
/// files on disk by `tests/fuzz_replay.rs`.
pub fn seeds() -> Vec<Seed> {
    let packed_fmt = format_index("F4E2M1x2");
    // Each payload once (under Miri, building them byte by byte for every seed is slow).
    let wide32: Vec<u8> = f32_specials()
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let wide64: Vec<u8> = f64_specials()
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let codes: Vec<Vec<u8>> = (0..FORMATS.len()).map(narrow_codes).collect();
    let payload_for = |pair: usize| -> &[u8] {
        match pair % 4 {
            0 => &wide32,
            1 => &wide64,
            _ => &codes[pair / 4],
        }
    };
    // The number of values the payload holds.
    let values_in = |pair: usize, payload: &[u8]| -> usize {
        match pair % 4 {
            0 => payload.len() / 4,
            1 => payload.len() / 8,
            // Every nibble of the packed bytes but the last high one, which an odd count
            // ignores.
            _ if pair / 4 == packed_fmt => 2 * payload.len() - 1,
            _ => payload.len() / narrow_size(pair / 4),
        }
    };
    let name = |pair: usize| PAIRS[pair].to_lowercase().replace("->", "-to-");
    let tag = |mode: Mode, nan: NanPolicy| {
        let m = match mode {
            Mode::Default => "default",
            Mode::Saturate => "sat",
            Mode::NonSaturating => "nonsat",
        };
        format!("{m}-{}", format!("{nan:?}").to_lowercase())
    };
    let mut out = Vec::new();
    let mut push = |target: Target, name: String, input: Input| {
        out.push(Seed {
            target,
            name,
            data: input.encode(),
        })
    };
    for pair in 0..PAIRS.len() {
        let (fmt, narrowing) = (pair / 4, pair % 4 < 2);
        let payload = payload_for(pair);
        let mut count = values_in(pair, payload).min(MAX_LEN);
        if fmt == packed_fmt && narrowing {
            count |= 1; // an odd count: the last high nibble is written as +0
        }
        let base = Input {
            pair,
            mode: Mode::Default,
            nan: NanPolicy::Preserve,
            len: count,
            src_sel: pair as u8,
            dst_sel: 3 * pair as u8 + 1,
            variant: 0,
            payload,
        };
        // slices: each special value once; narrowing under both explicit overflow modes and
        // every NaN policy (the entry points without options run `Options::new()` on every
        // input anyway); the entry-point groups in turn, with the other lengths. Widening
        // ignores the options: its seeds set them anyway, so that a kernel that applied them
        // would be caught.
        if narrowing {
            for (k, (mode, nan)) in [
                (Mode::Saturate, NanPolicy::Preserve),
                (Mode::NonSaturating, NanPolicy::Canonical),
                (Mode::Default, NanPolicy::ToMax),
            ]
            .into_iter()
            .enumerate()
            {
                let variant = ((pair + k) as u8 % 4) | 4;
                push(
                    Target::Slices,
                    format!("{}-{}", name(pair), tag(mode, nan)),
                    Input {
                        mode,
                        nan,
                        variant,
                        ..base
                    },
                );
            }
        } else {
            let input = Input {
                mode: Mode::ALL[(pair / 4) % 3],
                nan: NANS[(pair / 4 + pair) % 3],
                variant: (pair as u8 % 4) | 4,
                ..base
            };
            push(Target::Slices, format!("{}-codes", name(pair)), input);
        }
        // bytes: misaligned source and destination bytes.
        let (mode, nan) = if narrowing {
            (Mode::NonSaturating, NANS[(fmt + pair) % 3])
        } else {
            (Mode::Default, NANS[fmt % 3])
        };
        push(
            Target::Bytes,
            format!("{}-misaligned", name(pair)),
            Input {
                mode,
                nan,
                src_sel: 2 * pair as u8 + 1,
                dst_sel: (5 * pair + 3) as u8,
                ..base
            },
        );
    }
    // Long slices with the specials at every lane position, at odd offsets.
    for (k, (pair, len, src_sel, dst_sel)) in [
        ("f32->F16", MAX_LEN, 3, 5),
        ("f64->BF16", MAX_LEN, 1, 7),
        ("F16->f32", MAX_LEN, 9, 2),
        ("F8E4M3->f64", MAX_LEN, 33, 6),
        ("f32->F4E2M1x2", MAX_LEN - 1, 5, 11),
        ("F4E2M1x2->f64", MAX_LEN - 1, 13, 3),
        ("f64->F8E8M0", MAX_LEN, 3, 9),
        ("f32->F8E5M2FNUZ", MAX_LEN, 7, 13),
        ("F6E3M2->f32", MAX_LEN, 17, 21),
    ]
    .into_iter()
    .enumerate()
    {
        let pair = pair_index(pair);
        let payload = payload_for(pair);
        let input = Input {
            pair,
            mode: Mode::Saturate,
            nan: NANS[k % 3],
            len,
            src_sel,
            dst_sel,
            variant: k as u8,
            payload,
        };
        push(Target::Slices, format!("{}-long", name(pair)), input);
    }
    // Empty slices, and one packed value (half a byte).
    for (pair, len, what) in [
        ("f32->F8E4M3", 0, "empty"),
        ("f32->F4E2M1x2", 0, "empty-packed"),
        ("F4E2M1x2->f64", 0, "empty-packed-source"),
        ("f64->F4E2M1x2", 1, "one-packed-value"),
        ("F4E2M1x2->f32", 1, "one-packed-value-source"),
    ] {
        let input = Input {
            pair: pair_index(pair),
            mode: Mode::Default,
            nan: NanPolicy::Canonical,
            len,
            src_sel: 0,
            dst_sel: 0,
            // slices: the other lengths; bytes: one destination element more.
            variant: 4 | (1 << 3),
            payload: &[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
        };
        push(Target::Slices, what.into(), input);
        push(Target::Bytes, what.into(), input);
    }
    // Byte-count and element-count errors: (pair, values, extra source bytes, count change,
    // extra destination bytes, what), see the variant byte of the `bytes` target.
    let payload = (0u8..=255).collect::<Vec<u8>>();
    for (pair, len, extra_src, count, extra_dst, what) in [
        ("f32->F16", 37, 3, 0, 0, "odd-source-bytes"), // f32 source, 3 extra bytes
        ("F16->f32", 37, 1, 0, 0, "odd-source-bytes"), // F16 source, 1 extra byte
        ("F16->f64", 37, 0, 0, 5, "odd-dest-bytes"),   // f64 destination, 5 extra bytes
        ("f32->BF16", 37, 0, 0, 1, "odd-dest-bytes"),  // BF16 destination, 1 extra byte
        ("f64->BF16", 37, 0, 1, 0, "dest-one-longer"),
        ("F8E5M2->f32", 37, 0, 2, 0, "dest-one-shorter"),
        ("f64->F16", 37, 7, 1, 1, "every-error"), // all three at once
        ("f64->F8E8M0", 37, 0, 1, 0, "dest-one-longer"),
        ("F6E3M2->f64", 37, 0, 2, 0, "dest-one-shorter"),
        ("f32->F6E2M3", 37, 0, 1, 0, "dest-one-longer"),
        ("F8E4M3FNUZ->f32", 37, 0, 2, 0, "dest-one-shorter"),
        // Packed: 37 values need 19 bytes; 20 or 18 bytes are PackedLength errors.
        ("f32->F4E2M1x2", 37, 0, 1, 0, "dest-one-longer"),
        ("f64->F4E2M1x2", 37, 0, 2, 0, "dest-one-shorter"),
        // 19 packed bytes widen to 37 or 38 values (the 38th is the last high nibble) ...
        ("F4E2M1x2->f32", 37, 0, 1, 0, "dest-one-longer-fits"),
        // ... but not to 36,
        ("F4E2M1x2->f64", 37, 0, 2, 0, "dest-one-shorter"),
        // and 19 bytes (38 values) do not widen to 39.
        ("F4E2M1x2->f32", 38, 0, 1, 0, "even-dest-one-longer"),
        ("F4E2M1x2->f64", 38, 0, 2, 0, "even-dest-one-shorter-fits"),
    ] {
        let variant = extra_src | (count << 3) | (extra_dst << 5);
        let pair = pair_index(pair);
        let input = Input {
            pair,
            mode: Mode::Default,
            nan: NanPolicy::Preserve,
            len,
            src_sel: 7,
            dst_sel: 9,
            variant,
            payload: &payload,
        };
        push(Target::Bytes, format!("{}-{what}", name(pair)), input);
    }
    out
}
