//! Streaming stores on conversions larger than the cache: what they gain, per pair.
//!
//! ```text
//! cargo run --release --example streaming                  # 32 Mi values, 7 rounds
//! cargo run --release --example streaming -- --size 67108864 --rounds 11
//! ```
//!
//! For each pair, in alternating batches on the same buffers (so that all contenders see the
//! same machine load), a round times:
//!
//! * `whole`: one `convert_slice` call over the whole slice, which streams its destination
//!   where the library does (x86-64, a destination at least as large as the source, and
//!   more bytes than the threshold: see the crate docs);
//! * `pieces`: the same conversion as calls of 32 Ki values, each far below the threshold,
//!   so none streams: the ordinary stores' rate;
//! * `bounce` (x86-64): the library's streaming route rebuilt here for every pair,
//!   narrowings included: `convert_slice` of 8 KiB of destination at a time into a 64-byte
//!   aligned buffer, `MOVNTDQ` of its whole lines to the destination, one `SFENCE` at the end;
//! * `memcpy`: `copy_from_slice` of `n × (source + destination size) / 2` bytes, the same
//!   reads plus writes as the conversion.
//!
//! Figures are medians over the rounds, in values per nanosecond; the ratios divide medians.
//! `whole ÷ pieces` is what the library's streaming gains; `bounce ÷ pieces` what streaming
//! would gain on a pair the library leaves to ordinary stores. Every contender's output is
//! compared with `pieces`' before timing.

use std::hint::black_box;
use std::time::Instant;

use vcvt::{BF16, ConvertTo, Element, F8E4M3, F16};

/// Values per call of `pieces` (at most 384 KiB of source plus destination per call).
const PIECE: usize = 32 * 1024;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The library's streaming route rebuilt for any pair (see the module docs).
#[cfg(target_arch = "x86_64")]
fn bounce<S: ConvertTo<D>, D: Element + Copy + Default>(src: &[S], dst: &mut [D]) {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
    #[repr(C, align(64))]
    struct Buf([u8; 8192]);
    let mut buf = Buf([0; 8192]);
    let per = 8192 / size_of::<D>();
    for (s, d) in src.chunks(per).zip(dst.chunks_mut(per)) {
        let n = s.len();
        // SAFETY: the buffer is 8192 bytes, 64-byte aligned, and `D` is a plain bit
        // container (f32 or a vcvt code type) of size dividing 8192, so it holds `n <= per`
        // elements of `D`; every byte is initialised (zeroed above).
        let b: &mut [D] = unsafe { std::slice::from_raw_parts_mut(buf.0.as_mut_ptr().cast(), n) };
        vcvt::convert_slice(s, b);
        let bytes = n * size_of::<D>();
        let out = d.as_mut_ptr().cast::<u8>();
        let head = (out as usize).wrapping_neg() % 64;
        let head = head.min(bytes);
        let lines = (bytes - head) / 64;
        let tail = head + 64 * lines;
        // SAFETY: every access is to bytes 0..bytes of the buffer and of `d` (which holds
        // `n` elements of `D`); the streaming stores go to 64-byte aligned addresses, as
        // MOVNTDQ requires (`head` brings `out` to a line boundary); SSE2 is part of x86-64.
        unsafe {
            std::ptr::copy_nonoverlapping(buf.0.as_ptr(), out, head);
            for l in 0..lines {
                for q in 0..4 {
                    let o = head + 64 * l + 16 * q;
                    let v = _mm_loadu_si128(buf.0.as_ptr().add(o).cast::<__m128i>());
                    _mm_stream_si128(out.add(o).cast::<__m128i>(), v);
                }
            }
            std::ptr::copy_nonoverlapping(buf.0.as_ptr().add(tail), out.add(tail), bytes - tail);
        }
    }
    // SAFETY: SFENCE is SSE, part of x86-64.
    unsafe { _mm_sfence() };
}

fn pieces<S: ConvertTo<D>, D: Element>(src: &[S], dst: &mut [D]) {
    for (s, d) in src.chunks(PIECE).zip(dst.chunks_mut(PIECE)) {
        vcvt::convert_slice(black_box(s), d);
    }
}

/// The raw bytes of a slice of plain bit containers.
fn bits<T>(v: &[T]) -> &[u8] {
    // SAFETY: f32 and the vcvt code types have no padding and no invalid bit patterns to
    // read as bytes.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), size_of_val(v)) }
}

fn pair<S: ConvertTo<D> + Copy, D: Element + Copy + Default>(name: &str, src: &[S], rounds: usize) {
    let n = src.len();
    let mut dst = vec![D::default(); n];
    let mut want = vec![D::default(); n];
    pieces(src, &mut want);
    vcvt::convert_slice(src, &mut dst);
    assert!(
        bits(&dst) == bits(&want),
        "{name}: whole differs from pieces"
    );
    #[cfg(target_arch = "x86_64")]
    {
        dst.fill(D::default());
        bounce(src, &mut dst);
        assert!(
            bits(&dst) == bits(&want),
            "{name}: bounce differs from pieces"
        );
    }
    let bytes = n * (size_of::<S>() + size_of::<D>()) / 2;
    let from = vec![0x5Au8; bytes];
    let mut to = vec![0u8; bytes];
    let (mut whole_r, mut pieces_r, mut memcpy_r) = (vec![], vec![], vec![]);
    // Filled on x86-64 only (the `bounce` contender).
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
    let mut bounce_r: Vec<f64> = vec![];
    let rate = |f: &mut dyn FnMut()| {
        let t = Instant::now();
        f();
        n as f64 / t.elapsed().as_nanos() as f64
    };
    for _ in 0..rounds {
        whole_r.push(rate(&mut || vcvt::convert_slice(black_box(src), &mut dst)));
        pieces_r.push(rate(&mut || pieces(src, &mut dst)));
        #[cfg(target_arch = "x86_64")]
        bounce_r.push(rate(&mut || bounce(black_box(src), &mut dst)));
        memcpy_r.push(rate(&mut || {
            to.copy_from_slice(black_box(&from));
            black_box(&mut to);
        }));
    }
    let (w, p, m) = (median(whole_r), median(pieces_r), median(memcpy_r));
    let b = (!bounce_r.is_empty()).then(|| median(bounce_r));
    let opt = |x: Option<f64>| x.map_or("–".to_string(), |x| format!("{x:.2}"));
    println!(
        "| {name} | {w:.2} | {p:.2} | {} | {m:.2} | {:.2} | {} | {:.2} | {:.2} |",
        opt(b),
        w / p,
        opt(b.map(|b| b / p)),
        w / m,
        p / m
    );
}

fn main() {
    let mut n = 32usize << 20;
    let mut rounds = 7;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut num = || {
            args.next()
                .and_then(|v| v.parse().ok())
                .filter(|&v: &usize| v > 0)
        };
        match a.as_str() {
            "--size" => n = num().unwrap_or_else(|| usage()),
            "--rounds" => rounds = num().unwrap_or_else(|| usage()),
            "--bench" => {}
            _ => usage(),
        }
    }
    let f: Vec<f32> = (0..n)
        .map(|i| ((i % 10007) as f32 - 5003.0) * 0.0131)
        .collect();
    let h: Vec<F16> = vcvt::convert_to_vec(&f);
    let b: Vec<BF16> = vcvt::convert_to_vec(&f);
    let e: Vec<F8E4M3> = vcvt::convert_to_vec(&f);
    println!(
        "vcvt {} on {}, {n} values per call, median of {rounds} rounds (el/ns)\n",
        env!("CARGO_PKG_VERSION"),
        vcvt::Backend::active()
    );
    println!(
        "| pair | whole | pieces | bounce | memcpy | whole ÷ pieces | bounce ÷ pieces | whole ÷ memcpy | pieces ÷ memcpy |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    pair::<F16, f32>("F16 -> f32", &h, rounds);
    pair::<BF16, f32>("BF16 -> f32", &b, rounds);
    pair::<F8E4M3, f32>("F8E4M3 -> f32", &e, rounds);
    pair::<F8E4M3, BF16>("F8E4M3 -> BF16", &e, rounds);
    pair::<F16, BF16>("F16 -> BF16", &h, rounds);
    pair::<f32, F16>("f32 -> F16", &f, rounds);
    pair::<f32, BF16>("f32 -> BF16", &f, rounds);
    pair::<f32, F8E4M3>("f32 -> F8E4M3", &f, rounds);
}

fn usage() -> ! {
    eprintln!("usage: streaming [--size N] [--rounds N]");
    std::process::exit(2)
}
