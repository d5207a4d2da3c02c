//! Packed FP4 ([`F4E2M1x2`]) against an independent oracle, through every entry point.
//!
//! # The oracle
//!
//! Built here from the definition of FP4 E2M1 alone, not from the crate's codec nor from
//! `F4E2M1::from_f32`: the eight magnitudes `0, 0.5, 1, 1.5, 2, 3, 4, 6` (codes 0..7, bit 3
//! is the sign). A finite magnitude is compared (exactly, in `f64`) with the seven midpoints
//! between consecutive magnitudes: strictly below a midpoint it rounds down, exactly on one
//! it takes the even code, above the last one (5.0) it is 6 — which also covers overflow
//! and ±Inf (saturation). A NaN becomes ±6 with the NaN's sign bit. The sign of every other
//! source is kept (so `-0.0` and tiny negatives give `-0`, code 8). `f32` sources are widened
//! to `f64` exactly (after their NaN and sign have been read from the bits); `f64` sources are
//! rounded once, from their own value. Widening looks a code up in the same table; the table
//! itself is checked against hard-coded IEEE bit patterns.
//!
//! # The packing rule
//!
//! Element 0 in bits 3..0, element 1 in bits 7..4; the packed side has exactly
//! `values.div_ceil(2)` bytes, `values` being the wide side's length. Narrowing an odd count
//! writes `+0` in the last high nibble; widening an odd count ignores it. Every other length
//! combination is `Error::PackedLength { values, packed }` (a panic naming both numbers from
//! the panicking entry points), and nothing is written.

mod common;

use std::fmt::Debug;
use std::mem::MaybeUninit;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;
use std::time::Instant;

use common::Rng;
use vcvt::{Backend, ConvertTo, Element, Error, F4E2M1x2, NanPolicy, Options, Overflow};

// ------------------------------------------------------------------------------------------
// The oracle
// ------------------------------------------------------------------------------------------

/// The non-negative FP4 E2M1 values, indexed by magnitude code.
const MAGS: [f64; 8] = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];

/// The IEEE `f32` bits of the 16 codes (written out by hand, to check the table above).
const F32_BITS: [u32; 16] = [
    0x0000_0000, // +0
    0x3F00_0000, // 0.5
    0x3F80_0000, // 1
    0x3FC0_0000, // 1.5
    0x4000_0000, // 2
    0x4040_0000, // 3
    0x4080_0000, // 4
    0x40C0_0000, // 6
    0x8000_0000, // -0
    0xBF00_0000, // -0.5
    0xBF80_0000, // -1
    0xBFC0_0000, // -1.5
    0xC000_0000, // -2
    0xC040_0000, // -3
    0xC080_0000, // -4
    0xC0C0_0000, // -6
];

/// The IEEE `f64` bits of the 16 codes (written out by hand).
const F64_BITS: [u64; 16] = [
    0x0000_0000_0000_0000, // +0
    0x3FE0_0000_0000_0000, // 0.5
    0x3FF0_0000_0000_0000, // 1
    0x3FF8_0000_0000_0000, // 1.5
    0x4000_0000_0000_0000, // 2
    0x4008_0000_0000_0000, // 3
    0x4010_0000_0000_0000, // 4
    0x4018_0000_0000_0000, // 6
    0x8000_0000_0000_0000, // -0
    0xBFE0_0000_0000_0000, // -0.5
    0xBFF0_0000_0000_0000, // -1
    0xBFF8_0000_0000_0000, // -1.5
    0xC000_0000_0000_0000, // -2
    0xC008_0000_0000_0000, // -3
    0xC010_0000_0000_0000, // -4
    0xC018_0000_0000_0000, // -6
];

/// The magnitude code of a non-negative, non-NaN magnitude (+Inf included): nearest value by
/// exact comparison with the midpoints, ties to the even code, everything above 5 is 6.
fn round_magnitude(x: f64) -> u8 {
    assert!(x >= 0.0, "round_magnitude({x})");
    for k in 0..7 {
        // Exact: both values have at most 2 significant bits.
        let mid = (MAGS[k] + MAGS[k + 1]) / 2.0;
        if x < mid {
            return k as u8;
        }
        if x == mid {
            // Between codes k and k + 1: the even one.
            return (k + k % 2) as u8;
        }
    }
    7
}

/// The expected FP4 code of an `f64` source.
fn oracle_f64(x: f64) -> u8 {
    let bits = x.to_bits();
    let sign = ((bits >> 63) as u8) << 3;
    if x.is_nan() {
        return sign | 7;
    }
    sign | round_magnitude(f64::from_bits(bits & !(1 << 63)))
}

/// The expected FP4 code of an `f32` source.
fn oracle_f32(x: f32) -> u8 {
    let bits = x.to_bits();
    let sign = ((bits >> 31) as u8) << 3;
    if x.is_nan() {
        return sign | 7;
    }
    sign | round_magnitude(f64::from(f32::from_bits(bits & 0x7FFF_FFFF)))
}

/// The value of a code as `f32` (from the magnitude table; `-0.0` for code 8).
fn value_f32(code: u8) -> f32 {
    let m = MAGS[usize::from(code & 7)] as f32;
    if code & 8 != 0 { -m } else { m }
}

/// The value of a code as `f64`.
fn value_f64(code: u8) -> f64 {
    let m = MAGS[usize::from(code & 7)];
    if code & 8 != 0 { -m } else { m }
}

/// Packs codes two per byte (element 0 low), the spare nibble of an odd count `+0`.
fn pack_codes(codes: &[u8], out: &mut Vec<u8>) {
    out.clear();
    for pair in codes.chunks(2) {
        let hi = pair.get(1).copied().unwrap_or(0);
        out.push((pair[0] & 0xF) | (hi << 4));
    }
}

/// Nibble `i` of a packed byte string.
fn nibble(bytes: &[u8], i: usize) -> u8 {
    (bytes[i / 2] >> (4 * (i % 2))) & 0xF
}

// ------------------------------------------------------------------------------------------
// The wide types
// ------------------------------------------------------------------------------------------

/// `f32` or `f64`, with the oracle for it.
trait Wide: Element + bytemuck::Pod + ConvertTo<F4E2M1x2> + Debug {
    const NAME: &'static str;
    const SIZE: usize = size_of::<Self>();
    /// The oracle's code for this source value.
    fn expect_code(self) -> u8;
    /// The oracle's widened value of a code.
    fn of_code(code: u8) -> Self;
    /// The bits, for exact comparison.
    fn bits(self) -> u64;
    /// The value of `SIZE` little-endian bytes.
    fn from_le(b: &[u8]) -> Self;
    /// The value of `SIZE` native-endian bytes.
    fn from_ne(b: &[u8]) -> Self;
    /// Writes the little-endian bytes.
    fn put_le(self, out: &mut [u8]);
    /// Interesting sources: FP4 values, midpoints and their neighbours, zeros, subnormals,
    /// huge values, infinities, NaN payloads; both signs.
    fn specials() -> Vec<Self>;
    /// A random source: special, uniform in [-8, 8], near an anchor, or any bit pattern.
    fn random(rng: &mut Rng, specials: &[Self]) -> Self;
}

/// FP4 values and midpoints, and some points beyond 6.
const ANCHORS: [f64; 22] = [
    0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 6.5, 7.0, 8.0,
    12.0, 0.125, 0.375, 5.5,
];

/// A uniform `f64` in `[-8, 8)`.
fn uniform(rng: &mut Rng) -> f64 {
    ((rng.next_u64() >> 11) as f64) * (1.0 / (1u64 << 53) as f64) * 16.0 - 8.0
}

impl Wide for f32 {
    const NAME: &'static str = "f32";
    fn expect_code(self) -> u8 {
        oracle_f32(self)
    }
    fn of_code(code: u8) -> Self {
        value_f32(code)
    }
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
    fn from_le(b: &[u8]) -> Self {
        f32::from_le_bytes(b.try_into().unwrap())
    }
    fn from_ne(b: &[u8]) -> Self {
        f32::from_ne_bytes(b.try_into().unwrap())
    }
    fn put_le(self, out: &mut [u8]) {
        out.copy_from_slice(&self.to_le_bytes());
    }
    fn specials() -> Vec<Self> {
        let mut mags: Vec<u32> = Vec::new();
        for a in ANCHORS {
            let b = (a as f32).to_bits() as i64;
            for d in -3..=3i64 {
                if b + d >= 0 {
                    mags.push((b + d) as u32);
                }
            }
        }
        mags.extend([
            1,           // smallest subnormal
            2,           //
            0x0040_0000, // a subnormal
            0x007F_FFFF, // largest subnormal
            0x0080_0000, // MIN_POSITIVE
            0x0080_0001, //
            0x3400_0000, // 2^-23
            0x0DA2_4260, // ~1e-30
            0x7149_F2CA, // ~1e30
            0x477F_E000, // 65504
            0x43E0_0000, // 448
            0x7F7F_FFFF, // MAX
            0x7F80_0000, // Inf
            0x7F80_0001, // sNaN, smallest payload
            0x7FA0_0000, // sNaN
            0x7FBF_FFFF, // sNaN, largest payload
            0x7FC0_0000, // qNaN
            0x7FC0_1234, // qNaN with payload
            0x7FFF_FFFF, // qNaN, all payload bits
        ]);
        let mut out = Vec::new();
        for m in mags {
            out.push(f32::from_bits(m));
            out.push(f32::from_bits(m | 0x8000_0000));
        }
        out
    }
    fn random(rng: &mut Rng, specials: &[Self]) -> Self {
        match rng.below(10) {
            0..=2 => specials[rng.below(specials.len() as u64) as usize],
            3..=5 => uniform(rng) as f32,
            6..=7 => {
                let a = ANCHORS[rng.below(ANCHORS.len() as u64) as usize] as f32;
                let d = rng.below(64) as i64 - 32;
                let b = (i64::from(a.to_bits()) + d).max(0) as u32;
                f32::from_bits(b | ((rng.next_u64() as u32) & 0x8000_0000))
            }
            _ => f32::from_bits(rng.next_u64() as u32),
        }
    }
}

impl Wide for f64 {
    const NAME: &'static str = "f64";
    fn expect_code(self) -> u8 {
        oracle_f64(self)
    }
    fn of_code(code: u8) -> Self {
        value_f64(code)
    }
    fn bits(self) -> u64 {
        self.to_bits()
    }
    fn from_le(b: &[u8]) -> Self {
        f64::from_le_bytes(b.try_into().unwrap())
    }
    fn from_ne(b: &[u8]) -> Self {
        f64::from_ne_bytes(b.try_into().unwrap())
    }
    fn put_le(self, out: &mut [u8]) {
        out.copy_from_slice(&self.to_le_bytes());
    }
    fn specials() -> Vec<Self> {
        let mut mags: Vec<u64> = Vec::new();
        for a in ANCHORS {
            let b = a.to_bits() as i128;
            // Neighbours in f64 ulps (ties that an f32 intermediate would create or hide)
            // and in f32 ulps.
            for d in (-3..=3i128).chain([-(1 << 29), 1 << 29, -(1 << 28), 1 << 28]) {
                if b + d >= 0 {
                    mags.push((b + d) as u64);
                }
            }
        }
        mags.extend([
            1,                     // smallest subnormal
            0x0008_0000_0000_0000, // a subnormal
            0x000F_FFFF_FFFF_FFFF, // largest subnormal
            0x0010_0000_0000_0000, // MIN_POSITIVE
            0x36A0_0000_0000_0000, // f32's smallest subnormal
            0x3690_0000_0000_0000, // half of it
            0x47EF_FFFF_E000_0000, // f32::MAX
            0x47EF_FFFF_F000_0000, // f32::MAX + half an f32 ulp
            0x47F0_0000_0000_0000, // 2^128
            0x7E37_E43C_8800_759C, // 1e300
            0x7FEF_FFFF_FFFF_FFFF, // MAX
            0x7FF0_0000_0000_0000, // Inf
            0x7FF0_0000_0000_0001, // sNaN, smallest payload
            0x7FF0_0000_2000_0000, // sNaN whose payload is below f32's bits
            0x7FF4_0000_0000_0000, // sNaN
            0x7FF8_0000_0000_0000, // qNaN
            0x7FF8_0000_0000_1234, // qNaN, low payload
            0x7FFF_FFFF_FFFF_FFFF, // qNaN, all payload bits
        ]);
        let mut out = Vec::new();
        for m in mags {
            out.push(f64::from_bits(m));
            out.push(f64::from_bits(m | (1 << 63)));
        }
        out
    }
    fn random(rng: &mut Rng, specials: &[Self]) -> Self {
        match rng.below(10) {
            0..=2 => specials[rng.below(specials.len() as u64) as usize],
            3..=5 => uniform(rng),
            6..=7 => {
                let a = ANCHORS[rng.below(ANCHORS.len() as u64) as usize];
                let d = if rng.below(2) == 0 {
                    rng.below(64) as i64 - 32
                } else {
                    (rng.below(64) as i64 - 32) << 29
                };
                let b = (a.to_bits() as i64 + d).max(0) as u64;
                f64::from_bits(b | (rng.next_u64() & (1 << 63)))
            }
            _ => f64::from_bits(rng.next_u64()),
        }
    }
}

// ------------------------------------------------------------------------------------------
// Shared machinery
// ------------------------------------------------------------------------------------------

/// Option sets; FP4 saturates and maps NaN to ±6 under every one of them.
const OPTIONS: [Options; 7] = [
    Options::new(),
    Options::new().overflow(Overflow::Saturate),
    Options::new().overflow(Overflow::NonSaturating),
    Options::new().nan(NanPolicy::Canonical),
    Options::new().nan(NanPolicy::ToMax),
    Options::new()
        .overflow(Overflow::NonSaturating)
        .nan(NanPolicy::Canonical),
    Options::new()
        .overflow(Overflow::Saturate)
        .nan(NanPolicy::Preserve),
];

const MAX_LEN: usize = 300;
const OFFSETS: usize = 8;
const CANARIES: [u8; 2] = [0xA5, 0x5A];

/// Failures of a test: a count and the first few messages (a few per kind, so that every
/// failing entry point shows).
#[derive(Default)]
struct Fails {
    checks: u64,
    count: u64,
    first: Vec<(String, String)>,
}

impl Fails {
    fn fail(&mut self, kind: &str, msg: impl FnOnce() -> String) {
        self.count += 1;
        let same = self.first.iter().filter(|(k, _)| k == kind).count();
        if same < 3 && self.first.len() < 40 {
            self.first.push((kind.to_string(), msg()));
        }
    }

    fn finish(&self, test: &str, coverage: &str, start: Instant) {
        println!(
            "{test}: {coverage}: {} checks, {} failures, {:.2} s",
            self.checks,
            self.count,
            start.elapsed().as_secs_f64()
        );
        for (_, m) in &self.first {
            println!("  FAIL {m}");
        }
        assert!(self.checks > 0, "{test}: checked nothing");
        assert!(
            self.count == 0,
            "{test}: {} failures; first: {}",
            self.count,
            self.first[0].1
        );
    }
}

/// One call of a sweep.
struct Ctx {
    len: usize,
    so: usize,
    d_o: usize,
    run: usize,
}

impl Ctx {
    /// Options for a `_with` entry point: a different set from call to call.
    fn options(&self) -> Options {
        OPTIONS[(self.len + 3 * self.so + 5 * self.d_o + self.run) % OPTIONS.len()]
    }
}

fn packed(b: &[u8]) -> &[F4E2M1x2] {
    bytemuck::cast_slice(b)
}

fn packed_mut(b: &mut [u8]) -> &mut [F4E2M1x2] {
    bytemuck::cast_slice_mut(b)
}

/// Views initialized memory as `MaybeUninit` (same layout; the callee only writes).
fn as_uninit<T>(s: &mut [T]) -> &mut [MaybeUninit<T>] {
    // SAFETY: `MaybeUninit<T>` has `T`'s layout, every value of `T` is a valid
    // `MaybeUninit<T>`, and the callers only write valid `T`s through it.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr().cast(), s.len()) }
}

/// Checks what `convert_slice_uninit` returned: the destination itself.
fn check_uninit_result<T>(out: &[T], ptr: *const T, len: usize) -> Result<(), String> {
    if out.as_ptr() != ptr || out.len() != len {
        return Err(format!(
            "returned slice {:p}+{} instead of the destination {:p}+{len}",
            out.as_ptr(),
            out.len(),
            ptr
        ));
    }
    Ok(())
}

fn err(e: Error) -> String {
    format!("returned Err({e:?})")
}

// ------------------------------------------------------------------------------------------
// 1a. Narrowing sweep: every length, every offset, canaries, every entry point
// ------------------------------------------------------------------------------------------

/// Converts `src` (also given as its little-endian bytes `raw`, at an unaligned address)
/// into the packed destination bytes.
type NarrowFn<'a, W> = Box<dyn FnMut(&Ctx, &[W], &[u8], &mut [u8]) -> Result<(), String> + 'a>;

fn narrow_entry_points<W: Wide>(backends: &[Backend]) -> Vec<(String, NarrowFn<'static, W>)> {
    let mut v: Vec<(String, NarrowFn<'static, W>)> = Vec::new();
    for &b in backends {
        v.push((
            format!("convert_slice_on({b})"),
            Box::new(move |c, s, _, d| {
                let o = if c.run == 0 {
                    Options::new()
                } else {
                    c.options()
                };
                vcvt::convert_slice_on(b, s, packed_mut(d), o).map_err(err)
            }),
        ));
    }
    v.push((
        "convert_slice".into(),
        Box::new(|_, s, _, d| {
            vcvt::convert_slice(s, packed_mut(d));
            Ok(())
        }),
    ));
    v.push((
        "convert_slice_with".into(),
        Box::new(|c, s, _, d| {
            vcvt::convert_slice_with(s, packed_mut(d), c.options());
            Ok(())
        }),
    ));
    v.push((
        "try_convert_slice".into(),
        Box::new(|_, s, _, d| vcvt::try_convert_slice(s, packed_mut(d)).map_err(err)),
    ));
    v.push((
        "try_convert_slice_with".into(),
        Box::new(|c, s, _, d| {
            vcvt::try_convert_slice_with(s, packed_mut(d), c.options()).map_err(err)
        }),
    ));
    v.push((
        "convert_slice_uninit".into(),
        Box::new(|_, s, _, d| {
            let d = packed_mut(d);
            let (p, n) = (d.as_ptr(), d.len());
            let out = vcvt::convert_slice_uninit(s, as_uninit(d));
            check_uninit_result(out, p, n)
        }),
    ));
    v.push((
        "convert_slice_uninit_with".into(),
        Box::new(|c, s, _, d| {
            let d = packed_mut(d);
            let (p, n) = (d.as_ptr(), d.len());
            let out = vcvt::convert_slice_uninit_with(s, as_uninit(d), c.options());
            check_uninit_result(out, p, n)
        }),
    ));
    v.push((
        "convert_to_vec".into(),
        Box::new(|_, s, _, d| {
            let out: Vec<F4E2M1x2> = vcvt::convert_to_vec(s);
            if out.len() != s.len().div_ceil(2) {
                return Err(format!("returned {} bytes", out.len()));
            }
            d.copy_from_slice(bytemuck::cast_slice(&out));
            Ok(())
        }),
    ));
    v.push((
        "convert_to_vec_with".into(),
        Box::new(|c, s, _, d| {
            let out: Vec<F4E2M1x2> = vcvt::convert_to_vec_with(s, c.options());
            if out.len() != s.len().div_ceil(2) {
                return Err(format!("returned {} bytes", out.len()));
            }
            d.copy_from_slice(bytemuck::cast_slice(&out));
            Ok(())
        }),
    ));
    v.push((
        "convert_to_bytes".into(),
        Box::new(|_, s, _, d| vcvt::convert_to_bytes::<W, F4E2M1x2>(s, d).map_err(err)),
    ));
    v.push((
        "convert_to_bytes_with".into(),
        Box::new(|c, s, _, d| {
            vcvt::convert_to_bytes_with::<W, F4E2M1x2>(s, d, c.options()).map_err(err)
        }),
    ));
    v.push((
        "convert_from_bytes (unaligned wide bytes)".into(),
        Box::new(|_, _, r, d| {
            vcvt::convert_from_bytes::<W, F4E2M1x2>(r, packed_mut(d)).map_err(err)
        }),
    ));
    v.push((
        "convert_from_bytes_with (unaligned wide bytes)".into(),
        Box::new(|c, _, r, d| {
            vcvt::convert_from_bytes_with::<W, F4E2M1x2>(r, packed_mut(d), c.options()).map_err(err)
        }),
    ));
    v
}

/// Runs `conv` for every length 0..=MAX_LEN, source offset and destination offset 0..8,
/// twice (two canary fills), and checks the destination range, the bytes around it, the
/// spare nibble and that both runs agree.
fn narrow_sweep<W: Wide>(
    what: &str,
    pool: &[W],
    codes: &[u8],
    raw: &[Vec<u64>],
    fails: &mut Fails,
    conv: &mut NarrowFn<'_, W>,
) {
    let size = MAX_LEN.div_ceil(2) + 2 * OFFSETS;
    let mut bufs = [vec![0u8; size], vec![0u8; size]];
    let mut expected = Vec::new();
    for len in 0..=MAX_LEN {
        let n = len.div_ceil(2);
        for so in 0..OFFSETS {
            pack_codes(&codes[so..so + len], &mut expected);
            let src = &pool[so..so + len];
            let raw_src = &bytemuck::cast_slice::<u64, u8>(&raw[so])[so..so + len * W::SIZE];
            for d_o in 0..OFFSETS {
                let mut ok = true;
                for run in 0..2 {
                    let canary = CANARIES[run];
                    let buf = &mut bufs[run];
                    buf.fill(canary);
                    let ctx = Ctx { len, so, d_o, run };
                    let at = || {
                        format!(
                            "{what}: {} len {len} src_off {so} dst_off {d_o} run {run} (canary {canary:#04x})",
                            W::NAME
                        )
                    };
                    let result = catch_unwind(AssertUnwindSafe(|| {
                        conv(&ctx, src, raw_src, &mut buf[d_o..d_o + n])
                    }));
                    match result {
                        Ok(Ok(())) => {}
                        Ok(Err(e)) => {
                            fails.fail(what, || format!("{}: {e}", at()));
                            ok = false;
                            continue;
                        }
                        Err(p) => {
                            fails.fail(what, || format!("{}: panicked: {}", at(), panic_text(&p)));
                            ok = false;
                            continue;
                        }
                    }
                    fails.checks += 1;
                    if let Some(i) = buf[..d_o].iter().position(|&b| b != canary) {
                        fails.fail(what, || {
                            format!(
                                "{}: wrote byte {} before the destination",
                                at(),
                                i as isize - d_o as isize
                            )
                        });
                        ok = false;
                    }
                    if let Some(i) = buf[d_o + n..].iter().position(|&b| b != canary) {
                        fails.fail(what, || {
                            format!(
                                "{}: wrote byte {} past the end of the destination ({n} bytes)",
                                at(),
                                n + i
                            )
                        });
                        ok = false;
                    }
                    let got = &buf[d_o..d_o + n];
                    if let Some(j) = (0..n).find(|&j| got[j] != expected[j]) {
                        fails.fail(what, || {
                            let hi = src.get(2 * j + 1).map(|x| format!("{:#x}", x.bits()));
                            format!(
                                "{}: byte {j} (sources {:#x}, {}): expected {:#04x}, got {:#04x}",
                                at(),
                                src[2 * j].bits(),
                                hi.unwrap_or_else(|| "none".into()),
                                expected[j],
                                got[j]
                            )
                        });
                        ok = false;
                    }
                    if len % 2 == 1 && got[n - 1] >> 4 != 0 {
                        fails.fail(what, || {
                            format!(
                                "{}: spare high nibble of the last byte is {:#x}, not 0",
                                at(),
                                got[n - 1] >> 4
                            )
                        });
                        ok = false;
                    }
                }
                if ok && bufs[0][d_o..d_o + n] != bufs[1][d_o..d_o + n] {
                    fails.fail(what, || {
                        format!("{what}: {} len {len} src_off {so} dst_off {d_o}: the two runs disagree", W::NAME)
                    });
                }
            }
        }
    }
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else {
        "<non-string panic>".to_string()
    }
}

fn narrow_sweep_all<W: Wide>(test: &str, seed: u64) {
    let start = Instant::now();
    quiet_expected_panics();
    let backends = common::backends(test);
    let specials = W::specials();
    let mut rng = Rng::new(seed);
    let pool: Vec<W> = (0..MAX_LEN + OFFSETS)
        .map(|_| W::random(&mut rng, &specials))
        .collect();
    let codes: Vec<u8> = pool.iter().map(|x| x.expect_code()).collect();
    // raw[so]: the values pool[so..] as little-endian bytes starting at byte `so` of an
    // 8-aligned buffer, so that most byte sources are misaligned.
    let raw: Vec<Vec<u64>> = (0..OFFSETS)
        .map(|so| {
            let mut words = vec![0u64; ((MAX_LEN + 2 * OFFSETS) * W::SIZE).div_ceil(8)];
            let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut words);
            for (i, x) in pool[so..].iter().enumerate() {
                x.put_le(&mut bytes[so + i * W::SIZE..so + (i + 1) * W::SIZE]);
            }
            words
        })
        .collect();
    let mut fails = Fails::default();
    let mut names = Vec::new();
    for (name, mut conv) in narrow_entry_points::<W>(&backends) {
        narrow_sweep(&name, &pool, &codes, &raw, &mut fails, &mut conv);
        names.push(name);
    }
    fails.finish(
        test,
        &format!(
            "{} -> F4E2M1x2, lengths 0..={MAX_LEN}, src/dst offsets 0..{OFFSETS}, canaries {:#04x}/{:#04x}, backends [{}], entry points [{}]",
            W::NAME,
            CANARIES[0],
            CANARIES[1],
            common::names(&backends),
            names.join(", ")
        ),
        start,
    );
}

#[test]
fn narrow_f32_every_length_offset_entry_point() {
    narrow_sweep_all::<f32>("narrow_f32_every_length_offset_entry_point", 0xF4_0001);
}

#[test]
fn narrow_f64_every_length_offset_entry_point() {
    narrow_sweep_all::<f64>("narrow_f64_every_length_offset_entry_point", 0xF4_0002);
}

// ------------------------------------------------------------------------------------------
// 1b. Widening sweep
// ------------------------------------------------------------------------------------------

/// Converts the packed source bytes into the destination bytes (typed `W` elements, or raw
/// little-endian bytes for `convert_to_bytes`).
type WidenFn<'a> = Box<dyn FnMut(&Ctx, &[u8], &mut [u8]) -> Result<(), String> + 'a>;

/// Entry points, each with whether its destination is raw little-endian bytes (offsets in
/// bytes, so unaligned) rather than a `[W]` slice (offsets in elements).
fn widen_entry_points<W: Wide>(backends: &[Backend]) -> Vec<(String, bool, WidenFn<'static>)>
where
    F4E2M1x2: ConvertTo<W>,
{
    fn wide<W: Wide>(d: &mut [u8]) -> &mut [W] {
        bytemuck::cast_slice_mut(d)
    }
    let mut v: Vec<(String, bool, WidenFn<'static>)> = Vec::new();
    for &b in backends {
        v.push((
            format!("convert_slice_on({b})"),
            false,
            Box::new(move |c, s, d| {
                let o = if c.run == 0 {
                    Options::new()
                } else {
                    c.options()
                };
                vcvt::convert_slice_on(b, packed(s), wide::<W>(d), o).map_err(err)
            }),
        ));
    }
    v.push((
        "convert_slice".into(),
        false,
        Box::new(|_, s, d| {
            vcvt::convert_slice(packed(s), wide::<W>(d));
            Ok(())
        }),
    ));
    v.push((
        "convert_slice_with".into(),
        false,
        Box::new(|c, s, d| {
            vcvt::convert_slice_with(packed(s), wide::<W>(d), c.options());
            Ok(())
        }),
    ));
    v.push((
        "try_convert_slice".into(),
        false,
        Box::new(|_, s, d| vcvt::try_convert_slice(packed(s), wide::<W>(d)).map_err(err)),
    ));
    v.push((
        "try_convert_slice_with".into(),
        false,
        Box::new(|c, s, d| {
            vcvt::try_convert_slice_with(packed(s), wide::<W>(d), c.options()).map_err(err)
        }),
    ));
    v.push((
        "convert_slice_uninit".into(),
        false,
        Box::new(|_, s, d| {
            let d = wide::<W>(d);
            let (p, n) = (d.as_ptr(), d.len());
            let out = vcvt::convert_slice_uninit(packed(s), as_uninit(d));
            check_uninit_result(out, p, n)
        }),
    ));
    v.push((
        "convert_slice_uninit_with".into(),
        false,
        Box::new(|c, s, d| {
            let d = wide::<W>(d);
            let (p, n) = (d.as_ptr(), d.len());
            let out = vcvt::convert_slice_uninit_with(packed(s), as_uninit(d), c.options());
            check_uninit_result(out, p, n)
        }),
    ));
    v.push((
        "convert_from_bytes (packed bytes)".into(),
        false,
        Box::new(|_, s, d| vcvt::convert_from_bytes::<F4E2M1x2, W>(s, wide::<W>(d)).map_err(err)),
    ));
    v.push((
        "convert_from_bytes_with (packed bytes)".into(),
        false,
        Box::new(|c, s, d| {
            vcvt::convert_from_bytes_with::<F4E2M1x2, W>(s, wide::<W>(d), c.options()).map_err(err)
        }),
    ));
    v.push((
        "convert_to_bytes (unaligned wide bytes)".into(),
        true,
        Box::new(|_, s, d| vcvt::convert_to_bytes::<F4E2M1x2, W>(packed(s), d).map_err(err)),
    ));
    v.push((
        "convert_to_bytes_with (unaligned wide bytes)".into(),
        true,
        Box::new(|c, s, d| {
            vcvt::convert_to_bytes_with::<F4E2M1x2, W>(packed(s), d, c.options()).map_err(err)
        }),
    ));
    v
}

/// The garbage written into the spare high nibble of an odd-length source, per run (1..=15,
/// different in the two runs).
fn garbage(len: usize, so: usize, d_o: usize, run: usize) -> u8 {
    let g = 1 + ((7 * len + 3 * so + d_o) % 15) as u8;
    if run == 0 { g } else { g % 15 + 1 }
}

fn widen_sweep<W: Wide>(
    what: &str,
    pool: &[u8],
    raw_dst: bool,
    fails: &mut Fails,
    conv: &mut WidenFn<'_>,
) {
    let unit = if raw_dst { 1 } else { W::SIZE };
    let bytes = (MAX_LEN + 2 * OFFSETS) * W::SIZE;
    let mut bufs = [vec![0u64; bytes / 8], vec![0u64; bytes / 8]];
    let mut src = pool.to_vec();
    let mut expected: Vec<W> = Vec::new();
    for len in 0..=MAX_LEN {
        let n = len.div_ceil(2);
        for so in 0..OFFSETS {
            expected.clear();
            expected.extend((0..len).map(|i| W::of_code(nibble(&pool[so..], i))));
            for d_o in 0..OFFSETS {
                let (lo, hi) = (d_o * unit, d_o * unit + len * W::SIZE);
                let mut ok = true;
                for run in 0..2 {
                    let canary = CANARIES[run];
                    let g = garbage(len, so, d_o, run);
                    if len % 2 == 1 {
                        src[so + n - 1] = (pool[so + n - 1] & 0x0F) | (g << 4);
                    }
                    let buf: &mut [u8] = bytemuck::cast_slice_mut(&mut bufs[run]);
                    buf.fill(canary);
                    let ctx = Ctx { len, so, d_o, run };
                    let at = || {
                        format!(
                            "{what}: F4E2M1x2 -> {} len {len} src_off {so} dst_off {d_o} run {run} (canary {canary:#04x}, spare nibble {})",
                            W::NAME,
                            if len % 2 == 1 {
                                format!("{g:#x}")
                            } else {
                                "none".into()
                            }
                        )
                    };
                    let result = catch_unwind(AssertUnwindSafe(|| {
                        conv(&ctx, &src[so..so + n], &mut buf[lo..hi])
                    }));
                    match result {
                        Ok(Ok(())) => {}
                        Ok(Err(e)) => {
                            fails.fail(what, || format!("{}: {e}", at()));
                            ok = false;
                            continue;
                        }
                        Err(p) => {
                            fails.fail(what, || format!("{}: panicked: {}", at(), panic_text(&p)));
                            ok = false;
                            continue;
                        }
                    }
                    fails.checks += 1;
                    if let Some(i) = buf[..lo].iter().position(|&b| b != canary) {
                        fails.fail(what, || {
                            format!(
                                "{}: wrote byte {} before the destination",
                                at(),
                                i as isize - lo as isize
                            )
                        });
                        ok = false;
                    }
                    if let Some(i) = buf[hi..].iter().position(|&b| b != canary) {
                        fails.fail(what, || {
                            format!(
                                "{}: wrote byte {} past the end of the destination",
                                at(),
                                len * W::SIZE + i
                            )
                        });
                        ok = false;
                    }
                    for (i, e) in expected.iter().enumerate() {
                        let b = &buf[lo + i * W::SIZE..lo + (i + 1) * W::SIZE];
                        let got = if raw_dst {
                            W::from_le(b)
                        } else {
                            W::from_ne(b)
                        };
                        if got.bits() != e.bits() {
                            fails.fail(what, || {
                                format!(
                                    "{}: value {i} (code {:#x}): expected {:#x} ({e:?}), got {:#x} ({got:?})",
                                    at(),
                                    nibble(&pool[so..], i),
                                    e.bits(),
                                    got.bits()
                                )
                            });
                            ok = false;
                            break;
                        }
                    }
                }
                if len % 2 == 1 {
                    src[so + n - 1] = pool[so + n - 1];
                }
                let [b0, b1] = &bufs;
                let (b0, b1): (&[u8], &[u8]) = (bytemuck::cast_slice(b0), bytemuck::cast_slice(b1));
                if ok && b0[lo..hi] != b1[lo..hi] {
                    fails.fail(what, || {
                        format!("{what}: F4E2M1x2 -> {} len {len} src_off {so} dst_off {d_o}: the two runs disagree", W::NAME)
                    });
                }
            }
        }
    }
}

fn widen_sweep_all<W: Wide>(test: &str, seed: u64)
where
    F4E2M1x2: ConvertTo<W>,
{
    let start = Instant::now();
    quiet_expected_panics();
    let backends = common::backends(test);
    let mut rng = Rng::new(seed);
    let mut pool: Vec<u8> = (0..MAX_LEN.div_ceil(2) + 2 * OFFSETS)
        .map(|_| rng.next_u64() as u8)
        .collect();
    // Make sure every code occurs in both nibbles.
    for (i, b) in pool.iter_mut().take(16).enumerate() {
        *b = (i as u8) | ((15 - i as u8) << 4);
    }
    let mut fails = Fails::default();
    let mut names = Vec::new();
    for (name, raw_dst, mut conv) in widen_entry_points::<W>(&backends) {
        widen_sweep::<W>(&name, &pool, raw_dst, &mut fails, &mut conv);
        names.push(name);
    }
    fails.finish(
        test,
        &format!(
            "F4E2M1x2 -> {}, lengths 0..={MAX_LEN}, src/dst offsets 0..{OFFSETS}, canaries {:#04x}/{:#04x}, garbage spare nibble for odd lengths, backends [{}], entry points [{}]",
            W::NAME,
            CANARIES[0],
            CANARIES[1],
            common::names(&backends),
            names.join(", ")
        ),
        start,
    );
}

#[test]
fn widen_to_f32_every_length_offset_entry_point() {
    widen_sweep_all::<f32>("widen_to_f32_every_length_offset_entry_point", 0xF4_0003);
}

#[test]
fn widen_to_f64_every_length_offset_entry_point() {
    widen_sweep_all::<f64>("widen_to_f64_every_length_offset_entry_point", 0xF4_0004);
}

/// `convert_to_vec` from packed bytes: `N` bytes hold `2N` values, and the `Vec` has no
/// length stated by the caller, so it must hold all `2N` of them.
fn widen_to_vec<W: Wide>(test: &str, seed: u64)
where
    F4E2M1x2: ConvertTo<W>,
{
    let start = Instant::now();
    quiet_expected_panics();
    let mut rng = Rng::new(seed);
    let pool: Vec<u8> = (0..MAX_LEN.div_ceil(2) + OFFSETS)
        .map(|_| rng.next_u64() as u8)
        .collect();
    let mut fails = Fails::default();
    for n in 0..=MAX_LEN.div_ceil(2) {
        for so in 0..OFFSETS {
            let src = packed(&pool[so..so + n]);
            for (what, with) in [("convert_to_vec", false), ("convert_to_vec_with", true)] {
                let at = || format!("{what}: {n} packed bytes -> {} (src_off {so})", W::NAME);
                let r = catch_unwind(|| {
                    if with {
                        vcvt::convert_to_vec_with::<F4E2M1x2, W>(src, OPTIONS[n % OPTIONS.len()])
                    } else {
                        vcvt::convert_to_vec::<F4E2M1x2, W>(src)
                    }
                });
                fails.checks += 1;
                let v = match r {
                    Ok(v) => v,
                    Err(p) => {
                        fails.fail(&format!("{what} panic"), || {
                            format!("{}: panicked: {}", at(), panic_text(&p))
                        });
                        continue;
                    }
                };
                if v.len() != 2 * n {
                    fails.fail(&format!("{what} count"), || {
                        format!("{}: returned {} values, expected {}", at(), v.len(), 2 * n)
                    });
                    continue;
                }
                for (i, x) in v.iter().enumerate() {
                    let e = W::of_code(nibble(&pool[so..], i));
                    if x.bits() != e.bits() {
                        fails.fail(what, || {
                            format!(
                                "{}: value {i}: expected {:#x}, got {:#x}",
                                at(),
                                e.bits(),
                                x.bits()
                            )
                        });
                        break;
                    }
                }
            }
        }
    }
    fails.finish(
        test,
        &format!(
            "convert_to_vec(_with) F4E2M1x2 -> {}, 0..={} bytes, offsets 0..{OFFSETS}",
            W::NAME,
            MAX_LEN.div_ceil(2)
        ),
        start,
    );
}

#[test]
fn widen_to_vec_f32_holds_every_nibble() {
    widen_to_vec::<f32>("widen_to_vec_f32_holds_every_nibble", 0xF4_0005);
}

#[test]
fn widen_to_vec_f64_holds_every_nibble() {
    widen_to_vec::<f64>("widen_to_vec_f64_holds_every_nibble", 0xF4_0006);
}

// ------------------------------------------------------------------------------------------
// 0. The oracle itself
// ------------------------------------------------------------------------------------------

#[test]
fn oracle_matches_the_definition() {
    for code in 0..16u8 {
        assert_eq!(
            value_f32(code).to_bits(),
            F32_BITS[usize::from(code)],
            "code {code:#x}"
        );
        assert_eq!(
            value_f64(code).to_bits(),
            F64_BITS[usize::from(code)],
            "code {code:#x}"
        );
        // Every value narrows to its own code.
        assert_eq!(oracle_f32(value_f32(code)), code);
        assert_eq!(oracle_f64(value_f64(code)), code);
    }
    // Ties go to the even code.
    let ties = [
        (0.25, 0.0),
        (0.75, 1.0),
        (1.25, 1.0),
        (1.75, 2.0),
        (2.5, 2.0),
        (3.5, 4.0),
        (5.0, 4.0),
    ];
    for (x, want) in ties {
        assert_eq!(value_f64(oracle_f64(x)), want, "{x}");
        assert_eq!(value_f64(oracle_f64(-x)), -want, "-{x}");
        assert_eq!(f64::from(value_f32(oracle_f32(x as f32))), want, "{x}f32");
    }
    // Just off a tie.
    assert_eq!(value_f64(oracle_f64(0.25f64.next_up())), 0.5);
    assert_eq!(value_f64(oracle_f64(5.0f64.next_up())), 6.0);
    assert_eq!(value_f64(oracle_f64(0.75f64.next_down())), 0.5);
    assert_eq!(value_f32(oracle_f32(2.5f32.next_up())), 3.0);
    // Saturation, NaN, zeros.
    assert_eq!(oracle_f32(f32::INFINITY), 0x7);
    assert_eq!(oracle_f32(f32::NEG_INFINITY), 0xF);
    assert_eq!(oracle_f64(1e300), 0x7);
    assert_eq!(oracle_f32(6.5), 0x7);
    assert_eq!(oracle_f32(f32::from_bits(0x7FC0_0000)), 0x7);
    assert_eq!(oracle_f32(f32::from_bits(0xFF80_0001)), 0xF);
    assert_eq!(oracle_f64(f64::from_bits(0xFFF0_0000_0000_0001)), 0xF);
    assert_eq!(oracle_f32(-0.0), 0x8);
    assert_eq!(oracle_f32(-1e-30), 0x8);
    assert_eq!(oracle_f64(f64::from_bits(1)), 0x0);
    println!("oracle_matches_the_definition: 16 codes, 7 ties, neighbours, saturation, NaN, zeros");
}

// ------------------------------------------------------------------------------------------
// 2. All 256 bytes widened
// ------------------------------------------------------------------------------------------

fn all_bytes_widen<W: Wide>(backends: &[Backend], fails: &mut Fails, bits_of: impl Fn(u8) -> u64)
where
    F4E2M1x2: ConvertTo<W>,
{
    let bytes: Vec<u8> = (0..=255).collect();
    let check = |fails: &mut Fails, what: &str, out: &[W], len: usize| {
        fails.checks += 1;
        for (i, x) in out.iter().enumerate().take(len) {
            let code = nibble(&bytes, i);
            if x.bits() != bits_of(code) {
                fails.fail(what, || {
                    format!(
                        "{what}: -> {} byte {:#04x} nibble {} (code {code:#x}): expected {:#x}, got {:#x}",
                        W::NAME,
                        i / 2,
                        i % 2,
                        bits_of(code),
                        x.bits()
                    )
                });
            }
        }
    };
    let zero = W::zeroed();
    for &b in backends {
        let mut out = vec![zero; 512];
        match vcvt::convert_slice_on(b, packed(&bytes), &mut out, Options::new()) {
            Ok(()) => check(fails, &format!("convert_slice_on({b})"), &out, 512),
            Err(e) => fails.fail("on", || format!("convert_slice_on({b}): {e:?}")),
        }
        // Each byte alone, as two values and as one (high nibble ignored).
        for byte in 0..=255u8 {
            for len in [1, 2] {
                let mut one = [W::of_code(0x7); 2];
                let what = format!("convert_slice_on({b}) single byte, {len} value(s)");
                match vcvt::convert_slice_on(b, packed(&[byte]), &mut one[..len], Options::new()) {
                    Ok(()) => {
                        fails.checks += 1;
                        for (i, x) in one[..len].iter().enumerate() {
                            let code = (byte >> (4 * i)) & 0xF;
                            if x.bits() != bits_of(code) {
                                fails.fail(&what, || {
                                    format!("{what}: byte {byte:#04x} value {i}: expected {:#x}, got {:#x}", bits_of(code), x.bits())
                                });
                            }
                        }
                        if len == 1 && one[1].bits() != W::of_code(0x7).bits() {
                            fails.fail(&what, || {
                                format!("{what}: byte {byte:#04x}: wrote a second value")
                            });
                        }
                    }
                    Err(e) => fails.fail(&what, || format!("{what}: {e:?}")),
                }
            }
        }
    }
    let mut out = vec![zero; 512];
    vcvt::convert_slice(packed(&bytes), &mut out);
    check(fails, "convert_slice", &out, 512);
    let mut out = vec![zero; 512];
    match vcvt::convert_from_bytes::<F4E2M1x2, W>(&bytes, &mut out) {
        Ok(()) => check(fails, "convert_from_bytes", &out, 512),
        Err(e) => fails.fail("from_bytes", || format!("convert_from_bytes: {e:?}")),
    }
    let mut raw = vec![0u8; 512 * W::SIZE + 1];
    match vcvt::convert_to_bytes::<F4E2M1x2, W>(packed(&bytes), &mut raw[1..]) {
        Ok(()) => {
            let out: Vec<W> = raw[1..].chunks(W::SIZE).map(W::from_le).collect();
            check(fails, "convert_to_bytes", &out, 512);
        }
        Err(e) => fails.fail("to_bytes", || format!("convert_to_bytes: {e:?}")),
    }
}

#[test]
fn every_byte_widens_to_the_table() {
    let test = "every_byte_widens_to_the_table";
    let start = Instant::now();
    let backends = common::backends(test);
    let mut fails = Fails::default();
    all_bytes_widen::<f32>(&backends, &mut fails, |c| {
        u64::from(F32_BITS[usize::from(c)])
    });
    all_bytes_widen::<f64>(&backends, &mut fails, |c| F64_BITS[usize::from(c)]);
    fails.finish(
        test,
        &format!(
            "all 256 bytes (both nibbles) -> f32 and f64 against hard-coded bits, alone and as one 256-byte slice, backends [{}] + convert_slice, convert_from_bytes, convert_to_bytes",
            common::names(&backends)
        ),
        start,
    );
}

// ------------------------------------------------------------------------------------------
// 3. Length errors
// ------------------------------------------------------------------------------------------

/// The test whose expected panics the hook keeps quiet.
const LENGTH_TEST: &str = "length_errors_are_reported_and_write_nothing";

/// The tests that make every vcvt call that may panic inside `catch_unwind` and record the
/// panic message themselves (as an expected panic or as a failure).
const QUIET_TESTS: [&str; 3] = [
    LENGTH_TEST,
    "every_length_offset_entry_point",
    "widen_to_vec_",
];

/// Keeps vcvt's length panics out of the output on the threads of [`QUIET_TESTS`], which
/// catch and report them; every other panic goes to the default hook.
fn quiet_expected_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let msg = info
                .payload()
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| info.payload().downcast_ref::<&str>().copied())
                .unwrap_or("");
            let expected = std::thread::current()
                .name()
                .is_some_and(|n| QUIET_TESTS.iter().any(|t| n.contains(t)))
                && msg.contains("packed length mismatch");
            if !expected {
                default(info);
            }
        }));
    });
}

/// (values, packed bytes) combinations that break the rule.
fn bad_combos() -> Vec<(usize, usize)> {
    let mut v = vec![
        (0, 1),
        (0, 2),
        (1, 0),
        (1, 2),
        (2, 0),
        (2, 2),
        (3, 1),
        (3, 3),
        (4, 1),
        (4, 4),
        (5, 2),
        (5, 5),
    ];
    for values in [
        6usize, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 101, 255, 256, 257, 300, 301, 1001,
    ] {
        let need = values.div_ceil(2);
        v.extend([
            (values, values),
            (values, need - 1),
            (values, need + 1),
            (values, 2 * values),
            (values, 0),
        ]);
        if values % 2 == 0 {
            v.push((values, values / 2 - 1));
        }
    }
    for bytes in [1usize, 2, 3, 7, 8, 64, 150] {
        v.extend([
            (2 * bytes + 1, bytes),
            (2 * bytes + 2, bytes),
            (bytes, 2 * bytes),
        ]);
    }
    v.retain(|&(values, packed)| packed != values.div_ceil(2));
    v.sort_unstable();
    v.dedup();
    v
}

/// The integers in a message.
fn numbers_in(msg: &str) -> Vec<usize> {
    msg.split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .filter_map(|s| s.parse().ok())
        .collect()
}

/// Checks a fallible entry point's result and that the destination is untouched.
fn expect_packed_error(
    fails: &mut Fails,
    what: &str,
    values: usize,
    packed: usize,
    got: Result<(), Error>,
    untouched: bool,
) {
    fails.checks += 1;
    let want = Error::PackedLength { values, packed };
    if got != Err(want) {
        fails.fail(what, || {
            format!("{what}: values {values}, packed {packed}: expected Err({want:?}), got {got:?}")
        });
    }
    if !untouched {
        fails.fail(what, || {
            format!("{what}: values {values}, packed {packed}: wrote into the destination")
        });
    }
    if let Err(e) = got {
        let n = numbers_in(&e.to_string());
        if !(n.contains(&values) && n.contains(&packed)) {
            fails.fail(what, || {
                format!("{what}: values {values}, packed {packed}: message `{e}` lacks a number")
            });
        }
    }
}

/// Runs a panicking entry point and checks that it panics naming both numbers and writes
/// nothing.
fn expect_packed_panic<T>(
    fails: &mut Fails,
    what: &str,
    values: usize,
    packed: usize,
    dst: &mut [T],
    call: impl FnOnce(&mut [T]),
    untouched: impl FnOnce(&[T]) -> bool,
) {
    if cfg!(panic = "abort") {
        // A panic would end the whole test binary (wasm32-wasip1): the panicking entry
        // points are checked natively only; `length_errors_are_reported_and_write_nothing`
        // says so.
        return;
    }
    fails.checks += 1;
    match catch_unwind(AssertUnwindSafe(|| call(&mut *dst))) {
        Ok(()) => fails.fail(what, || {
            format!("{what}: values {values}, packed {packed}: did not panic")
        }),
        Err(p) => {
            let msg = panic_text(&p);
            let n = numbers_in(&msg);
            if !(n.contains(&values) && n.contains(&packed)) {
                fails.fail(what, || {
                    format!("{what}: values {values}, packed {packed}: panic message `{msg}` lacks a number")
                });
            }
        }
    }
    if !untouched(dst) {
        fails.fail(what, || {
            format!("{what}: values {values}, packed {packed}: wrote into the destination")
        });
    }
}

fn length_errors<W: Wide>(backends: &[Backend], fails: &mut Fails, combos: &[(usize, usize)])
where
    F4E2M1x2: ConvertTo<W>,
{
    let canary_w = W::of_code(0x5); // 3.0: not what any source below converts to
    let src_w_val = W::of_code(0x2); // 1.0
    for &(values, np) in combos {
        // Narrowing: `values` wide values into `np` packed bytes.
        let src: Vec<W> = vec![src_w_val; values];
        let mut raw_src = vec![0u8; values * W::SIZE + 1];
        for (i, x) in src.iter().enumerate() {
            x.put_le(&mut raw_src[1 + i * W::SIZE..1 + (i + 1) * W::SIZE]);
        }
        let raw_src = &raw_src[1..];
        let fresh = || vec![0xA5u8; np];
        let clean = |d: &[u8]| d.iter().all(|&b| b == 0xA5);

        let mut d = fresh();
        let r = vcvt::try_convert_slice(&src, packed_mut(&mut d));
        expect_packed_error(
            fails,
            "try_convert_slice (narrow)",
            values,
            np,
            r,
            clean(&d),
        );
        for o in OPTIONS {
            let mut d = fresh();
            let r = vcvt::try_convert_slice_with(&src, packed_mut(&mut d), o);
            expect_packed_error(
                fails,
                "try_convert_slice_with (narrow)",
                values,
                np,
                r,
                clean(&d),
            );
        }
        for &b in backends {
            let mut d = fresh();
            let r = vcvt::convert_slice_on(b, &src, packed_mut(&mut d), Options::new());
            expect_packed_error(
                fails,
                &format!("convert_slice_on({b}) (narrow)"),
                values,
                np,
                r,
                clean(&d),
            );
        }
        let mut d = fresh();
        let r = vcvt::convert_to_bytes::<W, F4E2M1x2>(&src, &mut d);
        expect_packed_error(fails, "convert_to_bytes (narrow)", values, np, r, clean(&d));
        let mut d = fresh();
        let r = vcvt::convert_to_bytes_with::<W, F4E2M1x2>(&src, &mut d, OPTIONS[4]);
        expect_packed_error(
            fails,
            "convert_to_bytes_with (narrow)",
            values,
            np,
            r,
            clean(&d),
        );
        let mut d = fresh();
        let r = vcvt::convert_from_bytes::<W, F4E2M1x2>(raw_src, packed_mut(&mut d));
        expect_packed_error(
            fails,
            "convert_from_bytes (narrow)",
            values,
            np,
            r,
            clean(&d),
        );
        let mut d = fresh();
        let r =
            vcvt::convert_from_bytes_with::<W, F4E2M1x2>(raw_src, packed_mut(&mut d), OPTIONS[3]);
        expect_packed_error(
            fails,
            "convert_from_bytes_with (narrow)",
            values,
            np,
            r,
            clean(&d),
        );

        let mut d = fresh();
        expect_packed_panic(
            fails,
            "convert_slice (narrow)",
            values,
            np,
            &mut d,
            |d| vcvt::convert_slice(&src, packed_mut(d)),
            |d| clean(d),
        );
        let mut d = fresh();
        expect_packed_panic(
            fails,
            "convert_slice_with (narrow)",
            values,
            np,
            &mut d,
            |d| vcvt::convert_slice_with(&src, packed_mut(d), OPTIONS[2]),
            |d| clean(d),
        );
        let mut d = fresh();
        expect_packed_panic(
            fails,
            "convert_slice_uninit (narrow)",
            values,
            np,
            &mut d,
            |d| {
                vcvt::convert_slice_uninit(&src, as_uninit(packed_mut(d)));
            },
            |d| clean(d),
        );
        let mut d = fresh();
        expect_packed_panic(
            fails,
            "convert_slice_uninit_with (narrow)",
            values,
            np,
            &mut d,
            |d| {
                vcvt::convert_slice_uninit_with(&src, as_uninit(packed_mut(d)), OPTIONS[4]);
            },
            |d| clean(d),
        );

        // Widening: `np` packed bytes into `values` wide values.
        let psrc = vec![0x22u8; np]; // 1.0, 1.0
        let fresh_w = || vec![canary_w; values];
        let clean_w = |d: &[W]| d.iter().all(|x| x.bits() == canary_w.bits());
        let fresh_raw = || vec![0xA5u8; values * W::SIZE];
        let clean_raw = |d: &[u8]| d.iter().all(|&b| b == 0xA5);

        let mut d = fresh_w();
        let r = vcvt::try_convert_slice(packed(&psrc), &mut d);
        expect_packed_error(
            fails,
            "try_convert_slice (widen)",
            values,
            np,
            r,
            clean_w(&d),
        );
        for o in OPTIONS {
            let mut d = fresh_w();
            let r = vcvt::try_convert_slice_with(packed(&psrc), &mut d, o);
            expect_packed_error(
                fails,
                "try_convert_slice_with (widen)",
                values,
                np,
                r,
                clean_w(&d),
            );
        }
        for &b in backends {
            let mut d = fresh_w();
            let r = vcvt::convert_slice_on(b, packed(&psrc), &mut d, Options::new());
            expect_packed_error(
                fails,
                &format!("convert_slice_on({b}) (widen)"),
                values,
                np,
                r,
                clean_w(&d),
            );
        }
        let mut d = fresh_w();
        let r = vcvt::convert_from_bytes::<F4E2M1x2, W>(&psrc, &mut d);
        expect_packed_error(
            fails,
            "convert_from_bytes (widen)",
            values,
            np,
            r,
            clean_w(&d),
        );
        let mut d = fresh_w();
        let r = vcvt::convert_from_bytes_with::<F4E2M1x2, W>(&psrc, &mut d, OPTIONS[1]);
        expect_packed_error(
            fails,
            "convert_from_bytes_with (widen)",
            values,
            np,
            r,
            clean_w(&d),
        );
        let mut d = fresh_raw();
        let r = vcvt::convert_to_bytes::<F4E2M1x2, W>(packed(&psrc), &mut d);
        expect_packed_error(
            fails,
            "convert_to_bytes (widen)",
            values,
            np,
            r,
            clean_raw(&d),
        );
        let mut d = fresh_raw();
        let r = vcvt::convert_to_bytes_with::<F4E2M1x2, W>(packed(&psrc), &mut d, OPTIONS[5]);
        expect_packed_error(
            fails,
            "convert_to_bytes_with (widen)",
            values,
            np,
            r,
            clean_raw(&d),
        );

        let mut d = fresh_w();
        expect_packed_panic(
            fails,
            "convert_slice (widen)",
            values,
            np,
            &mut d,
            |d| vcvt::convert_slice(packed(&psrc), d),
            |d| clean_w(d),
        );
        let mut d = fresh_w();
        expect_packed_panic(
            fails,
            "convert_slice_with (widen)",
            values,
            np,
            &mut d,
            |d| vcvt::convert_slice_with(packed(&psrc), d, OPTIONS[6]),
            |d| clean_w(d),
        );
        let mut d = fresh_w();
        expect_packed_panic(
            fails,
            "convert_slice_uninit (widen)",
            values,
            np,
            &mut d,
            |d| {
                vcvt::convert_slice_uninit(packed(&psrc), as_uninit(d));
            },
            |d| clean_w(d),
        );
        let mut d = fresh_w();
        expect_packed_panic(
            fails,
            "convert_slice_uninit_with (widen)",
            values,
            np,
            &mut d,
            |d| {
                vcvt::convert_slice_uninit_with(packed(&psrc), as_uninit(d), OPTIONS[0]);
            },
            |d| clean_w(d),
        );
    }

    // Byte slices that are not a whole number of wide values: `ByteLength`, nothing written.
    for values in [0usize, 1, 2, 3, 8, 33] {
        for r in 1..W::SIZE {
            let nbytes = values * W::SIZE + r;
            let raw = vec![0u8; nbytes];
            for np in [values.div_ceil(2), (values + 1).div_ceil(2)] {
                let mut d = vec![0xA5u8; np];
                let got = vcvt::convert_from_bytes::<W, F4E2M1x2>(&raw, packed_mut(&mut d));
                let want = Error::ByteLength {
                    bytes: nbytes,
                    element_size: W::SIZE,
                };
                fails.checks += 1;
                if got != Err(want) || d.iter().any(|&b| b != 0xA5) {
                    fails.fail("from_bytes ByteLength", || {
                        format!("convert_from_bytes::<{}, F4E2M1x2>({nbytes} bytes, {np} packed): expected Err({want:?}) and nothing written, got {got:?}, dst {d:02x?}", W::NAME)
                    });
                }
                let psrc = vec![0x33u8; np];
                let mut out = vec![0xA5u8; nbytes];
                let got = vcvt::convert_to_bytes::<F4E2M1x2, W>(packed(&psrc), &mut out);
                fails.checks += 1;
                if got != Err(want) || out.iter().any(|&b| b != 0xA5) {
                    fails.fail("to_bytes ByteLength", || {
                        format!("convert_to_bytes::<F4E2M1x2, {}>({np} packed, {nbytes} bytes): expected Err({want:?}) and nothing written, got {got:?}", W::NAME)
                    });
                }
            }
        }
    }

    // `convert_to_vec` on N values returns N.div_ceil(2) bytes.
    for n in (0..=40).chain([255, 256, 301, 1001]) {
        let src: Vec<W> = (0..n).map(|i| W::of_code((i % 16) as u8)).collect();
        let mut expected = Vec::new();
        pack_codes(
            &(0..n).map(|i| (i % 16) as u8).collect::<Vec<_>>(),
            &mut expected,
        );
        for with in [false, true] {
            let v: Vec<F4E2M1x2> = if with {
                vcvt::convert_to_vec_with(&src, OPTIONS[n % OPTIONS.len()])
            } else {
                vcvt::convert_to_vec(&src)
            };
            fails.checks += 1;
            let got: &[u8] = bytemuck::cast_slice(&v);
            if got != expected {
                fails.fail("to_vec", || {
                    format!("convert_to_vec{} on {n} {} values: expected {} bytes {expected:02x?}, got {} bytes {got:02x?}", if with { "_with" } else { "" }, W::NAME, expected.len(), got.len())
                });
            }
        }
    }
}

#[test]
fn length_errors_are_reported_and_write_nothing() {
    let start = Instant::now();
    quiet_expected_panics();
    let backends = common::backends(LENGTH_TEST);
    if cfg!(panic = "abort") {
        println!(
            "SKIPPED: {LENGTH_TEST}: the panics of convert_slice(_with) and convert_slice_uninit(_with) (panic=abort: no catch_unwind)"
        );
    }
    let combos = bad_combos();
    let mut fails = Fails::default();
    length_errors::<f32>(&backends, &mut fails, &combos);
    length_errors::<f64>(&backends, &mut fails, &combos);
    fails.finish(
        LENGTH_TEST,
        &format!(
            "{} bad (values, packed) combinations, f32 and f64, both directions, try_convert_slice(_with), convert_slice_on [{}], convert_from_bytes(_with), convert_to_bytes(_with) return PackedLength, convert_slice(_with) and convert_slice_uninit(_with) panic; ByteLength for partial wide byte slices; convert_to_vec lengths",
            combos.len(),
            common::names(&backends)
        ),
        start,
    );
}

// ------------------------------------------------------------------------------------------
// 4. Round trip
// ------------------------------------------------------------------------------------------

fn round_trip<W: Wide>(backends: &[Backend], fails: &mut Fails)
where
    F4E2M1x2: ConvertTo<W>,
{
    let bytes: Vec<u8> = (0..=255).collect();
    let mut runs: Vec<(String, Option<Backend>)> = backends
        .iter()
        .map(|&b| (format!("convert_slice_on({b})"), Some(b)))
        .collect();
    runs.push(("convert_slice".into(), None));
    for (what, b) in runs {
        for values in [512usize, 511] {
            let nb = values.div_ceil(2);
            let mut wide = vec![W::zeroed(); values];
            let mut back = vec![0xA5u8; nb];
            let (r1, r2) = match b {
                Some(b) => (
                    vcvt::convert_slice_on(b, packed(&bytes[..nb]), &mut wide, Options::new()),
                    vcvt::convert_slice_on(b, &wide, packed_mut(&mut back), Options::new()),
                ),
                None => {
                    vcvt::convert_slice(packed(&bytes[..nb]), &mut wide);
                    vcvt::convert_slice(&wide, packed_mut(&mut back));
                    (Ok(()), Ok(()))
                }
            };
            fails.checks += 1;
            if r1.is_err() || r2.is_err() {
                fails.fail(&what, || {
                    format!("{what}: {} {values} values: {r1:?} {r2:?}", W::NAME)
                });
                continue;
            }
            for (i, (&o, &g)) in bytes[..nb].iter().zip(&back).enumerate() {
                let want = if values % 2 == 1 && i == nb - 1 {
                    o & 0x0F
                } else {
                    o
                };
                if g != want {
                    fails.fail(&what, || {
                        format!("{what}: byte {o:#04x} -> {} -> {g:#04x}, expected {want:#04x} ({values} values)", W::NAME)
                    });
                }
            }
        }
    }
}

#[test]
fn every_byte_round_trips_exactly() {
    let test = "every_byte_round_trips_exactly";
    let start = Instant::now();
    let backends = common::backends(test);
    let mut fails = Fails::default();
    round_trip::<f32>(&backends, &mut fails);
    round_trip::<f64>(&backends, &mut fails);
    fails.finish(
        test,
        &format!(
            "256 bytes -> 512 (and 511) f32/f64 -> bytes, -0 kept, backends [{}] + convert_slice",
            common::names(&backends)
        ),
        start,
    );
}

// ------------------------------------------------------------------------------------------
// 5. Random and special inputs
// ------------------------------------------------------------------------------------------

fn random_inputs<W: Wide>(backends: &[Backend], fails: &mut Fails, seed: u64) -> usize {
    let specials = W::specials();
    let mut rng = Rng::new(seed);
    let mut src = specials.clone();
    // Each special next to every code's neighbour pattern: shuffle a few copies in.
    for _ in 0..4 {
        let mut s = specials.clone();
        for i in (1..s.len()).rev() {
            s.swap(i, rng.below(i as u64 + 1) as usize);
        }
        src.extend(s);
    }
    while src.len() < (1 << 20) - 1 {
        src.push(W::random(&mut rng, &specials));
    }
    let codes: Vec<u8> = src.iter().map(|x| x.expect_code()).collect();
    let mut expected = Vec::new();
    pack_codes(&codes, &mut expected);
    let n = expected.len();
    let check = |fails: &mut Fails, what: &str, got: &[u8]| {
        fails.checks += src.len() as u64;
        for (j, (&e, &g)) in expected.iter().zip(got).enumerate() {
            if e != g {
                for k in 0..2 {
                    let i = 2 * j + k;
                    let (ge, gg) = ((e >> (4 * k)) & 0xF, (g >> (4 * k)) & 0xF);
                    if ge != gg {
                        let x = src.get(i).copied();
                        fails.fail(what, || {
                            format!("{what}: {} source {:#x} ({x:?}), value {i}: expected code {ge:#x} ({}), got {gg:#x} ({})", W::NAME, x.map_or(0, |x| x.bits()), value_f64(ge), value_f64(gg))
                        });
                    }
                }
            }
        }
    };
    for &b in backends {
        for o in OPTIONS {
            let mut d = vec![0u8; n];
            match vcvt::convert_slice_on(b, &src, packed_mut(&mut d), o) {
                Ok(()) => check(fails, &format!("convert_slice_on({b}, {o:?})"), &d),
                Err(e) => fails.fail("on", || format!("convert_slice_on({b}): {e:?}")),
            }
        }
    }
    let mut d = vec![0u8; n];
    vcvt::convert_slice(&src, packed_mut(&mut d));
    check(fails, "convert_slice", &d);
    // Specials one at a time (a lone value, odd length, through the default entry point).
    for (i, &x) in specials.iter().enumerate() {
        let mut d = [0xFFu8];
        vcvt::convert_slice(&[x], packed_mut(&mut d));
        fails.checks += 1;
        if d[0] != codes[i] {
            fails.fail("single", || {
                format!(
                    "convert_slice single {} {:#x} ({x:?}): expected byte {:#04x}, got {:#04x}",
                    W::NAME,
                    x.bits(),
                    codes[i],
                    d[0]
                )
            });
        }
    }
    src.len()
}

#[test]
fn random_and_special_inputs_match_the_oracle() {
    let test = "random_and_special_inputs_match_the_oracle";
    let start = Instant::now();
    let backends = common::backends(test);
    let mut fails = Fails::default();
    let n32 = random_inputs::<f32>(&backends, &mut fails, 0xF4_0007);
    let n64 = random_inputs::<f64>(&backends, &mut fails, 0xF4_0008);
    fails.finish(
        test,
        &format!(
            "{n32} f32 and {n64} f64 inputs ({} / {} specials: ties, neighbours, zeros, subnormals, Inf, NaN payloads of both signs; the rest random), backends [{}] x {} option sets + convert_slice",
            f32::specials().len(),
            f64::specials().len(),
            common::names(&backends),
            OPTIONS.len()
        ),
        start,
    );
}
