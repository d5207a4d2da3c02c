//! The `rayon` feature: every `par_*` entry point gives exactly the bits of its serial
//! counterpart (the serial functions are the specification, tested against independent
//! oracles elsewhere), over random lengths, offsets (so the 64-byte chunk edges fall at
//! every position) and thread counts 1, 2 and 7.
#![cfg(feature = "rayon")]

mod common;

use std::mem::MaybeUninit;

use vcvt::block::{BlockFp8, Fp8Profile, Mx, MxElement, MxProfile, Nvfp4, Shape};
use vcvt::{BF16, ConvertTo, Element, F4E2M1x2, F8E4M3, F8E5M2, F16, PAR_CHUNK, PAR_MIN_VALUES};

/// xorshift64*: reproducible inputs without a dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// Values spread over many binades, with some specials.
    fn f32(&mut self) -> f32 {
        match self.below(64) {
            0 => f32::NAN,
            1 => f32::INFINITY,
            2 => -0.0,
            _ => {
                let m = (self.next() >> 40) as f32 / (1u64 << 24) as f32;
                let e = self.below(40) as i32 - 20;
                let s = if self.next() & 1 == 0 { 1.0 } else { -1.0 };
                s * m * 2f32.powi(e)
            }
        }
    }
}

fn in_pool(threads: usize, f: impl FnOnce() + Send) {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f);
}

const THREADS: [usize; 3] = [1, 2, 7];

/// Lengths around the serial threshold and the chunk edges.
fn lengths(rng: &mut Rng) -> Vec<usize> {
    let mut v = vec![
        0,
        1,
        PAR_MIN_VALUES - 1,
        PAR_MIN_VALUES,
        PAR_MIN_VALUES + 1,
        4 * PAR_CHUNK + 63,
    ];
    for _ in 0..3 {
        v.push(PAR_MIN_VALUES + rng.below(3 * PAR_CHUNK));
    }
    v
}

fn check_slices<S, D>(rng: &mut Rng, make: impl Fn(&mut Rng) -> S, zero: D)
where
    S: ConvertTo<D> + std::fmt::Debug,
    D: Element + std::fmt::Debug,
{
    let packed_src = size_of::<S>() == 1 && std::any::type_name::<S>().ends_with("F4E2M1x2");
    let packed_dst = std::any::type_name::<D>().ends_with("F4E2M1x2");
    for n in lengths(rng) {
        let off = rng.below(64);
        let src_len = if packed_src { n.div_ceil(2) } else { n };
        let dst_len = if packed_dst { n.div_ceil(2) } else { n };
        let src: Vec<S> = (0..src_len + off).map(|_| make(rng)).collect();
        let src = &src[off..];
        let mut want = vec![zero; dst_len + off];
        let want = &mut want[off..];
        vcvt::convert_slice(src, want);
        for t in THREADS {
            let mut got = vec![zero; dst_len + off];
            let got = &mut got[off..];
            in_pool(t, || vcvt::par_convert_slice(src, got));
            assert!(
                bits(got) == bits(want),
                "par_convert_slice, n {n}, offset {off}, {t} threads"
            );

            let mut un = vec![MaybeUninit::<D>::uninit(); dst_len + off];
            let out = vcvt::par_convert_slice_uninit(src, &mut un[off..]);
            assert!(
                bits(out) == bits(want),
                "par_convert_slice_uninit, n {n}, offset {off}"
            );
        }
    }
}

#[test]
fn slices_match_serial() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    check_slices::<f32, BF16>(&mut rng, |r| r.f32(), BF16::ZERO);
    check_slices::<f64, BF16>(&mut rng, |r| r.f32() as f64 * 1.000_000_1, BF16::ZERO);
    check_slices::<f32, F8E4M3>(&mut rng, |r| r.f32(), F8E4M3::ZERO);
    check_slices::<f32, F4E2M1x2>(&mut rng, |r| r.f32(), F4E2M1x2::from_bits(0));
    check_slices::<F4E2M1x2, f32>(&mut rng, |r| F4E2M1x2::from_bits(r.next() as u8), 0.0);
    check_slices::<F8E5M2, F16>(&mut rng, |r| F8E5M2::from_bits(r.next() as u8), F16::ZERO);
}

#[test]
fn bytes_match_serial() {
    let mut rng = Rng(7);
    for n in lengths(&mut rng) {
        let off = rng.below(64);
        let bytes: Vec<u8> = (0..2 * n + off).map(|_| rng.next() as u8).collect();
        let bytes = &bytes[off..];
        let mut want = vec![0.0f32; n];
        vcvt::convert_from_bytes::<BF16, f32>(bytes, &mut want).unwrap();
        let mut want64 = vec![0.0f64; n];
        vcvt::convert_from_bytes::<F16, f64>(bytes, &mut want64).unwrap();
        let src: Vec<f32> = (0..n).map(|_| rng.f32()).collect();
        let mut want_b = vec![0u8; n + off];
        vcvt::convert_to_bytes::<f32, F8E4M3>(&src, &mut want_b[off..]).unwrap();
        for t in THREADS {
            in_pool(t, || {
                let mut got = vec![0.0f32; n];
                vcvt::par_convert_from_bytes::<BF16, f32>(bytes, &mut got).unwrap();
                assert_eq!(
                    got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                    want.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                    "par_convert_from_bytes, n {n}"
                );
                let mut un = vec![MaybeUninit::<f64>::uninit(); n];
                let got = vcvt::par_convert_from_bytes_uninit::<F16, f64>(bytes, &mut un).unwrap();
                assert!(
                    got.iter()
                        .zip(&want64)
                        .all(|(a, b)| a.to_bits() == b.to_bits()),
                    "par_convert_from_bytes_uninit, n {n}"
                );
                let mut got_b = vec![0u8; n + off];
                vcvt::par_convert_to_bytes::<f32, F8E4M3>(&src, &mut got_b[off..]).unwrap();
                assert_eq!(got_b, want_b, "par_convert_to_bytes, n {n}");
            });
        }
        // Errors are the serial ones.
        if n > 1 {
            let mut got = vec![0.0f32; n - 1];
            assert_eq!(
                vcvt::par_convert_from_bytes::<BF16, f32>(bytes, &mut got),
                vcvt::convert_from_bytes::<BF16, f32>(bytes, &mut got)
            );
        }
    }
}

/// Shapes: a long vector (split inside the row), many short rows, columns that are not a
/// multiple of the block, strided rows.
fn shapes() -> Vec<Shape> {
    vec![
        Shape::vector(3 * PAR_CHUNK + 40),
        Shape::vector(1000),
        Shape::matrix(700, 1000),
        Shape::matrix(300, 1100).with_stride(1111),
        Shape::matrix(3, 2 * PAR_CHUNK + 77),
    ]
}

fn bits<T: Copy>(v: &[T]) -> Vec<u8> {
    // SAFETY: f32/BF16 are plain bits without padding; reading them as bytes is defined.
    unsafe {
        std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)).to_vec()
    }
}

#[test]
fn mx_matches_serial() {
    let mut rng = Rng(99);
    for shape in shapes() {
        let src: Vec<f32> = (0..shape.len()).map(|_| rng.f32()).collect();
        for (el, profile) in [
            (MxElement::E2M1, MxProfile::Ceil),
            (MxElement::E4M3, MxProfile::Ocp),
            (MxElement::E2M1, MxProfile::Ggml),
        ] {
            let mx = Mx::new(el).profile(profile);
            let (dl, sl) = (mx.data_len(shape).unwrap(), mx.scales_len(shape).unwrap());
            let (mut d0, mut s0) = (vec![0u8; dl], vec![0u8; sl]);
            mx.quantize(&src, shape, &mut d0, &mut s0).unwrap();
            let mut w0 = vec![BF16::ZERO; shape.len()];
            mx.dequantize(&d0, &s0, shape, &mut w0).unwrap();
            for t in THREADS {
                in_pool(t, || {
                    let (mut d, mut s) = (vec![0u8; dl], vec![0u8; sl]);
                    mx.par_quantize(&src, shape, &mut d, &mut s).unwrap();
                    assert!(
                        d == d0 && s == s0,
                        "Mx {el:?} {profile:?} quantize {shape:?}, {t} threads"
                    );
                    let mut w = vec![BF16::ZERO; shape.len()];
                    mx.par_dequantize(&d0, &s0, shape, &mut w).unwrap();
                    assert!(
                        bits(&w) == bits(&w0),
                        "Mx dequantize {shape:?}, {t} threads"
                    );
                });
            }
            assert_eq!(
                mx.par_quantize(&src, shape, &mut d0[1..], &mut s0),
                mx.quantize(&src, shape, &mut d0[1..], &mut s0)
            );
        }
    }
}

#[test]
fn block_fp8_matches_serial() {
    let mut rng = Rng(5);
    for shape in shapes() {
        let src: Vec<f32> = (0..shape.len()).map(|_| rng.f32()).collect();
        for fp8 in [
            BlockFp8::deepseek(),
            BlockFp8::new(1, 128),
            BlockFp8::new(128, 128).profile(Fp8Profile::Ue8m0),
        ] {
            let (dl, sl) = (
                fp8.data_len(shape).unwrap(),
                fp8.scale_inv_len(shape).unwrap(),
            );
            let (mut d0, mut s0) = (vec![0u8; dl], vec![0u8; sl]);
            fp8.quantize(&src, shape, &mut d0, &mut s0).unwrap();
            let mut w0 = vec![BF16::ZERO; shape.len()];
            fp8.dequantize(&d0, &s0, shape, &mut w0).unwrap();
            for t in THREADS {
                in_pool(t, || {
                    let (mut d, mut s) = (vec![0u8; dl], vec![0u8; sl]);
                    fp8.par_quantize(&src, shape, &mut d, &mut s).unwrap();
                    assert!(
                        d == d0 && s == s0,
                        "{fp8:?} quantize {shape:?}, {t} threads"
                    );
                    let mut w = vec![BF16::ZERO; shape.len()];
                    fp8.par_dequantize(&d0, &s0, shape, &mut w).unwrap();
                    assert!(
                        bits(&w) == bits(&w0),
                        "{fp8:?} dequantize {shape:?}, {t} threads"
                    );
                });
            }
        }
    }
}

#[test]
fn nvfp4_matches_serial() {
    let mut rng = Rng(11);
    for shape in shapes() {
        let src: Vec<f32> = (0..shape.len())
            .map(|_| rng.f32().clamp(-1e30, 1e30))
            .collect();
        let nv = Nvfp4::new();
        let (dl, sl) = (nv.data_len(shape).unwrap(), nv.scales_len(shape).unwrap());
        let (mut d0, mut s0) = (vec![0u8; dl], vec![0u8; sl]);
        let g0 = nv.quantize(&src, shape, &mut d0, &mut s0, None).unwrap();
        let mut w0 = vec![0.0f32; shape.len()];
        nv.dequantize(&d0, &s0, g0, shape, &mut w0).unwrap();
        for t in THREADS {
            in_pool(t, || {
                let (mut d, mut s) = (vec![0u8; dl], vec![0u8; sl]);
                let g = nv.par_quantize(&src, shape, &mut d, &mut s, None).unwrap();
                assert!(
                    g.to_bits() == g0.to_bits() && d == d0 && s == s0,
                    "Nvfp4 quantize {shape:?}, {t} threads"
                );
                let mut w = vec![0.0f32; shape.len()];
                nv.par_dequantize(&d0, &s0, g0, shape, &mut w).unwrap();
                assert!(
                    bits(&w) == bits(&w0),
                    "Nvfp4 dequantize {shape:?}, {t} threads"
                );
            });
        }
    }
}

/// The slice and byte checks again with streaming stores (`src/stream.rs`): in a child
/// process with the threshold at 4 KiB (`VCVT_STREAM_MIN_BYTES` is read once per process),
/// each chunk of a parallel conversion streams because the whole conversion is above the
/// threshold, and must still give the serial bits.
#[test]
#[cfg_attr(target_os = "wasi", ignore = "spawns a child process; WASI has none")]
fn streaming_parts_match_serial() {
    if std::env::var_os("VCVT_STREAM_MIN_BYTES").is_some() {
        return;
    }
    let children = ["slices_match_serial", "bytes_match_serial"];
    let out = common::rerun_self()
        .args(children)
        .args(["--exact", "--test-threads=2"])
        .env("VCVT_STREAM_MIN_BYTES", "4096")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    print!("{stdout}");
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the child run failed");
    assert!(
        stdout.contains("test result: ok. 2 passed"),
        "the child did not run both checks"
    );
}
