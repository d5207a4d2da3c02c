//! What a slice's position relative to the 64-byte cache lines costs a conversion.
//!
//! ```text
//! cargo run --release --example alignment                        # active backend, 7 rounds
//! cargo run --release --example alignment -- --backend avx2 --rounds 11
//! cargo run --release --example alignment -- --size 512 --size 65536
//! ```
//!
//! For each pair and slice length, a round times the same conversion on four placements of
//! the source and destination, one batch each, in turn (so that all see the same machine
//! load):
//!
//! * `aligned`: both slices start on a 64-byte boundary;
//! * `+16 +16`: both start 16 bytes past one, where glibc's `malloc` puts every allocation
//!   larger than 128 KiB (16 bytes past a page boundary), and so where most large `Vec`s
//!   start;
//! * `+0 +16` and `+16 +0`: only the destination, or only the source, 16 bytes past.
//!
//! A batch repeats the conversion for at least 5 ms; a figure is the median over the rounds,
//! in values per nanosecond, and each placement's ratio divides its median by `aligned`'s.
//! The sub-slices are taken from ordinary `Vec`s at element offsets, so no placement needs
//! special memory. Each placement's output is compared with `aligned`'s before timing.
//!
//! On the 512-bit x86-64 tiers the library converts the first few values of a long enough
//! conversion in a call of their own, so that its wider side starts on a line boundary
//! (the crate docs, "Backends"); the ratios show what remains.

use std::hint::black_box;
use std::time::{Duration, Instant};

use vcvt::{BF16, Backend, ConvertTo, Element, F8E4M3, F8E4M3FNUZ, F8E5M2, F16};

/// The placements: (source, destination) bytes past a 64-byte boundary.
const PLACES: [(usize, usize); 4] = [(0, 0), (16, 16), (0, 16), (16, 0)];

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The element index at which a slice of `v` starts `off` bytes past a 64-byte boundary.
fn start<T>(v: &[T], off: usize) -> usize {
    let size = size_of::<T>();
    let base = v.as_ptr() as usize % 64;
    let k = (off + 64 - base) % 64;
    assert!(
        k.is_multiple_of(size),
        "the allocation's alignment does not allow this placement"
    );
    k / size
}

/// A deterministic stream of values spread over ±`range`, away from the overflow boundary.
fn values(n: usize, range: f32) -> Vec<f32> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = (x >> 40) as f32 / (1u64 << 24) as f32; // [0, 1)
            let m = range * u * u; // more small magnitudes, as in real tensors
            if x & 1 == 0 { m } else { -m }
        })
        .collect()
}

/// Times pair `S -> D` on `backend` at `n` values, one line per placement.
fn pair<S: ConvertTo<D> + Copy, D: Element + Copy + PartialEq + std::fmt::Debug>(
    name: &str,
    backend: Backend,
    n: usize,
    rounds: usize,
    zero: D,
    make: impl Fn(f32) -> S,
    range: f32,
) {
    let input: Vec<S> = values(n, range).into_iter().map(make).collect();
    let mut src = vec![input[0]; n + 64];
    let mut dst = vec![zero; n + 64];
    let run = |src: &[S], dst: &mut [D]| {
        vcvt::convert_slice_on(backend, black_box(src), dst, vcvt::Options::new())
            .expect("the backend is available");
    };
    // The placements' offsets, and the aligned output to compare the others with.
    let offs: Vec<(usize, usize)> = PLACES
        .iter()
        .map(|&(s, d)| (start(&src, s), start(&dst, d)))
        .collect();
    let mut want = vec![zero; n];
    for (p, &(s, d)) in offs.iter().enumerate() {
        src[s..s + n].copy_from_slice(&input);
        dst.fill(zero);
        run(&src[s..s + n], &mut dst[d..d + n]);
        if p == 0 {
            want.copy_from_slice(&dst[d..d + n]);
        }
        assert_eq!(
            &dst[d..d + n],
            &want[..],
            "{name}: placement changed the output"
        );
    }
    // Calls per batch: at least 5 ms on the aligned placement.
    let (s0, d0) = offs[0];
    src[s0..s0 + n].copy_from_slice(&input);
    let mut reps = 1u64;
    loop {
        let t = Instant::now();
        for _ in 0..reps {
            run(&src[s0..s0 + n], &mut dst[d0..d0 + n]);
        }
        if t.elapsed() >= Duration::from_millis(5) {
            break;
        }
        reps *= 2;
    }
    let mut rates = vec![Vec::new(); PLACES.len()];
    for _ in 0..rounds {
        for (p, &(s, d)) in offs.iter().enumerate() {
            src[s..s + n].copy_from_slice(&input);
            let t = Instant::now();
            for _ in 0..reps {
                run(&src[s..s + n], &mut dst[d..d + n]);
            }
            rates[p].push((reps as f64 * n as f64) / t.elapsed().as_nanos() as f64);
        }
    }
    let med: Vec<f64> = rates.into_iter().map(median).collect();
    print!("{name:<14} {n:>7}");
    for m in &med {
        print!("  {m:>6.2} {:>4.2}", m / med[0]);
    }
    println!();
}

fn main() {
    let mut backend = Backend::active();
    let mut rounds = 7;
    let mut sizes = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--backend" => backend = val().parse().expect("a backend name"),
            "--rounds" => rounds = val().parse().expect("a number of rounds"),
            "--size" => sizes.push(val().parse().expect("a number of values")),
            _ => panic!("unknown argument {a} (see the example's docs)"),
        }
    }
    if sizes.is_empty() {
        sizes = vec![256, 1024, 4096, 65536];
    }
    println!("backend {backend}; values per ns (median of {rounds} rounds) and ratio to `aligned`");
    print!("{:<14} {:>7}", "pair", "values");
    for (s, d) in PLACES {
        print!(
            "  {:>11}",
            if (s, d) == (0, 0) {
                "aligned".to_string()
            } else {
                format!("+{s} +{d}")
            }
        );
    }
    println!();
    for &n in &sizes {
        pair("F16 -> f32", backend, n, rounds, 0f32, F16::from_f32, 6e4);
        pair(
            "F8E4M3 -> f32",
            backend,
            n,
            rounds,
            0f32,
            F8E4M3::from_f32,
            440.0,
        );
        pair(
            "F8E5M2 -> f32",
            backend,
            n,
            rounds,
            0f32,
            F8E5M2::from_f32,
            5e4,
        );
        pair(
            "E4M3FNUZ -> f32",
            backend,
            n,
            rounds,
            0f32,
            F8E4M3FNUZ::from_f32,
            200.0,
        );
        pair(
            "F8E4M3 -> BF16",
            backend,
            n,
            rounds,
            BF16::ZERO,
            F8E4M3::from_f32,
            440.0,
        );
        pair("f32 -> F16", backend, n, rounds, F16::ZERO, |x| x, 6e4);
        pair("f32 -> BF16", backend, n, rounds, BF16::ZERO, |x| x, 1e30);
        pair(
            "f32 -> F8E4M3",
            backend,
            n,
            rounds,
            F8E4M3::ZERO,
            |x| x,
            440.0,
        );
        pair(
            "F16 -> F8E4M3",
            backend,
            n,
            rounds,
            F8E4M3::ZERO,
            F16::from_f32,
            440.0,
        );
    }
}
