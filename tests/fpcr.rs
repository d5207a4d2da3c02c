//! Results must not depend on FPCR, the aarch64 floating-point control register: its rounding
//! mode (`RMode`), flush-to-zero (`FZ`, `FZ16`, and FEAT_AFP's `FIZ`/`AH`/`NEP`), default NaN
//! (`DN`) and alternative half precision (`AHP`, which turns binary16 Inf/NaN into ordinary
//! numbers). The aarch64 equivalent of `tests/mxcsr.rs`.
//!
//! Every pair of the slice API (f32/f64 ↔ every format, every narrow ↔ narrow pair, F16 ↔
//! BF16) and every fused `round_trip` runs on each NEON backend under six non-default FPCR
//! values, both overflow policies and every NaN policy, and is compared with the Scalar
//! backend (integer code, checked against the independent oracle by the other tests) under
//! the default FPCR. Inputs: for both signs and every f32 exponent field, mantissas at,
//! next to and between the rounding ties of every precision (so ties of every format, in
//! every binade, subnormals, Inf and NaN payloads included), those values as f64 with their
//! f64 neighbours, random f64 of every exponent, and every code of each narrow format. The
//! lengths are not multiples of the vector width, so the partial steps run too.
//!
//! FPCR is set and restored inside one `asm!` block that calls the conversion, so no Rust
//! code outside that call runs under a non-default floating-point environment; the block
//! also checks that the conversion gives the caller's FPCR back.

#![cfg(target_arch = "aarch64")]

mod common;

use bytemuck::Pod;
use common::{MODES, NAN_POLICIES, Report, Rng, backends, names};
use vcvt::{
    BF16, Backend, ConvertTo, Element, F4E2M1, F4E2M1x2, F6E2M3, F6E3M2, F8E4M3, F8E4M3FNUZ,
    F8E5M2, F8E5M2FNUZ, F8E8M0, F16, Options,
};

/// FPCR bits.
const AHP: u64 = 1 << 26;
const DN: u64 = 1 << 25;
const FZ: u64 = 1 << 24;
const RP: u64 = 1 << 22;
const RM: u64 = 2 << 22;
const RZ: u64 = 3 << 22;
const FZ16: u64 = 1 << 19;
/// FEAT_AFP (read as 0 where the CPU lacks it).
const NEP: u64 = 1 << 2;
const AH: u64 = 1 << 1;
const FIZ: u64 = 1;

/// The settings the conversions run under.
const SETTINGS: [u64; 6] = [
    RP | FZ,
    RM | FZ | DN,
    RZ,
    AHP | DN | FZ16,
    RZ | FZ | DN | AHP | FZ16,
    RM | FZ | FIZ | AH | NEP,
];

extern "C" fn call_closure(ctx: *mut u8) {
    // SAFETY: `with_fpcr` passes a pointer to a live `&mut dyn FnMut()` and nothing else uses
    // it during the call.
    let f = unsafe { &mut *ctx.cast::<&mut dyn FnMut()>() };
    f();
}

/// Runs `f` with FPCR = `fpcr`, restores it, and checks that `f` left FPCR as it found it.
/// `f` must not panic.
fn with_fpcr(fpcr: u64, mut f: impl FnMut()) {
    let mut dynf: &mut dyn FnMut() = &mut f;
    let (before, after): (u64, u64);
    // SAFETY: the block saves FPCR in x20, loads `fpcr`, calls `call_closure` (a C-ABI
    // function; `clobber_abi("C")` declares every register the call may change), reads FPCR
    // as the call found it (x23) and left it (x22), and restores FPCR before it ends. x20-x23
    // are callee-saved, so x20 still holds the saved FPCR after the call.
    unsafe {
        std::arch::asm!(
            "mrs x20, fpcr",
            "msr fpcr, x21",
            "mrs x23, fpcr",
            "blr {f}",
            "mrs x22, fpcr",
            "msr fpcr, x20",
            f = in(reg) call_closure as extern "C" fn(*mut u8),
            in("x0") (&raw mut dynf).cast::<u8>(),
            in("x21") fpcr,
            out("x20") _,
            out("x22") after,
            out("x23") before,
            clobber_abi("C"),
        );
    }
    assert_eq!(after, before, "FPCR {fpcr:#x}: changed by the call");
}

/// The inputs, as little-endian bytes.
struct Inputs {
    f32: Vec<u8>,
    f64: Vec<u8>,
    u8: Vec<u8>,
    u16: Vec<u8>,
}

fn inputs() -> Inputs {
    let mut rng = Rng::new(0xF9C2_0001);
    let mut mants = vec![
        0u32, 1, 2, 3, 0x40_0000, 0x40_0001, 0x3F_FFFF, 0x7F_FFFE, 0x7F_FFFF,
    ];
    // Ties of a rounding to 23 - s - 1 fraction bits (bit s set, the ones below clear), with
    // an even and an odd kept part, and their neighbours.
    for s in 0..23 {
        let tie = 1u32 << s;
        for _ in 0..2 {
            let hi = rng.next_u64() as u32 & 0x7F_FFFF & !((tie << 1) - 1);
            for m in [hi | tie, (hi | tie) - 1, (hi | tie) + 1, hi] {
                mants.push(m & 0x7F_FFFF);
            }
        }
    }
    let mut f32s = Vec::new();
    for e in 0..256u32 {
        for sign in [0u32, 1] {
            for &m in &mants {
                f32s.push((sign << 31) | (e << 23) | m);
            }
            for _ in 0..8 {
                f32s.push((sign << 31) | (e << 23) | (rng.next_u64() as u32 & 0x7F_FFFF));
            }
        }
    }
    // An odd count: the last step is partial.
    f32s.push(0x3F80_0001);
    let mut f64s = Vec::new();
    for (i, &b) in f32s.iter().enumerate() {
        let d = f64::from(f32::from_bits(b)).to_bits();
        f64s.push(d);
        if i % 2 == 0 {
            f64s.push(d.wrapping_add(1));
            f64s.push(d.wrapping_sub(1));
        }
    }
    for _ in 0..20_000 {
        f64s.push(rng.next_u64());
    }
    // f64 subnormals and values around f32's subnormal and overflow thresholds.
    for k in [
        0u64,
        1,
        2,
        0x000F_FFFF_FFFF_FFFF,
        0x3690_0000_0000_0000,
        0x47EF_FFFF_F000_0000,
    ] {
        for d in [k, k + 1, k | (1 << 63)] {
            f64s.push(d);
        }
    }
    let mut u8s: Vec<u8> = Vec::new();
    for _ in 0..4 {
        u8s.extend(0..=255u8);
    }
    u8s.extend([0x7F, 0x80, 0xFF]);
    let mut u16s: Vec<u8> = (0..=u16::MAX).flat_map(|c| c.to_le_bytes()).collect();
    u16s.extend(0x7E01u16.to_le_bytes());
    Inputs {
        f32: f32s.iter().flat_map(|b| b.to_le_bytes()).collect(),
        f64: f64s.iter().flat_map(|b| b.to_le_bytes()).collect(),
        u8: u8s,
        u16: u16s,
    }
}

/// Element types with their inputs' bytes and the number of values in those bytes.
trait Input: Element + Pod {
    fn bytes(i: &Inputs) -> &[u8];
    /// Values in `n` elements.
    fn values(n: usize) -> usize {
        n
    }
    /// Elements holding `v` values.
    fn elements(v: usize) -> usize {
        v
    }
}
impl Input for f32 {
    fn bytes(i: &Inputs) -> &[u8] {
        &i.f32
    }
}
impl Input for f64 {
    fn bytes(i: &Inputs) -> &[u8] {
        &i.f64
    }
}
macro_rules! input {
    ($field:ident: $($t:ty),*) => {$(
        impl Input for $t {
            fn bytes(i: &Inputs) -> &[u8] {
                &i.$field
            }
        }
    )*};
}
input!(u16: F16, BF16);
input!(u8: F8E4M3, F8E5M2, F8E4M3FNUZ, F8E5M2FNUZ, F6E2M3, F6E3M2, F4E2M1, F8E8M0);
impl Input for F4E2M1x2 {
    fn bytes(i: &Inputs) -> &[u8] {
        &i.u8
    }
    fn values(n: usize) -> usize {
        2 * n
    }
    fn elements(v: usize) -> usize {
        v.div_ceil(2)
    }
}

/// Elements from little-endian bytes.
fn from_bytes<T: Pod>(b: &[u8]) -> Vec<T> {
    b.chunks_exact(size_of::<T>())
        .map(bytemuck::pod_read_unaligned)
        .collect()
}

/// Every option combination.
fn options() -> Vec<Options> {
    let mut v = Vec::new();
    for mode in MODES {
        for nan in NAN_POLICIES {
            v.push(Options::new().overflow(mode).nan(nan));
        }
    }
    v
}

/// `S -> D` on every NEON backend under every setting against Scalar under the default FPCR.
fn pair<S: Input + ConvertTo<D>, D: Input>(
    name: &str,
    inputs: &Inputs,
    neon: &[Backend],
    r: &mut Report,
) {
    let src: Vec<S> = from_bytes(S::bytes(inputs));
    let mut values = S::values(src.len());
    // From packed FP4: an odd value count, from a whole source byte count.
    if S::values(1) == 2 {
        values -= 1;
    }
    let src = &src[..S::elements(values)];
    let dst_len = D::elements(values);
    for o in options() {
        let mut want = vec![D::zeroed(); dst_len];
        vcvt::convert_slice_on(Backend::Scalar, src, &mut want, o).unwrap();
        for &b in neon {
            for fpcr in SETTINGS {
                let mut got = vec![D::zeroed(); dst_len];
                let mut res = Ok(());
                with_fpcr(fpcr, || res = vcvt::convert_slice_on(b, src, &mut got, o));
                res.unwrap();
                // Reported input: the index of the (first) value in the mismatching element.
                r.compare(
                    || format!("{name} on {b}, FPCR {fpcr:#x}, {o:?} (input: value index)"),
                    &want,
                    &got,
                    |i| D::values(i) as u64,
                );
            }
        }
    }
}

/// `round_trip` of f32 through `T` on every NEON backend under every setting against Scalar.
fn round_trip<T: Element + ConvertTo<f32>>(
    name: &str,
    inputs: &Inputs,
    neon: &[Backend],
    r: &mut Report,
) where
    f32: ConvertTo<T>,
{
    let src: Vec<f32> = from_bytes(&inputs.f32);
    for o in options() {
        let mut want = src.clone();
        vcvt::round_trip_on::<T, f32>(Backend::Scalar, &mut want, o).unwrap();
        for &b in neon {
            for fpcr in SETTINGS {
                let mut got = src.clone();
                let mut res = Ok(());
                with_fpcr(fpcr, || res = vcvt::round_trip_on::<T, f32>(b, &mut got, o));
                res.unwrap();
                r.compare(
                    || format!("round_trip {name} on {b}, FPCR {fpcr:#x}, {o:?}"),
                    bytemuck::cast_slice::<f32, u32>(&want),
                    bytemuck::cast_slice::<f32, u32>(&got),
                    |i| u64::from(src[i].to_bits()),
                );
            }
        }
    }
}

#[test]
fn every_pair_ignores_fpcr() {
    let neon: Vec<Backend> = backends("fpcr")
        .into_iter()
        .filter(|b| b.name().starts_with("neon"))
        .collect();
    if cfg!(target_endian = "little") {
        assert!(
            !neon.is_empty(),
            "no NEON backend on a little-endian aarch64 CPU"
        );
    }
    let inputs = inputs();
    let mut r = Report::default();
    macro_rules! p {
        ($s:ty, $d:ty) => {
            pair::<$s, $d>(
                concat!(stringify!($s), " -> ", stringify!($d)),
                &inputs,
                &neon,
                &mut r,
            )
        };
    }
    macro_rules! wide {
        ($($t:ty),*) => {$(
            p!(f32, $t);
            p!(f64, $t);
            p!($t, f32);
            p!($t, f64);
        )*};
    }
    macro_rules! leaf {
        ($($t:ty),*) => {$(
            p!($t, F16);
            p!($t, BF16);
            p!(F16, $t);
            p!(BF16, $t);
        )*};
    }
    macro_rules! rt {
        ($($t:ty),*) => {$(
            round_trip::<$t>(stringify!($t), &inputs, &neon, &mut r);
        )*};
    }
    wide!(
        F16, BF16, F8E4M3, F8E5M2, F8E4M3FNUZ, F8E5M2FNUZ, F6E2M3, F6E3M2, F4E2M1, F4E2M1x2, F8E8M0
    );
    p!(F16, BF16);
    p!(BF16, F16);
    leaf!(
        F8E4M3, F8E5M2, F8E4M3FNUZ, F8E5M2FNUZ, F6E2M3, F6E3M2, F4E2M1, F4E2M1x2, F8E8M0
    );
    rt!(
        F16, BF16, F8E4M3, F8E5M2, F8E4M3FNUZ, F8E5M2FNUZ, F6E2M3, F6E3M2, F4E2M1, F8E8M0
    );
    r.finish(
        "every_pair_ignores_fpcr",
        &format!("{} FPCR settings on {}", SETTINGS.len(), names(&neon)),
    );
}
