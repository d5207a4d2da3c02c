//! The NVFP4 specification: the profiles' scale rules and the scalar quantization and
//! dequantization of one 16-value block. The API (`src/block/nvfp4.rs`) runs these for
//! every block no SIMD kernel serves, the SIMD kernels (`src/simd/generic/block/nvfp4.rs`)
//! fall back to them for the blocks they leave, and the tests hold every kernel to them bit
//! for bit.

use core::mem::MaybeUninit;

use crate::block::spec::mx::{MLX_FP8, mlx_fp4_argmin, mlx_fp8_nan};
use crate::block::spec::{BlockDest, BlockSource, DestKind, amax_bits, put, round_to, soft};
use crate::codec;
use crate::options::Policy;
use crate::{F4E2M1, F8E4M3, NanPolicy, Overflow};

/// Values per NVFP4 block.
pub(crate) const BLOCK: usize = 16;

/// Values and bytes of a ggml `block_nvfp4`.
pub(crate) const GGML_VALUES: usize = 64;
pub(crate) const GGML_BYTES: usize = 36;

const SAT: Policy = Policy {
    overflow: Overflow::Saturate,
    nan: NanPolicy::Preserve,
};

/// `6.0`, `2688.0 = 6 · 448` and `1.0` as f32 bits.
pub(crate) const SIX: u32 = 0x40C0_0000;
pub(crate) const SIX_448: u32 = 0x4528_0000;
pub(crate) const ONE: u32 = 0x3F80_0000;

/// How NVFP4 scales are computed and applied.
///
/// | profile | tensor scale `g` | block scale `s8` (E4M3) | elements | dequantize |
/// |---|---|---|---|---|
/// | `ModelOpt` | `weight_scale_2 = amax(W) / 2688` | `e4m3(amax_b / (6·g))`, 0 → 1.0 | `fp4(x / (f32(s8)·g))` | `fp4 · (f32(s8)·g)` |
/// | `Mlx` | MLX's `global_scale` (none = 2688) | `e4m3(W(amax_b / 6) · (2688 / g))` | first-minimum fp4 of `W(x / s8) · (2688/g)` | `fp4 · O(s8) · (g / 2688)` |
/// | `Ggml` | none (pass 1.0) | UE4M3 | as llama.cpp | `ue4m3(s8) · e2m1` |
///
/// Every operation is an f32 operation in the order shown (each product and quotient
/// rounded to f32; `W(·)` rounds to the source type, `O(·)` to the destination type); E4M3
/// and FP4 roundings are to nearest even and saturate unless said otherwise.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NvProfile {
    /// NVIDIA ModelOpt checkpoints (`NVFP4QTensor`): `weight` (uint8 `[out, in/2]`),
    /// `weight_scale` (`float8_e4m3fn [out, in/16]`), `weight_scale_2` (f32 scalar). As in
    /// ModelOpt, a block scale that rounds to E4M3 zero divides by zero (its elements
    /// become ±6, or +6 for a zero element), an all-zero tensor gets a NaN block scale
    /// (`0x7F`) with every element +6 (quantize such tensors with a given tensor scale),
    /// `−0.0` encodes `+0` and a NaN `+6` (its `_cast_fp4` takes the sign from `x < 0`).
    #[default]
    ModelOpt,
    /// MLX 0.32.4's `mx.quantize(w, 16, 4, mode="nvfp4", global_scale=g)` and
    /// `mx.dequantize` on the CPU: block scale `q = amax/6` rounded to the source type,
    /// times `2688 / g`, to E4M3 saturating (NaN → 448); elements `w / s8` rounded to the
    /// source type, times `2688 / g` in f32, then the first minimum of `|wq − lut|` (ties
    /// toward zero, `−0` → `+0`, zero block scale → code 0). Without `global_scale`, MLX
    /// computes exactly what `g = 2688` gives ([`Nvfp4::identity_tensor_scale`](crate::block::Nvfp4::identity_tensor_scale)).
    /// Dequantization: `lut · (O(s8) · f32(g / 2688))`; an E4M3 NaN scale gives MLX's NaN
    /// bits. (MLX itself returns f32 when a `global_scale` is given; vcvt rounds that f32 to
    /// the requested type.) MLX needs `cols` to be a multiple of 32; vcvt does not.
    Mlx,
    /// llama.cpp's `block_nvfp4` rules, bit-exact with its C `quantize_row_nvfp4_ref` /
    /// `dequantize_row_nvfp4` (ggml d99724f2) and gguf 0.19's NVFP4 dequantization:
    /// * no tensor scale (pass 1.0; for another value, the source is divided by it first
    ///   and dequantized values are multiplied by it, each product rounded once);
    /// * sub-block scale `ue4m3(f32(amax / 6))`, where `amax` skips NaN lanes, the UE4M3
    ///   rounding is half-up on the dropped bits, every value ≥ 248 gives `0x7E` (448),
    ///   subnormal scales do not carry into `0x08`, and `amax / 6 < 2^-10 − 2^-34` gives 0;
    /// * each element the first minimum of `|kvalues[k] · d − x|` in f32 (`kvalues` = E2M1
    ///   doubled, `d` the UE4M3 value halved): ties toward zero, `−0`, small negatives, NaN
    ///   and ±Inf lanes give code 0, and huge lanes can too;
    /// * UE4M3 decoding: bit 7 ignored, `0x00` and `0x7F` are 0, exponent 15 is finite
    ///   (`0xFF` is 480); code 8 (`−0`) gives `+0`.
    Ggml,
}

/// The per-tensor constants of a quantization.
pub(crate) struct Ctx {
    profile: NvProfile,
    /// The tensor scale (f32 bits).
    pub(crate) g: u32,
    /// ModelOpt: `6 · g`; Mlx: `2688 / g`.
    pub(crate) k: u32,
}

impl Ctx {
    pub(crate) fn new(profile: NvProfile, g: u32) -> Ctx {
        let k = match profile {
            NvProfile::Mlx => soft::div(SIX_448, g),
            _ => soft::mul(SIX, g),
        };
        Ctx { profile, g, k }
    }

    /// The scale byte and the codes of one block.
    pub(crate) fn quantize_block<S: BlockSource>(&self, blk: &[S]) -> (u8, [u8; BLOCK]) {
        let mut codes = [0u8; BLOCK];
        let amax = amax_bits(blk);
        match self.profile {
            NvProfile::Mlx => {
                let w = S::KIND;
                let q = round_to(w, soft::div(amax, SIX));
                let s8 = codec::narrow_f32::<F8E4M3>(soft::mul(q, self.k), MLX_FP8);
                let d = codec::widen_f32::<F8E4M3>(s8);
                for (c, x) in codes.iter_mut().zip(blk) {
                    let wq = soft::mul(round_to(w, soft::div(x.f32_bits(), d)), self.k);
                    *c = mlx_fp4_argmin(DestKind::F32, wq);
                }
                (s8 as u8, codes)
            }
            NvProfile::Ggml => ggml_quantize_block(blk, self.g),
            NvProfile::ModelOpt => {
                let mut q = soft::div(amax, self.k);
                if q & 0x7FFF_FFFF == 0 {
                    q = ONE;
                }
                let s8 = codec::narrow_f32::<F8E4M3>(q, SAT);
                let denom = soft::mul(codec::widen_f32::<F8E4M3>(s8), self.g);
                for (c, x) in codes.iter_mut().zip(blk) {
                    let y = soft::div(x.f32_bits(), denom);
                    // ModelOpt's `_cast_fp4` takes the sign from `y < 0`: `−0.0` encodes
                    // `+0`, and a NaN (sorted last by its `searchsorted`) `+6`.
                    *c = if y == 0x8000_0000 {
                        0
                    } else if y & 0x7FFF_FFFF > 0x7F80_0000 {
                        0x7
                    } else {
                        codec::narrow_f32::<F4E2M1>(y, SAT) as u8
                    };
                }
                (s8 as u8, codes)
            }
        }
    }
}

/// Dequantizes one block of `out.len()` values.
pub(crate) fn dequantize_block<D: BlockDest>(
    profile: NvProfile,
    s8: u8,
    codes: &[u8; BLOCK],
    g: u32,
    out: &mut [MaybeUninit<D>],
) {
    let fp4 = |c: u8| codec::widen_f32::<F4E2M1>(c as u32);
    match profile {
        NvProfile::ModelOpt => {
            let f = soft::mul(codec::widen_f32::<F8E4M3>(s8 as u32), g);
            for (slot, &c) in out.iter_mut().zip(codes) {
                put(slot, D::from_f32_bits(soft::mul(fp4(c), f)));
            }
        }
        NvProfile::Mlx => {
            if s8 & 0x7F == 0x7F {
                let nan = D::from_raw(mlx_fp8_nan::<D>(s8));
                out.iter_mut().for_each(|slot| put(slot, nan));
                return;
            }
            let inv = soft::div(g, SIX_448);
            let scale = soft::mul(codec::widen_f32::<F8E4M3>(s8 as u32), inv);
            for (slot, &c) in out.iter_mut().zip(codes) {
                put(slot, D::from_f32_bits(soft::mul(fp4(c), scale)));
            }
        }
        NvProfile::Ggml => {
            // ue4m3 · e2m1 is exact in f32 (gguf computes (ue4m3 / 2) · (2 · e2m1)), and the
            // tensor scale multiplies the exact value with one rounding.
            let d = soft::wide(ggml_ue4m3(s8)) * soft::wide(g);
            for (slot, &c) in out.iter_mut().zip(codes) {
                // Code 8 (−0) is +0 in ggml's integer table.
                let e = if c == 8 { 0.0 } else { soft::wide(fp4(c)) };
                put(slot, D::from_wide(e * d));
            }
        }
    }
}

/// llama.cpp's `quantize_row_nvfp4_ref` for one 16-value sub-block (see
/// [`NvProfile::Ggml`]); `g` divides the source first unless it is 1.0.
pub(crate) fn ggml_quantize_block<S: BlockSource>(blk: &[S], g: u32) -> (u8, [u8; BLOCK]) {
    let x = |v: &S| {
        let b = v.f32_bits();
        if g == ONE { b } else { soft::div(b, g) }
    };
    // `if (amax < fabsf(x)) amax = fabsf(x)`: a NaN lane compares false and is skipped.
    let mut amax = 0u32;
    for v in blk {
        let a = x(v) & 0x7FFF_FFFF;
        if a <= 0x7F80_0000 && a > amax {
            amax = a;
        }
    }
    let ue = ggml_fp32_to_ue4m3(soft::div(amax, SIX));
    // d = ue4m3 / 2; kvalues = E2M1 doubled: kvalues[k] · d = e2m1(k) · ue4m3 exactly.
    let d = soft::mul(ggml_ue4m3(ue), 0x3F00_0000);
    let mut codes = [0u8; BLOCK];
    for (c, v) in codes.iter_mut().zip(blk) {
        let xv = x(v);
        let err = |k: u8| {
            let kv = soft::mul(codec::widen_f32::<F4E2M1>(k as u32), 0x4000_0000);
            let kv = if k == 8 { 0 } else { kv };
            soft::sub(soft::mul(kv, d), xv) & 0x7FFF_FFFF
        };
        // `best = 0; for k in 1..16: if err(k) < err(best) best = k` (a NaN never wins).
        let (mut best, mut best_err) = (0u8, err(0));
        for k in 1..16u8 {
            let e = err(k);
            if e <= 0x7F80_0000 && best_err <= 0x7F80_0000 && e < best_err {
                best = k;
                best_err = e;
            }
        }
        *c = best;
    }
    (ue, codes)
}

/// ggml's `ggml_fp32_to_ue4m3` (f32 bits in, the UE4M3 byte out).
pub(crate) fn ggml_fp32_to_ue4m3(q: u32) -> u8 {
    // `!(x > 0)`: zero, negative and NaN give 0.
    if q == 0 || q & 0x8000_0000 != 0 || q > 0x7F80_0000 {
        return 0;
    }
    let q = q.min(0x43E0_0000); // fminf(x, 448): +Inf becomes 448
    let e = (q >> 23) as i32 - 127 + 7;
    if e <= 0 {
        // `(int)(x * 512.0f + 0.5f)` in f32, then clamped to 1..=7 (0 below 1).
        let t = soft::add(soft::mul(q, 0x4400_0000), 0x3F00_0000);
        let man = f32_trunc(t);
        return if man > 7 {
            7
        } else if man < 1 {
            0
        } else {
            man as u8
        };
    }
    if e >= 15 {
        return 0x7E;
    }
    // The top 3 fraction bits plus the next one: half-up rounding of the dropped bits.
    let mut m = ((q >> 20) & 7) + ((q >> 19) & 1);
    let mut e = e as u32;
    if m > 7 {
        m = 0;
        e += 1;
        if e >= 15 {
            return 0x7E;
        }
    }
    ((e << 3) | m) as u8
}

/// The integer part of a non-negative finite f32 below 2^31 (what a C `(int)` cast gives).
fn f32_trunc(x: u32) -> u32 {
    let e = (x >> 23) as i32 - 127;
    if e < 0 {
        0
    } else {
        ((x & 0x007F_FFFF) | 0x0080_0000) >> (23 - e.min(23)) << (e - 23).max(0)
    }
}

/// ggml's UE4M3 scale value as f32 bits (exact): bit 7 ignored, `0x00` and `0x7F` are 0,
/// exponent 15 finite.
pub(crate) fn ggml_ue4m3(x: u8) -> u32 {
    if x == 0 || x == 0x7F {
        return 0;
    }
    let (e, m) = (((x >> 3) & 0xF) as u32, (x & 7) as u32);
    if e == 0 && m == 0 {
        0
    } else if e == 0 {
        // m · 2^-9, a normal f32
        let p = 31 - m.leading_zeros();
        ((p + 127 - 9) << 23) | ((m << (23 - p)) & 0x007F_FFFF)
    } else {
        ((e + 127 - 7) << 23) | (m << 20)
    }
}
