//! Same-process A/B of two vcvt trees (`run.sh` builds it): every pair below converted by the
//! old and the new crate in alternating 5 ms batches on the same buffers, 9 batches each, after
//! a check that both write the same bytes. One line per pair: the old and new el/ns (medians
//! of the batches) and new/old. Inputs: finite codes (narrow sources) or f32 values spread
//! over several binades. `AB_PAIRS=a,b` times only the pairs whose name contains `a` or `b`
//! (e.g. `AB_PAIRS="f32 -> F16,F8E4M3 -> BF16"`).
use std::time::Instant;

/// Whether `AB_PAIRS` (if set) selects pair `name`.
fn selected(name: &str) -> bool {
    match std::env::var("AB_PAIRS") {
        Ok(f) => f.split(',').any(|p| name.contains(p.trim())),
        Err(_) => true,
    }
}

fn batch(f: &mut dyn FnMut()) -> f64 {
    let t = Instant::now();
    let mut n = 0u64;
    while t.elapsed().as_micros() < 5000 {
        for _ in 0..20 {
            f();
        }
        n += 20;
    }
    t.elapsed().as_nanos() as f64 / n as f64
}
fn ab(name: &str, mut o: impl FnMut(), mut n: impl FnMut(), len: usize) {
    if !selected(name) {
        return;
    }
    for _ in 0..3 {
        o();
        n();
    }
    let (mut to, mut tn) = (vec![], vec![]);
    for _ in 0..9 {
        to.push(batch(&mut o));
        tn.push(batch(&mut n));
    }
    to.sort_by(|a, b| a.partial_cmp(b).unwrap());
    tn.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let (mo, mn) = (to[4], tn[4]);
    println!(
        "{name:28} old {:6.2} new {:6.2} el/ns  new/old {:.2}",
        len as f64 / mo,
        len as f64 / mn,
        mo / mn
    );
}
// SAFETY (every `unsafe` below): the old and new crates' element types are the same
// `#[repr(transparent)]` bit containers (or f32/f64), so one buffer is read and written as
// either crate's type; every slice covers exactly the `len` elements of `src` or `dst`, and no
// two of them are alive at once.
macro_rules! pairs {
    ($len:expr, $($s:ident -> $d:ident),* $(,)?) => {{
        $(
        {
            let src: Vec<nt::$s> = mkv::<nt::$s>($len);
            let mut dst = vec![<nt::$d as Default>::default(); $len];
            let src_o: &[ot::$s] = unsafe { std::slice::from_raw_parts(src.as_ptr().cast(), $len) };
            let dst_p = dst.as_mut_ptr();
            ab(concat!(stringify!($s), " -> ", stringify!($d)),
               || { let d: &mut [ot::$d] = unsafe { std::slice::from_raw_parts_mut(dst_p.cast(), $len) }; old::convert_slice(std::hint::black_box(src_o), d) },
               || { let d: &mut [nt::$d] = unsafe { std::slice::from_raw_parts_mut(dst_p.cast(), $len) }; new::convert_slice(std::hint::black_box(&src[..]), d) }, $len);
            {
                let d: &mut [ot::$d] = unsafe { std::slice::from_raw_parts_mut(dst_p.cast(), $len) };
                old::convert_slice(src_o, d);
                let a: Vec<u8> = unsafe { std::slice::from_raw_parts(dst_p.cast::<u8>(), $len * std::mem::size_of::<nt::$d>()) }.to_vec();
                let d: &mut [nt::$d] = unsafe { std::slice::from_raw_parts_mut(dst_p.cast(), $len) };
                new::convert_slice(&src[..], d);
                let b = unsafe { std::slice::from_raw_parts(dst_p.cast::<u8>(), $len * std::mem::size_of::<nt::$d>()) };
                assert!(a == b, "old and new differ");
            }
        }
        )*
    }};
}
trait Gen {
    fn mk(i: u64) -> Self;
}
macro_rules! gen_code { ($($t:ident $m:expr),*) => { $(impl Gen for new::$t { fn mk(i: u64) -> Self { let mut c = ((i.wrapping_mul(0x9E3779B97F4A7C15) >> 56) as u8) & $m; if <new::$t>::from_bits(c).to_f32().is_nan() || <new::$t>::from_bits(c).to_f32().is_infinite() { c = 0x3; } <new::$t>::from_bits(c) } })* } }
gen_code!(F8E4M3 0xFF, F8E5M2 0xFF, F8E4M3FNUZ 0xFF, F8E5M2FNUZ 0xFF, F8E3M4 0xFF, F8E4M3IEEE 0xFF, F8E4M3B11FNUZ 0xFF, F8E5M3FNU 0xFF, F6E2M3 0x3F, F6E3M2 0x3F, F4E2M1 0x0F, F8E8M0 0xFF);
impl Gen for f32 {
    fn mk(i: u64) -> Self {
        let x = (i.wrapping_mul(0x9E3779B97F4A7C15) >> 40) as u32;
        (x as f32 / 16777216.0 - 0.5) * 2f32.powi((x % 12) as i32 - 4)
    }
}
impl Gen for f64 {
    fn mk(i: u64) -> Self {
        f32::mk(i) as f64
    }
}
impl Gen for new::F16 {
    fn mk(i: u64) -> Self {
        new::F16::from_f32(f32::mk(i))
    }
}
impl Gen for new::BF16 {
    fn mk(i: u64) -> Self {
        new::BF16::from_f32(f32::mk(i))
    }
}
fn mkv<T: Gen>(n: usize) -> Vec<T> {
    (0..n as u64).map(T::mk).collect()
}
mod nt {
    pub use new::*;
    #[allow(non_camel_case_types)]
    pub type f32 = core::primitive::f32;
    #[allow(non_camel_case_types)]
    pub type f64 = core::primitive::f64;
}
mod ot {
    pub use old::*;
    #[allow(non_camel_case_types)]
    pub type f32 = core::primitive::f32;
    #[allow(non_camel_case_types)]
    pub type f64 = core::primitive::f64;
}
/// Busy work for 300 ms, so that the first pair is not timed while the core clocks up.
fn warm_up() {
    let t = Instant::now();
    let mut x = 1.0f64;
    while t.elapsed().as_millis() < 300 {
        for _ in 0..1000 {
            x = std::hint::black_box(x * 1.000001 + 1e-9);
        }
    }
}
fn main() {
    warm_up();
    let len: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(1024);
    run(len);
}

fn run(len: usize) {
    pairs!(len, f32 -> F8E4M3,
        f32 -> F8E5M2,
        f32 -> F8E4M3FNUZ,
        f32 -> F8E5M2FNUZ,
        f32 -> F8E3M4,
        f32 -> F8E4M3IEEE,
        f32 -> F8E4M3B11FNUZ,
        f32 -> F8E5M3FNU,
        f32 -> F6E2M3,
        f32 -> F6E3M2,
        f32 -> F4E2M1,
        f64 -> F8E4M3,
        f64 -> F8E5M2,
        f64 -> F8E4M3FNUZ,
        f64 -> F8E5M2FNUZ,
        f64 -> F8E3M4,
        f64 -> F8E4M3IEEE,
        f64 -> F8E4M3B11FNUZ,
        f64 -> F8E5M3FNU,
        f64 -> F6E2M3,
        f64 -> F6E3M2,
        f64 -> F4E2M1,
        F16 -> F8E4M3,
        F16 -> F8E5M2,
        F16 -> F8E4M3FNUZ,
        F16 -> F8E5M2FNUZ,
        F16 -> F8E3M4,
        F16 -> F8E4M3IEEE,
        F16 -> F8E4M3B11FNUZ,
        F16 -> F8E5M3FNU,
        F16 -> F6E2M3,
        F16 -> F6E3M2,
        F16 -> F4E2M1,
        BF16 -> F8E4M3,
        BF16 -> F8E5M2,
        BF16 -> F8E4M3FNUZ,
        BF16 -> F8E5M2FNUZ,
        BF16 -> F8E3M4,
        BF16 -> F8E4M3IEEE,
        BF16 -> F8E4M3B11FNUZ,
        BF16 -> F8E5M3FNU,
        BF16 -> F6E2M3,
        BF16 -> F6E3M2,
        BF16 -> F4E2M1,
        F8E4M3 -> f32,
        F8E5M2 -> f32,
        F8E4M3FNUZ -> f32,
        F8E5M2FNUZ -> f32,
        F8E3M4 -> f32,
        F8E4M3IEEE -> f32,
        F8E4M3B11FNUZ -> f32,
        F8E5M3FNU -> f32,
        F6E2M3 -> f32,
        F6E3M2 -> f32,
        F4E2M1 -> f32,
        F8E4M3 -> f64,
        F8E5M2 -> f64,
        F8E4M3FNUZ -> f64,
        F8E5M2FNUZ -> f64,
        F8E3M4 -> f64,
        F8E4M3IEEE -> f64,
        F8E4M3B11FNUZ -> f64,
        F8E5M3FNU -> f64,
        F6E2M3 -> f64,
        F6E3M2 -> f64,
        F4E2M1 -> f64,
        F8E4M3 -> F16,
        F8E5M2 -> F16,
        F8E4M3FNUZ -> F16,
        F8E5M2FNUZ -> F16,
        F8E3M4 -> F16,
        F8E4M3IEEE -> F16,
        F8E4M3B11FNUZ -> F16,
        F8E5M3FNU -> F16,
        F6E2M3 -> F16,
        F6E3M2 -> F16,
        F4E2M1 -> F16,
        F8E4M3 -> BF16,
        F8E5M2 -> BF16,
        F8E4M3FNUZ -> BF16,
        F8E5M2FNUZ -> BF16,
        F8E3M4 -> BF16,
        F8E4M3IEEE -> BF16,
        F8E4M3B11FNUZ -> BF16,
        F8E5M3FNU -> BF16,
        F6E2M3 -> BF16,
        F6E3M2 -> BF16,
        F4E2M1 -> BF16,
        f32 -> F16,
        f32 -> BF16,
        F16 -> f32,
        BF16 -> f32,
        F16 -> BF16,
        BF16 -> F16,
        f32 -> F8E8M0,
        F8E8M0 -> f32,
        F8E8M0 -> BF16,
        f64 -> F16,
        f64 -> BF16,
        F16 -> f64,
        BF16 -> f64);
}
