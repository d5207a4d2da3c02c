//! The width-generic vector layer: one [`Vector`] trait, algorithms written once over it,
//! thin per-ISA instantiations.
//!
//! # Layering
//!
//! ```text
//! format/, codec.rs       the formats and the scalar specification
//! block/spec/             the block specification: value traits, reference routines, `soft`,
//!                         the block-kernel table's type and slot contracts
//!   └─ simd/mod.rs        the `Vector` trait (this file): lanes of u32, loads/stores of n lanes
//!        └─ simd/generic/ the algorithms, written once against `Vector` and `codec::Format`
//!             └─ simd/x86_64/{avx2,avx512}.rs,  the trait's implementations and the
//!                simd/aarch64/neon.rs,          `#[target_feature]` instantiations
//!                simd/wasm32/simd128.rs
//!                  └─ arch/{x86_64,aarch64}/*.rs, the hand-written kernels and the
//!                     arch/wasm32.rs              backends' kernel tables
//!                       └─ backend.rs, block/ (the API files), slice.rs, …
//! ```
//!
//! Nothing here imports a kernel table or a backend, and no file imports one that imports it
//! back. The block kernels here and in `arch/` take their block types (`BlockSource`,
//! `BlockDest`, `DestKind`, `MxElement`), the table they fill (`BlockKernels` and its slot
//! types) and the reference routines they fall back to from `block::spec` only, never from
//! the public block API above them.
//!
//! # How the instantiation works
//!
//! The trait's methods are `#[inline(always)]` and carry no `#[target_feature]` themselves
//! (as in memchr's `Vector`): an algorithm is an `#[inline(always)]` generic function, and
//! each ISA instantiates it inside one `#[target_feature(enable = ...)]` function per pair.
//! Everything is then inlined into that function, where the intrinsics' features are
//! enabled, so the kernel is compiled for the ISA as if it had been written by hand. Calling
//! a method outside such a function is undefined behaviour on a CPU without the features,
//! which is why every method is `unsafe`.
//!
//! # Lanes
//!
//! A vector holds [`Vector::LANES`] 32-bit lanes: 4 for NEON and wasm `simd128`, 8 for AVX2,
//! 16 for AVX-512. Every element of every format is carried in one 32-bit lane: f32 sources as
//! their bits, f64 sources rounded to odd into f32 bits (or compressed to their high word, for
//! E8M0), 8- and 16-bit codes zero-extended. Loads and stores take the number of lanes `n` to
//! touch (`1 <= n <= LANES`); a partial access never reads or writes memory past its `n`
//! elements (AVX-512 uses mask registers, AVX2, NEON and simd128 a copy through a stack
//! buffer), and the lanes it did not read hold zero bits.
//!
//! # Words
//!
//! The same register is also `2 · LANES` 16-bit words, for the one-byte formats' widenings
//! (`generic/words.rs`): [`Vector::load_u8_words`] widens bytes to words, the word methods
//! (`add16`, `shl16`, `eq16`, `gt16`, `blend`, [`Vector::lookup_u16`]) work on them,
//! [`Vector::words_lo`]/[`Vector::words_hi`] and [`Vector::f16_words_lo`]/`_hi` widen
//! halves of them to 32-bit lanes, and [`Vector::store_words`] stores them. Each has a
//! default through memory, so the algorithms stay written once; a vector whose own
//! instructions do it sets [`Vector::WORDS`] (and [`Vector::F16_WORDS`]), and only then do
//! the kernels take the word paths (AVX2, NEON and simd128 so far; AVX-512 keeps 32-bit
//! lanes until its word paths have run on an AVX-512 CPU).

#[cfg(target_arch = "aarch64")]
pub(crate) mod aarch64;
pub(crate) mod generic;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub(crate) mod wasm32;
#[cfg(target_arch = "x86_64")]
pub(crate) mod x86_64;

/// A vector of [`LANES`](Vector::LANES) 32-bit lanes and the operations the generic
/// algorithms need.
///
/// # Safety
/// Every method requires that the CPU has the target features of the implementing ISA; the
/// memory methods additionally require that the pointer is valid for the `n` elements they
/// access (`1 <= n <= LANES`), possibly unaligned.
pub(crate) trait Vector: Copy {
    /// Number of 32-bit lanes.
    const LANES: usize;
    /// A per-lane boolean (a mask register, or all-ones lanes).
    type Mask: Copy;

    /// Every lane `x`.
    unsafe fn splat(x: u32) -> Self;

    /// Lane-wise `self & b`.
    unsafe fn and(self, b: Self) -> Self;
    /// Lane-wise `self | b`.
    unsafe fn or(self, b: Self) -> Self;
    /// Lane-wise `self | (b & c)` (one ternary-logic instruction on AVX-512).
    unsafe fn or_and(self, b: Self, c: Self) -> Self;
    /// Lane-wise wrapping `self + b`.
    unsafe fn add(self, b: Self) -> Self;
    /// Lane-wise wrapping `self - b`.
    unsafe fn sub(self, b: Self) -> Self;
    /// Lane-wise logical shift left by `n < 32` (a constant after inlining, so the
    /// immediate form is emitted).
    unsafe fn shl(self, n: u32) -> Self;
    /// Lane-wise logical shift right by `n < 32` (a constant after inlining).
    unsafe fn shr(self, n: u32) -> Self;
    /// Lane-wise unsigned minimum.
    unsafe fn min_u32(self, b: Self) -> Self;
    /// Lane-wise unsigned maximum.
    unsafe fn max_u32(self, b: Self) -> Self;
    /// The unsigned maximum of all lanes (a horizontal reduction: the block kernels' `amax`
    /// of the magnitude bits, which orders magnitudes as values and NaN above infinity).
    unsafe fn reduce_max_u32(self) -> u32;
    /// The maxima of `LANES` vectors at once: lane `i` is `v[i].reduce_max_u32()`, for
    /// `i < LANES` (the rest of `v` is not read). The default goes through memory; AVX2
    /// overrides it with a tree of interleaves and maxima (21 instructions for 8 vectors,
    /// against 7 each reduced alone and 3 more to put each result in its lane), AVX-512 with
    /// the same tree per 128-bit quarter and two folds of quarters (45 for 16 vectors).
    #[inline(always)]
    unsafe fn reduce_max_each(v: &[Self; 16]) -> Self {
        // SAFETY: the caller's guarantee; the buffer holds 16 and LANES <= 16 lanes.
        unsafe {
            let mut m = [0u32; 16];
            for (mi, vi) in m.iter_mut().zip(v).take(Self::LANES) {
                *mi = vi.reduce_max_u32();
            }
            Self::load_u32(m.as_ptr().cast(), Self::LANES)
        }
    }
    /// Table lookup of 16-bit words: every 16-bit half of every lane holds an index below
    /// 128 (bits 7 to 15 clear); one below 16 is replaced by word `index` of the 16-word
    /// table `t`, whose words are laid out in order (little-endian) from the start of `t[0]`
    /// on, into `t[1]` for the vectors of fewer than 16 words (NEON, simd128; wider ISAs
    /// ignore `t[1]`), and one from 16 on by an unspecified word (for the callers that
    /// discard those words, so that they need not mask the index). AVX-512 `VPERMW`, AVX2
    /// two `VPSHUFB` of the table's byte planes, NEON `TBL` of two registers, simd128 two
    /// `swizzle`s.
    unsafe fn lookup_u16(self, t: &[Self; 2]) -> Self;
    /// Lane-wise `self + 1` where `m`, else `self` (counts how many thresholds a lane
    /// passes).
    #[inline(always)]
    unsafe fn inc(self, m: Self::Mask) -> Self {
        // SAFETY: the caller's guarantee.
        unsafe { Self::select(m, self.add(Self::splat(1)), self) }
    }
    /// All-ones lanes where `m`, else `self` (a mask vector's OR on AVX2, NEON and wasm).
    #[inline(always)]
    unsafe fn ones_where(self, m: Self::Mask) -> Self {
        // SAFETY: the caller's guarantee.
        unsafe { Self::select(m, Self::splat(!0), self) }
    }
    /// Whether [`fma_rne`](Self::fma_rne) is one fused operation (one rounding), so that
    /// `fma_rne(a, b, −RN(a · b))` is the product's exact rounding error where that is a
    /// normal f32 (the generic `narrow_scaled` of any scale relies on it).
    const FUSED_FMA: bool = false;
    /// Whether [`mul_rne`](Self::mul_rne) of a quiet NaN and a non-NaN number returns that
    /// NaN unchanged, sign and payload (x86-64 SSE/AVX return the NaN operand; AArch64 does
    /// with FPCR.DN clear, as under `Fpcr0`). WebAssembly leaves NaN bits unspecified.
    const MUL_KEEPS_QNAN: bool = false;
    /// Whether [`lookup16`](Self::lookup16) is a native permutation (the block kernels
    /// then dequantize through per-block tables).
    const FAST_LOOKUP16: bool = false;
    /// Lane-wise `table[idx]` for lanes `idx < 16`, the 16 table entries spread over the
    /// first `16 / LANES` vectors of `t` (entry `k` in lane `k % LANES` of `t[k / LANES]`).
    /// The default goes through memory; AVX-512 (`VPERMD`) and AVX2 (two `VPERMD` and a
    /// blend) override it.
    #[inline(always)]
    unsafe fn lookup16(t: &[Self; 4], idx: Self) -> Self {
        // SAFETY: the caller's guarantee; the buffers hold 16 and LANES <= 16 lanes.
        unsafe {
            let mut tab = [0u32; 16];
            for (q, v) in t.iter().enumerate().take(16 / Self::LANES) {
                v.store_u32(tab.as_mut_ptr().add(q * Self::LANES).cast(), Self::LANES);
            }
            let mut ix = [0u32; 16];
            idx.store_u32(ix.as_mut_ptr().cast(), Self::LANES);
            for x in ix.iter_mut().take(Self::LANES) {
                *x = tab[(*x & 15) as usize];
            }
            Self::load_u32(ix.as_ptr().cast(), Self::LANES)
        }
    }
    /// Lane-wise `self ^ b`. The default is `(self | b) − (self & b)` (exact: the OR is the
    /// XOR plus the AND, with no carry out of any bit); AVX-512 overrides it with `VPXORD`.
    #[inline(always)]
    unsafe fn xor(self, b: Self) -> Self {
        // SAFETY: the caller's guarantee.
        unsafe { self.or(b).sub(self.and(b)) }
    }
    /// Whether [`load_nibble_words`](Self::load_nibble_words) and
    /// [`lookup_words`](Self::lookup_words) are native (one load-and-widen and one permute
    /// of the whole register's 16-bit words): the NVFP4 dequantization then looks up two
    /// blocks' 16-bit results per vector. Only AVX-512 (`VPERMW`) sets it; the defaults
    /// below go through memory and serve the other vectors' tests of the contract only.
    const WORD_LOOKUP: bool = false;
    /// Table lookup of all `2 · LANES` 16-bit words: every word of `self` holds an index
    /// below `2 · LANES` and is replaced by word `index` of `t` (words in little-endian
    /// order). AVX-512 `VPERMW`.
    #[inline(always)]
    unsafe fn lookup_words(self, t: Self) -> Self {
        // SAFETY: the caller's guarantee; the buffers hold 2 · LANES <= 32 words.
        unsafe {
            let (mut ix, mut tab) = ([0u16; 32], [0u16; 32]);
            self.store_u32(ix.as_mut_ptr().cast(), Self::LANES);
            t.store_u32(tab.as_mut_ptr().cast(), Self::LANES);
            for x in ix.iter_mut().take(2 * Self::LANES) {
                *x = tab[*x as usize % (2 * Self::LANES)];
            }
            Self::load_u32(ix.as_ptr().cast(), Self::LANES)
        }
    }
    /// Lanes `0..LANES / 2` loaded from `p` and lanes `LANES / 2..LANES` from `q`
    /// (`LANES / 2` 32-bit lanes each): two 16-word tables in one register for
    /// [`lookup_words`](Self::lookup_words). AVX-512 one 256-bit load and one `VINSERTI64X4`
    /// from memory; the default goes through memory.
    #[inline(always)]
    unsafe fn load_u32_halves(p: *const u8, q: *const u8) -> Self {
        // SAFETY: the caller's guarantee (`2 · LANES` bytes at `p` and at `q`); the buffer
        // holds LANES <= 16 lanes.
        unsafe {
            let h = Self::LANES / 2;
            let mut t = [0u32; 16];
            core::ptr::copy_nonoverlapping(p, t.as_mut_ptr().cast::<u8>(), 4 * h);
            core::ptr::copy_nonoverlapping(q, t.as_mut_ptr().add(h).cast::<u8>(), 4 * h);
            Self::load_u32(t.as_ptr().cast(), Self::LANES)
        }
    }
    /// The `2 · LANES` FP4 codes of `LANES` bytes at `p` as 16-bit words. Without
    /// `SPLIT`, code `2j` is the low nibble of byte `j` and code `2j + 1` its high nibble
    /// (the planar layout); with `SPLIT`, the bytes are ggml `block_nvfp4` sub-blocks of 8
    /// bytes (see [`load_nibbles_split`](Self::load_nibbles_split); `LANES >= 8`).
    #[inline(always)]
    unsafe fn load_nibble_words<const SPLIT: bool>(p: *const u8) -> Self {
        // SAFETY: the caller's guarantee (`LANES` bytes at `p`); the buffers hold
        // 2 · LANES <= 32 words.
        unsafe {
            let l = Self::LANES;
            let mut w = [0u16; 32];
            for j in 0..l {
                let byte = *p.add(j) as u16;
                let (lo, hi) = if SPLIT {
                    (j / 8 * 16 + j % 8, j / 8 * 16 + j % 8 + 8)
                } else {
                    (2 * j, 2 * j + 1)
                };
                w[lo] = byte & 0xF;
                w[hi] = byte >> 4;
            }
            Self::load_u32(w.as_ptr().cast(), l)
        }
    }
    /// Lanes of f32 bits rounded to F16 codes (as [`store_f16`](Self::store_f16) without
    /// saturation stores them), zero-extended.
    #[inline(always)]
    unsafe fn f16_codes(self) -> Self {
        // SAFETY: the caller's guarantee; the buffer holds LANES <= 16 codes.
        unsafe {
            let mut h = [0u16; 16];
            self.store_f16(h.as_mut_ptr().cast(), Self::LANES, false);
            Self::load_u16(h.as_ptr().cast(), Self::LANES)
        }
    }
    /// Whether the 16-bit word methods below ([`load_u8_words`](Self::load_u8_words) to
    /// [`words_hi`](Self::words_hi)) are native instructions. Where they are, the generic
    /// kernels widen one-byte formats `2 · LANES` elements per vector
    /// (`simd/generic/words.rs`); the defaults go through memory and serve only to keep the
    /// algorithms written once (a vector that leaves this `false` never runs them in a kernel).
    const WORDS: bool = false;
    /// Loads `n` bytes (`1 <= n <= 2 · LANES`), zero-extended to 16-bit words; the words
    /// it did not read are zero.
    #[inline(always)]
    unsafe fn load_u8_words(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller's guarantee (`n` bytes at `p`); the buffer holds 2 · LANES <= 32
        // words.
        unsafe {
            let mut w = [0u16; 32];
            for (j, x) in w.iter_mut().enumerate().take(n) {
                *x = *p.add(j) as u16;
            }
            Self::load_u32(w.as_ptr().cast(), Self::LANES)
        }
    }
    /// Stores `n` 16-bit words (`1 <= n <= 2 · LANES`), in order.
    #[inline(always)]
    unsafe fn store_words(self, p: *mut u8, n: usize) {
        // SAFETY: the caller's guarantee (`n` words at `p`); the buffer holds 2 · LANES <= 32
        // words.
        unsafe {
            let mut w = [0u16; 32];
            self.store_u32(w.as_mut_ptr().cast(), Self::LANES);
            core::ptr::copy_nonoverlapping(w.as_ptr().cast::<u8>(), p, 2 * n);
        }
    }
    /// Applies `f` to every 16-bit word of `self` and `b` (the word methods' defaults).
    #[inline(always)]
    unsafe fn words_with(self, b: Self, f: impl Fn(u16, u16) -> u16) -> Self {
        // SAFETY: the caller's guarantee; the buffers hold 2 · LANES <= 32 words.
        unsafe {
            let (mut x, mut y) = ([0u16; 32], [0u16; 32]);
            self.store_u32(x.as_mut_ptr().cast(), Self::LANES);
            b.store_u32(y.as_mut_ptr().cast(), Self::LANES);
            for (a, b) in x.iter_mut().zip(y).take(2 * Self::LANES) {
                *a = f(*a, b);
            }
            Self::load_u32(x.as_ptr().cast(), Self::LANES)
        }
    }
    /// Word-wise wrapping `self + b`.
    #[inline(always)]
    unsafe fn add16(self, b: Self) -> Self {
        // SAFETY: the caller's guarantee.
        unsafe { self.words_with(b, u16::wrapping_add) }
    }
    /// Word-wise logical shift left by `n < 16` (a constant after inlining).
    #[inline(always)]
    unsafe fn shl16(self, n: u32) -> Self {
        // SAFETY: the caller's guarantee.
        unsafe { self.words_with(self, |a, _| a << n) }
    }
    /// Word-wise `self == b`: all-ones words where equal, else zero.
    #[inline(always)]
    unsafe fn eq16(self, b: Self) -> Self {
        // SAFETY: the caller's guarantee.
        unsafe { self.words_with(b, |a, b| if a == b { 0xFFFF } else { 0 }) }
    }
    /// Word-wise `self > b` as signed 16-bit integers: all-ones words where true, else zero.
    #[inline(always)]
    unsafe fn gt16(self, b: Self) -> Self {
        // SAFETY: the caller's guarantee.
        unsafe { self.words_with(b, |a, b| if a as i16 > b as i16 { 0xFFFF } else { 0 }) }
    }
    /// Bit-wise `t` where `m`'s bits are set, else `f`, for masks whose bytes are all ones
    /// or all zeros (the word compares' results): `VPBLENDVB`, NEON `BSL`, wasm `bitselect`.
    #[inline(always)]
    unsafe fn blend(m: Self, t: Self, f: Self) -> Self {
        // SAFETY: the caller's guarantee.
        unsafe { f.xor(f.xor(t).and(m)) }
    }
    /// `self`'s words where the word of `m` is non-zero, zero words where it is zero, for
    /// `m`'s words below `0x8000`: AVX2 `VPSIGNW`; the default compares and blends.
    #[inline(always)]
    unsafe fn where_nonzero16(self, m: Self) -> Self {
        // SAFETY: the caller's guarantee.
        unsafe { Self::blend(m.eq16(Self::splat(0)), Self::splat(0), self) }
    }
    /// Words `0..LANES` of `self`, zero-extended to 32-bit lanes, in order.
    #[inline(always)]
    unsafe fn words_lo(self) -> Self {
        // SAFETY: the caller's guarantee; the buffer holds 2 · LANES <= 32 words.
        unsafe {
            let mut w = [0u16; 32];
            self.store_u32(w.as_mut_ptr().cast(), Self::LANES);
            Self::load_u16(w.as_ptr().cast(), Self::LANES)
        }
    }
    /// Words `LANES..2 · LANES` of `self`, zero-extended to 32-bit lanes, in order.
    #[inline(always)]
    unsafe fn words_hi(self) -> Self {
        // SAFETY: the caller's guarantee; the buffer holds 2 · LANES <= 32 words.
        unsafe {
            let mut w = [0u16; 32];
            self.store_u32(w.as_mut_ptr().cast(), Self::LANES);
            Self::load_u16(w.as_ptr().add(Self::LANES).cast(), Self::LANES)
        }
    }
    /// The low 16-bit halves of the lanes in lane order, then their high halves: word `j` of
    /// the result is the low half of lane `j` for `j < LANES`, the high half of lane
    /// `j − LANES` above. AVX-512 one `VPERMW`; the default goes through memory.
    #[inline(always)]
    unsafe fn unzip_words(self) -> Self {
        // SAFETY: the caller's guarantee; the buffers hold 2 · LANES <= 32 words.
        unsafe {
            let mut w = [0u16; 32];
            self.store_u32(w.as_mut_ptr().cast(), Self::LANES);
            let mut u = [0u16; 32];
            for j in 0..Self::LANES {
                u[j] = w[2 * j];
                u[Self::LANES + j] = w[2 * j + 1];
            }
            Self::load_u32(u.as_ptr().cast(), Self::LANES)
        }
    }
    /// Whether [`load_u8_top_words`](Self::load_u8_top_words) and
    /// [`top_words`](Self::top_words) are cheaper than [`load_u8_words`](Self::load_u8_words)
    /// with [`words_lo`](Self::words_lo)/[`words_hi`](Self::words_hi) and a shift; where they
    /// are, the one-byte formats widen to f32 through BF16 words in that order
    /// (`Src::words` in `simd/generic/kernels.rs`).
    const TOP_WORDS: bool = false;
    /// Loads `n` bytes (`1 <= n <= 2 · LANES`) zero-extended to 16-bit words, in the order
    /// that [`top_words`](Self::top_words) undoes: word-wise operations see the elements in
    /// some order of the vector's choosing, and only `top_words` may read the result. The
    /// words it did not read are zero. By default the order of
    /// [`load_u8_words`](Self::load_u8_words).
    #[inline(always)]
    unsafe fn load_u8_top_words(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller's guarantee.
        unsafe { Self::load_u8_words(p, n) }
    }
    /// The words of a [`load_u8_top_words`](Self::load_u8_top_words) vector (after word-wise
    /// operations) moved to the top halves of 32-bit lanes with zero low halves: elements
    /// `0..LANES` and `LANES..2 · LANES`, in order. (A BF16 word so placed is the f32 of the
    /// same value.) AVX2: the loads put elements `0..4, 8..12` in the low 128-bit lane and
    /// `4..8, 12..16` in the high one, so that `VPUNPCKLWD`/`VPUNPCKHWD` with zero are the
    /// whole widening.
    #[inline(always)]
    unsafe fn top_words(self) -> [Self; 2] {
        // SAFETY: the caller's guarantee.
        unsafe { [self.words_lo().shl(16), self.words_hi().shl(16)] }
    }
    /// Whether [`f16_words_lo`](Self::f16_words_lo) and [`f16_words_hi`](Self::f16_words_hi)
    /// are native conversions (`VCVTPH2PS`, NEON `FCVTL`); where they are, the one-byte
    /// formats whose codes are F16 codes of their values scaled by a power of two widen to
    /// f32 through them (`words::widen_scaled_f16`).
    const F16_WORDS: bool = false;
    /// Words `0..LANES` of `self` read as F16 codes and widened to f32 bits exactly (NaNs
    /// quieted with their payload kept, as [`load_f16`](Self::load_f16)).
    #[inline(always)]
    unsafe fn f16_words_lo(self) -> Self {
        // SAFETY: the caller's guarantee; the buffer holds 2 · LANES <= 32 words.
        unsafe {
            let mut w = [0u16; 32];
            self.store_u32(w.as_mut_ptr().cast(), Self::LANES);
            Self::load_f16(w.as_ptr().cast(), Self::LANES)
        }
    }
    /// Words `LANES..2 · LANES` of `self`, as [`f16_words_lo`](Self::f16_words_lo).
    #[inline(always)]
    unsafe fn f16_words_hi(self) -> Self {
        // SAFETY: the caller's guarantee; the buffer holds 2 · LANES <= 32 words.
        unsafe {
            let mut w = [0u16; 32];
            self.store_u32(w.as_mut_ptr().cast(), Self::LANES);
            Self::load_f16(w.as_ptr().add(Self::LANES).cast(), Self::LANES)
        }
    }
    /// Whether [`bytes4_of`](Self::bytes4_of), [`signs4`](Self::signs4) and
    /// [`store_bytes4`](Self::store_bytes4) are native instructions. Where they are, the
    /// generic narrowing to a one-byte format finishes four vectors at once in bytes
    /// (`lanes::narrow4`); the defaults go through memory and serve only to keep the
    /// algorithm written once.
    const BYTES4: bool = false;
    /// Byte `k < 4` of every 32-bit lane of four vectors, as one vector of `4 · LANES` bytes
    /// in an order of the vector's choosing, shared by [`signs4`](Self::signs4) and undone by
    /// [`store_bytes4`](Self::store_bytes4). AVX2: one `VPSHUFB` per vector and three ORs,
    /// giving the order of `VPACKSSDW`/`VPACKSSWB` (per 128-bit lane, four elements of each
    /// vector in turn).
    #[inline(always)]
    unsafe fn bytes4_of(v: [Self; 4], k: u32) -> Self {
        // SAFETY: the caller's guarantee; the buffers hold 4 · LANES <= 64 bytes.
        unsafe {
            let (mut x, mut b) = ([0u32; 16], [0u8; 64]);
            for (j, vj) in v.into_iter().enumerate() {
                vj.store_u32(x.as_mut_ptr().cast(), Self::LANES);
                for (i, xi) in x.iter().enumerate().take(Self::LANES) {
                    b[j * Self::LANES + i] = (xi >> (8 * k)) as u8;
                }
            }
            Self::load_u32(b.as_ptr().cast(), Self::LANES)
        }
    }
    /// `0xFF` bytes where a lane of four vectors is negative as a signed 32-bit integer (an
    /// f32 with its sign bit set), `0` elsewhere, in [`bytes4_of`](Self::bytes4_of)'s order.
    /// AVX2: signed-saturating packs (which keep every lane's sign) and a compare.
    #[inline(always)]
    unsafe fn signs4(v: [Self; 4]) -> Self {
        // SAFETY: the caller's guarantee; the selects give all-ones lanes, whose byte 0 is
        // 0xFF, where a lane is negative.
        unsafe {
            let (z, ones) = (Self::splat(0), Self::splat(!0));
            let neg = [
                Self::select(z.gt_i32(v[0]), ones, z),
                Self::select(z.gt_i32(v[1]), ones, z),
                Self::select(z.gt_i32(v[2]), ones, z),
                Self::select(z.gt_i32(v[3]), ones, z),
            ];
            Self::bytes4_of(neg, 0)
        }
    }
    /// Stores `4 · LANES` bytes held in [`bytes4_of`](Self::bytes4_of)'s order at `p`, in
    /// element order.
    #[inline(always)]
    unsafe fn store_bytes4(self, p: *mut u8) {
        // SAFETY: the caller's guarantee (`4 · LANES` bytes at `p`); the default order is
        // element order.
        unsafe { self.store_u32(p, Self::LANES) }
    }
    /// `f` applied byte by byte to `self` and `b` through memory: the defaults of the byte
    /// methods below.
    #[inline(always)]
    unsafe fn bytes_with(self, b: Self, f: impl Fn(u8, u8) -> u8) -> Self {
        // SAFETY: the caller's guarantee; the buffers hold 4 · LANES <= 64 bytes.
        unsafe {
            let (mut x, mut y) = ([0u8; 64], [0u8; 64]);
            self.store_u32(x.as_mut_ptr(), Self::LANES);
            b.store_u32(y.as_mut_ptr(), Self::LANES);
            for (a, b) in x.iter_mut().zip(y).take(4 * Self::LANES) {
                *a = f(*a, b);
            }
            Self::load_u32(x.as_ptr(), Self::LANES)
        }
    }
    /// Byte-wise unsigned minimum.
    #[inline(always)]
    unsafe fn min_u8(self, b: Self) -> Self {
        // SAFETY: the caller's guarantee.
        unsafe { self.bytes_with(b, u8::min) }
    }
    /// Byte-wise `self == b`: all-ones bytes where equal.
    #[inline(always)]
    unsafe fn eq8(self, b: Self) -> Self {
        // SAFETY: the caller's guarantee.
        unsafe { self.bytes_with(b, |a, b| if a == b { 0xFF } else { 0 }) }
    }
    /// Lanes where `self == b`.
    unsafe fn eq(self, b: Self) -> Self::Mask;
    /// Lanes where `self > b` as signed 32-bit integers.
    unsafe fn gt_i32(self, b: Self) -> Self::Mask;
    /// Whether any lane of `m` is set (a mask from [`eq`](Self::eq) or
    /// [`gt_i32`](Self::gt_i32)).
    unsafe fn any(m: Self::Mask) -> bool;
    /// Whether any lane of the four vectors of f32 bits is a NaN: by default one compare of
    /// the largest magnitude (a NaN's is above the infinity's `0x7F800000`, and magnitudes
    /// fit a signed compare), eight operations; x86-64 overrides it with two unordered float
    /// compares, which DAZ cannot change (it only zeroes subnormals, which are ordered).
    #[inline(always)]
    unsafe fn any_nan4(v: &[Self; 4]) -> bool {
        // SAFETY: the caller has the features (`Vector`'s contract); no memory is touched.
        unsafe {
            let m = Self::splat(0x7FFF_FFFF);
            let a = v[0].and(m).max_u32(v[1].and(m));
            let b = v[2].and(m).max_u32(v[3].and(m));
            Self::any(a.max_u32(b).gt_i32(Self::splat(0x7F80_0000)))
        }
    }
    /// `t` where `m`, else `f`.
    unsafe fn select(m: Self::Mask, t: Self, f: Self) -> Self;
    /// `a | (b & c)` where `m`, else `f` (one masked ternary-logic instruction on AVX-512).
    #[inline(always)]
    unsafe fn select_or_and(m: Self::Mask, a: Self, b: Self, c: Self, f: Self) -> Self {
        // SAFETY: the caller's guarantee.
        unsafe { Self::select(m, a.or_and(b, c), f) }
    }

    /// Lane-wise `fma(a, b, c)` on f32 bits, rounded to nearest even. AVX-512 carries the
    /// rounding in the instruction; on AVX2 the caller must have checked that MXCSR rounds
    /// to nearest; on NEON the kernels run under FPCR = 0. Flush-to-zero and denormals-are-zero may apply (the callers argue why
    /// they cannot change their results).
    unsafe fn fma_rne(a: Self, b: Self, c: Self) -> Self;
    /// Lane-wise IEEE f32 `self · b`, `self / b` and `self − b` on f32 bits, rounded to
    /// nearest even with subnormal operands and results kept: the IEEE operations (and so
    /// `block::spec::soft`'s, NaN results aside, whose bits are unspecified here) **only under the
    /// block kernels' floating-point environment**: x86-64 MXCSR = `0x1F80` (the block
    /// instantiations load it for the call when it differs), aarch64 FPCR = 0 (`Fpcr0`),
    /// WebAssembly always.
    unsafe fn mul_ieee(self, b: Self) -> Self;
    /// See [`mul_ieee`](Self::mul_ieee).
    unsafe fn div_ieee(self, b: Self) -> Self;
    /// See [`mul_ieee`](Self::mul_ieee).
    unsafe fn sub_ieee(self, b: Self) -> Self;
    /// The 16 codes of a ggml `block_nvfp4` sub-block (8 bytes at `p`: value `j < 8` in the
    /// low nibble of byte `j`, value `j + 8` in its high nibble), in order, in the first
    /// `16 / LANES` vectors (the others are unspecified). The default serves `LANES <= 8`.
    #[inline(always)]
    unsafe fn load_nibbles_split(p: *const u8) -> [Self; 4] {
        // SAFETY: the caller's guarantee (8 bytes at `p`); vector `j` reads bytes
        // `(j · LANES) % 8 ..` + LANES, inside them for LANES <= 8.
        unsafe {
            let l = Self::LANES;
            let mut v = [Self::splat(0); 4];
            for (j, x) in v.iter_mut().enumerate().take(16 / l) {
                let b = Self::load_u8(p.add((j * l) % 8), l);
                *x = if j * l < 8 {
                    b.and(Self::splat(0xF))
                } else {
                    b.shr(4)
                };
            }
            v
        }
    }
    /// Stores 16 codes (below 16; the first `16 / LANES` vectors of `v`) as a ggml
    /// `block_nvfp4` sub-block's 8 bytes (see [`load_nibbles_split`](Self::load_nibbles_split)).
    /// The default serves `LANES <= 8`.
    #[inline(always)]
    unsafe fn store_nibbles_split(v: [Self; 4], p: *mut u8) {
        // SAFETY: the caller's guarantee (8 bytes at `p`); vector `j < 8 / LANES` holds the
        // low nibbles of bytes `j · LANES ..` + LANES and vector `j + 8 / LANES` their high
        // nibbles.
        unsafe {
            let l = Self::LANES;
            for j in 0..8 / l {
                v[j].or(v[j + 8 / l].shl(4)).store_u8(p.add(j * l), l);
            }
        }
    }
    /// Whether [`fp4_block_words`](Self::fp4_block_words) is native (AVX2: one `VPSHUFB`
    /// per byte plane for the whole block); the MX FP4 dequantizations to BF16 and f32 then
    /// take it with a table of planes per scale byte.
    const FP4_PLANES: bool = false;
    /// The 32 FP4 codes of one MX block (the 16 bytes at `p`: with `SPLIT` false code `2j`
    /// in the low nibble of byte `j` and code `2j + 1` in its high nibble, with `SPLIT` true
    /// ggml's `block_mxfp4` order, code `j` in the low nibble of byte `j` and code `j + 16`
    /// in its high nibble), each replaced by word `code` of the 16-word table `t` given as
    /// its two byte planes (`t[0..16]` the words' low bytes, `t[16..32]` their high bytes),
    /// in code order, `2 · LANES` words a vector, in the first `16 / LANES` vectors (the
    /// others are unspecified). The default goes through memory and serves `LANES <= 16`.
    #[inline(always)]
    unsafe fn fp4_block_words<const SPLIT: bool>(p: *const u8, t: *const u8) -> [Self; 4] {
        // SAFETY: the caller's guarantee (16 bytes at `p`, 32 at `t`); the buffer holds the
        // 32 words, and vector `j` reads words `j · 2 · LANES ..` + 2 · LANES of it.
        unsafe {
            let mut w = [0u16; 32];
            for j in 0..16 {
                let b = *p.add(j);
                let (lo, hi) = if SPLIT {
                    (j, j + 16)
                } else {
                    (2 * j, 2 * j + 1)
                };
                for (k, c) in [(lo, b & 0xF), (hi, b >> 4)] {
                    w[k] = u16::from(*t.add(c as usize)) | u16::from(*t.add(16 + c as usize)) << 8;
                }
            }
            let mut v = [Self::splat(0); 4];
            for (j, x) in v.iter_mut().enumerate().take(16 / Self::LANES) {
                *x = Self::load_u32(w.as_ptr().add(2 * j * Self::LANES).cast(), Self::LANES);
            }
            v
        }
    }
    /// The codes of two NVFP4 blocks of 16 (the 16 bytes at `p`: block A's 8 bytes, then block
    /// B's; with `SPLIT` false code `2j` of a block in the low nibble of its byte `j` and
    /// code `2j + 1` in the high nibble, with `SPLIT` true ggml's `block_nvfp4` order, code
    /// `j < 8` in the low nibble of byte `j` and code `j + 8` in its high nibble), A's
    /// replaced by the words of the 16-word table `ta` and B's by those of `tb` (each given
    /// as its byte planes, as for [`fp4_block_words`](Self::fp4_block_words)): A's 16 words
    /// then B's, in code order, `2 · LANES` words a vector, in the first `16 / LANES`
    /// vectors. Native where [`FP4_PLANES`](Self::FP4_PLANES) is set; the default goes
    /// through memory and serves `LANES <= 16`.
    #[inline(always)]
    unsafe fn fp4_pair_words<const SPLIT: bool>(
        p: *const u8,
        ta: *const u8,
        tb: *const u8,
    ) -> [Self; 4] {
        // SAFETY: the caller's guarantee (16 bytes at `p`, 32 at `ta` and `tb`); the buffer
        // holds the 32 words, and vector `j` reads words `j · 2 · LANES ..` + 2 · LANES of it.
        unsafe {
            let mut w = [0u16; 32];
            for j in 0..16 {
                let (blk, k) = (j / 8, j % 8);
                let t = if blk == 0 { ta } else { tb };
                let b = *p.add(j);
                let (lo, hi) = if SPLIT {
                    (k, k + 8)
                } else {
                    (2 * k, 2 * k + 1)
                };
                for (i, c) in [(lo, b & 0xF), (hi, b >> 4)] {
                    let c = c as usize;
                    w[16 * blk + i] = u16::from(*t.add(c)) | u16::from(*t.add(16 + c)) << 8;
                }
            }
            let mut v = [Self::splat(0); 4];
            for (j, x) in v.iter_mut().enumerate().take(16 / Self::LANES) {
                *x = Self::load_u32(w.as_ptr().add(2 * j * Self::LANES).cast(), Self::LANES);
            }
            v
        }
    }
    /// Lane-wise `VPMADDWD` with the weight pair `w` (low 16 bits: the low half's weight,
    /// high 16 bits: the high half's): `lo(self) * lo(w) + hi(self) * hi(w)` with signed
    /// 16-bit halves.
    unsafe fn madd16(self, w: Self) -> Self;
    /// Lane-wise conversion of an integer in `0..2^24` to f32 bits (exact, so no rounding
    /// mode applies).
    unsafe fn cvt_u24_f32(self) -> Self;
    /// Lane-wise f32 product of `self` and `b`, for operands whose product is exact and
    /// normal (so no rounding mode, FTZ or DAZ can change it) and which are not denormal.
    unsafe fn mul_exact_f32(self, b: Self) -> Self;
    /// Lane-wise f32 product `self · b`, rounded to nearest even whatever the caller's FP
    /// environment says about rounding: AVX-512 carries the rounding in the instruction,
    /// AVX2 runs it under the round-to-nearest MXCSR its block entry points set up, NEON
    /// under `Fpcr0`, WebAssembly always rounds to nearest. x86's FTZ and DAZ may still apply
    /// (the callers argue why they cannot change their results), and the bits of a NaN
    /// result are unspecified (WebAssembly), so callers select NaN lanes themselves.
    unsafe fn mul_rne(self, b: Self) -> Self;
    /// Lane-wise f32 product `self · s` **rounded to odd** at f32's precision (the
    /// truncation of the exact product, with its last bit set where that is inexact), for a
    /// vector whose [`fma_rne`](Self::fma_rne) is fused, in lanes where the product's exact
    /// error `x · s − p` is a normal f32 or zero (the callers argue which lanes those are;
    /// elsewhere FTZ and DAZ may make the result any value within an ulp, with the right
    /// sign). A product beyond f32's range gives `±Inf` or `±MAX` (both round on to the
    /// same code of every narrower format); `±Inf · s` is `±Inf`; a quiet NaN lane keeps
    /// its NaN where [`MUL_KEEPS_QNAN`](Self::MUL_KEEPS_QNAN) holds (its bits are
    /// unspecified elsewhere). The default: `p = RN(x · s)`, its exact error from one fused
    /// multiply-add, and from the two the truncation (`p`, or one ulp toward zero where the
    /// error's sign differs from `p`'s) with its last bit set where the error is not zero.
    #[inline(always)]
    unsafe fn mul_odd(self, s: Self) -> Self {
        // SAFETY: the caller's guarantee; no memory is touched.
        unsafe {
            let abs = Self::splat(0x7FFF_FFFF);
            let p = self.mul_rne(s);
            // The rounding error x·s − p (fused: one rounding, exact in the lanes above).
            let e = Self::fma_rne(self, s, p.xor(Self::splat(0x8000_0000)));
            let pm = p.and(abs);
            // Inexact: p rounded away from zero when e's sign differs from p's; the odd
            // rounding is the truncation (one ulp toward zero then) with its last bit set.
            let inexact = e.and(abs).gt_i32(Self::splat(0));
            let away = e.xor(p).shr(31);
            let odd = Self::select(inexact, pm.sub(away).or(Self::splat(1)), pm);
            // ±Inf and NaN lanes keep p.
            let finite = Self::splat(0x7F80_0000).gt_i32(pm);
            Self::select(finite, odd.or(p.and(Self::splat(0x8000_0000))), p)
        }
    }
    /// Lane-wise f32 quotient `self / b`, rounded as [`mul_rne`](Self::mul_rne) says.
    unsafe fn div_rne(self, b: Self) -> Self;
    /// [`div_rne`](Self::div_rne) by a splat `b` whose reciprocal `y = RN(1/b)` the caller
    /// also passes (made with `div_rne`, so it is rounded to nearest whatever the FP
    /// environment), for lanes whose quotient is below `2^100` in magnitude and `b` positive
    /// with `b` and `y` in `[2^-60, 2^60]`. Wherever `|self / b| >= 2^-20` the result is the
    /// IEEE quotient rounded to nearest even; elsewhere it is some value below `2^-19` in
    /// magnitude with `self`'s sign. By default this is the division itself; a vector with
    /// a fused multiply-add may instead correct the product `self · y` (Markstein's
    /// correction, which `avx512.rs` argues).
    #[inline(always)]
    unsafe fn div_recip_rne(self, b: Self, y: Self) -> Self {
        let _ = y;
        // SAFETY: the caller's guarantee.
        unsafe { self.div_rne(b) }
    }

    /// Loads `n` bytes, zero-extended to lanes.
    unsafe fn load_u8(p: *const u8, n: usize) -> Self;
    /// Loads `n` 16-bit values, zero-extended to lanes.
    unsafe fn load_u16(p: *const u8, n: usize) -> Self;
    /// Loads `n` 32-bit values.
    unsafe fn load_u32(p: *const u8, n: usize) -> Self;
    /// Loads `n` F16 codes and widens them to f32 bits exactly (`VCVTPH2PS`: NaNs quieted
    /// with their payload kept; MXCSR plays no part).
    unsafe fn load_f16(p: *const u8, n: usize) -> Self;
    /// Loads `n` f64 and rounds each to odd into f32 bits: exact (round to odd, which a later
    /// single rounding to a format with at least two fewer significand bits turns into the
    /// RNE result) wherever the truncated value is at least 2^-126; below that the bits may
    /// be any value under 2^-126 with the source's sign (FTZ, DAZ), which every format that
    /// uses it rounds to a signed zero anyway.
    unsafe fn load_f64_odd(p: *const u8, n: usize) -> Self;
    /// Loads `n` f64 as their high words with a sticky bit: `hi | (lo != 0)`. Rounding this
    /// word to a format that keeps fewer than 19 fraction bits equals rounding the f64.
    unsafe fn load_f64_hi(p: *const u8, n: usize) -> Self;
    /// Loads `n` packed FP4 values (`n.div_ceil(2)` bytes, element `2i` in the low nibble
    /// of byte `i`) into lanes; the lanes' bits above 3 are zero.
    unsafe fn load_nibbles(p: *const u8, n: usize) -> Self;

    /// Stores the low byte of `n` lanes.
    unsafe fn store_u8(self, p: *mut u8, n: usize);
    /// Stores the low bytes of the lanes of four vectors, in order (`4 * LANES` bytes).
    #[inline(always)]
    unsafe fn store4_u8(v: [Self; 4], p: *mut u8) {
        // SAFETY: the caller's guarantee: `p` is valid for `4 * LANES` bytes.
        unsafe {
            for (j, x) in v.into_iter().enumerate() {
                x.store_u8(p.add(j * Self::LANES), Self::LANES);
            }
        }
    }
    /// Stores every lane at `p`, as `store_u32(p, LANES)`, with no store crossing a 64-byte
    /// line where a vector is a line wide: AVX-512 splits a vector that would cross into
    /// the two parts of the two lines (one rotation, two masked stores), since a store that
    /// crosses a line costs about as much as two on the cores measured. For the block
    /// kernels' f32 destinations, which cannot be realigned by converting a few values apart
    /// as the element kernels do (a block's values are decoded together). `p` must be
    /// 4-byte aligned.
    #[inline(always)]
    unsafe fn store_u32_in_lines(self, p: *mut u8) {
        // SAFETY: the caller's guarantee (`LANES` lanes at `p`).
        unsafe { self.store_u32(p, Self::LANES) }
    }
    /// Stores the low 16 bits of `n` lanes.
    unsafe fn store_u16(self, p: *mut u8, n: usize);
    /// Stores `n` lanes.
    unsafe fn store_u32(self, p: *mut u8, n: usize);
    /// Stores `n` lanes of f32 bits as f64, exactly (IEEE f32 → f64, NaN quieted with its
    /// payload kept), f32 subnormals included whatever MXCSR holds.
    unsafe fn store_f64(self, p: *mut u8, n: usize);
    /// Rounds `n` lanes of f32 bits to F16 (RNE, `VCVTPS2PH` with its rounding in the
    /// immediate) and stores the codes; with `sat`, `±Inf` results become `±MAX`.
    unsafe fn store_f16(self, p: *mut u8, n: usize, sat: bool);
    /// Lanes of f32 bits rounded to F16 and widened back (`VCVTPS2PH` with the rounding in
    /// the immediate, then `VCVTPH2PS`, both exact apart from the one rounding); with `sat`,
    /// results that round to `±Inf` from a finite or infinite source give `±MAX` instead.
    unsafe fn round_f16(self, sat: bool) -> Self;
    /// Stores `n` lanes holding FP4 codes (below 16) packed two per byte
    /// (`n.div_ceil(2)` bytes; for odd `n` the last high nibble is lane `n`, which the
    /// caller guarantees is the code of `+0`).
    unsafe fn store_nibbles(self, p: *mut u8, n: usize);
    /// Byte-wise table lookup: every byte of `self` holds an index below 16 and is replaced
    /// by byte `index` of `t`. AVX2: the table in both 128-bit halves and one `VPSHUFB`.
    #[inline(always)]
    unsafe fn lookup8(self, t: &[u8; 16]) -> Self {
        // SAFETY: the caller's guarantee; the buffer holds 4 · LANES <= 64 bytes.
        unsafe {
            let mut b = [0u8; 64];
            self.store_u32(b.as_mut_ptr(), Self::LANES);
            for x in b.iter_mut().take(4 * Self::LANES) {
                *x = t[(*x & 15) as usize];
            }
            Self::load_u32(b.as_ptr(), Self::LANES)
        }
    }
    /// Stores `4 · LANES` FP4 codes (bytes below 16) held in [`bytes4_of`](Self::bytes4_of)'s
    /// order packed two per byte in element order (`2 · LANES` bytes at `p`: element `2i` in
    /// the low nibble of byte `i`). The default goes through memory (its `bytes4_of` order is
    /// element order); AVX2 pairs neighbouring bytes (its order keeps each even-odd pair of
    /// elements adjacent) and interleaves the two halves' words.
    #[inline(always)]
    unsafe fn store_nibbles_b4(self, p: *mut u8) {
        // SAFETY: the caller's guarantee: `p` is valid for `2 · LANES` bytes; the buffer
        // holds 4 · LANES <= 64 bytes.
        unsafe {
            let mut b = [0u8; 64];
            self.store_u32(b.as_mut_ptr(), Self::LANES);
            for i in 0..2 * Self::LANES {
                *p.add(i) = (b[2 * i] & 15) | (b[2 * i + 1] << 4);
            }
        }
    }
    /// As [`store_nibbles_b4`](Self::store_nibbles_b4), in ggml's `block_mxfp4` order:
    /// element `i < 2 · LANES` in the low nibble of byte `i`, element `i + 2 · LANES` in its
    /// high nibble. AVX2: a byte shift by 8 and a dword interleave of the two halves.
    #[inline(always)]
    unsafe fn store_nibbles_halves_b4(self, p: *mut u8) {
        // SAFETY: the caller's guarantee: `p` is valid for `2 · LANES` bytes; the buffer
        // holds 4 · LANES <= 64 bytes.
        unsafe {
            let mut b = [0u8; 64];
            self.store_u32(b.as_mut_ptr(), Self::LANES);
            let h = 2 * Self::LANES;
            for i in 0..h {
                *p.add(i) = (b[i] & 15) | (b[i + h] << 4);
            }
        }
    }
    /// Stores the FP4 codes (below 16) of the lanes of four vectors packed two per byte, in
    /// order (`2 · LANES` bytes: element `2i` in the low nibble of byte `i`). The default is
    /// four [`store_nibbles`](Self::store_nibbles); AVX2 packs all four at once.
    #[inline(always)]
    unsafe fn store_nibbles4(v: [Self; 4], p: *mut u8) {
        // SAFETY: the caller's guarantee: `p` is valid for `2 · LANES` bytes.
        unsafe {
            for (j, x) in v.into_iter().enumerate() {
                x.store_nibbles(p.add(j * Self::LANES / 2), Self::LANES);
            }
        }
    }
}

/// Copies `bytes <= B` bytes from `p` into a zeroed `B`-byte buffer: the partial loads of the
/// instantiations without masked loads (AVX2, NEON, wasm `simd128`) read exactly their `n`
/// elements this way and leave the other lanes zero.
///
/// # Safety
/// `p` valid for reading `bytes` bytes.
#[inline(always)]
pub(crate) unsafe fn buffered<const B: usize>(p: *const u8, bytes: usize) -> [u8; B] {
    let mut b = [0u8; B];
    debug_assert!(bytes <= B);
    // SAFETY: `bytes` readable at `p` (the caller), and `bytes <= B` fit in the buffer.
    unsafe { core::ptr::copy_nonoverlapping(p, b.as_mut_ptr(), bytes) };
    b
}

/// Copies the first `bytes <= B` bytes of `b` to `p`: the partial stores' counterpart of
/// [`buffered`].
///
/// # Safety
/// `p` valid for writing `bytes` bytes.
#[inline(always)]
pub(crate) unsafe fn unbuffer<const B: usize>(b: &[u8; B], p: *mut u8, bytes: usize) {
    debug_assert!(bytes <= B);
    // SAFETY: the caller's guarantee; the buffer holds `B >= bytes` bytes.
    unsafe { core::ptr::copy_nonoverlapping(b.as_ptr(), p, bytes) };
}
