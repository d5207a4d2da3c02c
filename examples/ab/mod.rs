//! What the two block examples (`block_dequant.rs`, `block_quant.rs`) share: the weights
//! they quantize, the alternating-batch timer and the choice of backend and batch count.
//! Not an example of its own (a directory without `main.rs`); each example includes it with
//! `#[path]`.

use std::time::{Duration, Instant};

use vcvt::Backend;

/// A SplitMix64 stream.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Weights-like f32 values: normal, a spread of magnitudes per block (`benches/block.rs`).
pub fn weights(n: usize, seed: u64) -> Vec<f32> {
    let mut r = Rng(seed);
    (0..n)
        .map(|i| {
            let m = (r.next() >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
            m * (1u32 << ((i / 32) % 8)) as f32
        })
        .collect()
}

/// Nanoseconds per call of `f` and of `g`, their batches alternating (about 4 ms each):
/// the medians, then the fastest batches.
pub fn measure2(batches: usize, f: &mut dyn FnMut(), g: &mut dyn FnMut()) -> [(f64, f64); 2] {
    let reps = |h: &mut dyn FnMut()| {
        let start = Instant::now();
        let mut calls = 0u64;
        while calls == 0 || start.elapsed() < Duration::from_millis(5) {
            h();
            calls += 1;
        }
        let per_call = start.elapsed().as_secs_f64() / calls as f64;
        ((0.004 / per_call).ceil() as u64).max(1)
    };
    let (rf, rg) = (reps(f), reps(g));
    let batch = |h: &mut dyn FnMut(), r: u64| {
        let t = Instant::now();
        for _ in 0..r {
            h();
        }
        t.elapsed().as_secs_f64() * 1e9 / r as f64
    };
    let (mut tf, mut tg) = (Vec::new(), Vec::new());
    for _ in 0..batches {
        tf.push(batch(f, rf));
        tg.push(batch(g, rg));
    }
    tf.sort_by(f64::total_cmp);
    tg.sort_by(f64::total_cmp);
    [(tf[tf.len() / 2], tg[tg.len() / 2]), (tf[0], tg[0])]
}

/// Batches per contender: `VCVT_AB_BATCHES`, default 31.
pub fn batches() -> usize {
    std::env::var("VCVT_AB_BATCHES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(31)
}

/// The backend to time: `VCVT_AB_BACKEND=<name>` (an unknown or unavailable name is an
/// error, not a silent fallback), else `avx2` where it runs, else the active one.
pub fn backend() -> Backend {
    match std::env::var("VCVT_AB_BACKEND") {
        Ok(name) => {
            let b: Backend = name
                .parse()
                .unwrap_or_else(|e| panic!("VCVT_AB_BACKEND: {e}"));
            assert!(
                b.is_available(),
                "VCVT_AB_BACKEND: {b} is not available on this CPU"
            );
            b
        }
        Err(_) => Backend::available()
            .find(|b| b.to_string() == "avx2")
            .unwrap_or_else(Backend::active),
    }
}

/// The byte offset past a 64-byte line at which the block examples put their destinations
/// ([`Placed`]): `VCVT_AB_DST_OFFSET` (a multiple of 4 below 64), default 16, where glibc's
/// `malloc` places a large `Vec` (a fresh mapping plus its 16-byte header).
pub fn dst_offset() -> usize {
    let o: usize = std::env::var("VCVT_AB_DST_OFFSET")
        .ok()
        .map(|v| {
            v.parse()
                .unwrap_or_else(|e| panic!("VCVT_AB_DST_OFFSET: {e}"))
        })
        .unwrap_or(16);
    assert!(
        o < 64 && o.is_multiple_of(4),
        "VCVT_AB_DST_OFFSET: {o} is not a multiple of 4 below 64"
    );
    o
}

/// `n` default values starting `offset` bytes past a 64-byte line: a buffer with room to
/// slide, and the index where the slice starts.
pub struct Placed<T> {
    buf: Vec<T>,
    start: usize,
    n: usize,
}

impl<T: Copy + Default> Placed<T> {
    /// `n` values at `offset` bytes past a line (a multiple of `size_of::<T>()`, at most 4,
    /// below 64).
    pub fn new(n: usize, offset: usize) -> Placed<T> {
        let size = size_of::<T>();
        let buf = vec![T::default(); n + 64 / size];
        let addr = buf.as_ptr() as usize;
        let start = (0..64 / size)
            .find(|i| (addr + size * i) % 64 == offset)
            .expect("the buffer is aligned to its element size, which divides the offset");
        Placed { buf, start, n }
    }
    /// The placed values.
    pub fn slice(&mut self) -> &mut [T] {
        &mut self.buf[self.start..self.start + self.n]
    }
}
