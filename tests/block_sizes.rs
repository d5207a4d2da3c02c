//! Property tests of the block API's size arithmetic on hostile shapes (huge, zero and
//! wrapping dimensions, issue 33): every length is the exact `u128` value of the documented
//! formula or an error, never a wrapped number, and no conversion panics or loops over a
//! claimed dimension. The oracle is the formula computed in `u128`, not the library.

use proptest::prelude::*;
use vcvt::block::{BlockFp8, Mx, MxElement, Nvfp4, Shape};
use vcvt::{BF16, Error};

/// Dimensions that matter: zero, small, around powers of two, and near `usize::MAX`.
fn dim() -> impl Strategy<Value = usize> {
    prop_oneof![
        Just(0usize),
        1usize..300,
        (0u32..usize::BITS).prop_map(|k| 1usize << k),
        (0u32..usize::BITS, -2i64..=2).prop_map(|(k, d)| (1usize << k).wrapping_add(d as usize)),
        (0usize..4).prop_map(|d| usize::MAX - d),
        any::<usize>(),
    ]
}

/// `(rows − 1) · stride + cols` in `u128`, `None` when it exceeds `usize`.
fn oracle_len(rows: usize, cols: usize, stride: usize) -> Option<usize> {
    if rows == 0 || cols == 0 {
        return Some(0);
    }
    let n = (rows as u128 - 1) * stride as u128 + cols as u128;
    usize::try_from(n).ok()
}

/// `a · b` in `u128`, `None` when it exceeds `usize`.
fn mul(a: u128, b: u128) -> Option<usize> {
    usize::try_from(a * b).ok()
}

fn is_shape_error(e: &Error) -> bool {
    matches!(e, Error::BlockShape { .. } | Error::BlockLength { .. })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn shape_len_is_exact_or_saturates(rows in dim(), cols in dim(), stride in dim()) {
        for s in [Shape::matrix(rows, cols), Shape::matrix(rows, cols).with_stride(stride)] {
            let want = oracle_len(s.rows(), s.cols(), s.stride());
            prop_assert_eq!(s.checked_len(), want);
            prop_assert_eq!(s.len(), want.unwrap_or(usize::MAX));
            prop_assert_eq!(s.is_empty(), s.checked_len() == Some(0));
            prop_assert_eq!(s.is_empty(), rows == 0 || cols == 0);
        }
    }

    #[test]
    fn lengths_are_exact_or_errors(rows in dim(), cols in dim(), tile_r in dim(), tile_c in dim()) {
        let shape = Shape::matrix(rows, cols);
        let fits = (rows as u128) * (cols as u128) <= usize::MAX as u128;
        let (r, c) = (rows as u128, cols as u128);

        let mx4 = Mx::new(MxElement::E2M1);
        match (mx4.data_len(shape), mx4.scales_len(shape)) {
            (Ok(d), Ok(s)) => {
                prop_assert_eq!(Some(d), mul(r, c.div_ceil(2)));
                prop_assert_eq!(Some(s), mul(r, c.div_ceil(32)));
            }
            (d, s) => {
                prop_assert!(!fits, "{rows}x{cols}: {d:?} {s:?}");
                for e in [d.err(), s.err()].into_iter().flatten() {
                    prop_assert!(is_shape_error(&e));
                }
            }
        }
        let mx8 = Mx::new(MxElement::E4M3);
        match mx8.data_len(shape) {
            Ok(d) => prop_assert_eq!(Some(d), mul(r, c)),
            Err(e) => prop_assert!(!fits && is_shape_error(&e)),
        }
        let nv = Nvfp4::new();
        match (nv.data_len(shape), nv.scales_len(shape)) {
            (Ok(d), Ok(s)) => {
                prop_assert_eq!(Some(d), mul(r, c.div_ceil(2)));
                prop_assert_eq!(Some(s), mul(r, c.div_ceil(16)));
            }
            (d, s) => prop_assert!(!fits, "{rows}x{cols}: {d:?} {s:?}"),
        }
        let fp8 = BlockFp8::new(tile_r, tile_c);
        match (fp8.data_len(shape), fp8.scale_inv_len(shape)) {
            (Ok(d), Ok(s)) => {
                prop_assert!(tile_r > 0 && tile_c > 0);
                prop_assert_eq!(Some(d), mul(r, c));
                let tiles = r.div_ceil(tile_r as u128) * c.div_ceil(tile_c as u128);
                prop_assert_eq!(Some(s), mul(tiles, 4));
            }
            (d, s) => {
                // (r / tile_r) · (c / tile_c) < 2^128, but times 4 it need not be: checked.
                let tiles_fit = tile_r > 0
                    && tile_c > 0
                    && (r.div_ceil(tile_r as u128) * c.div_ceil(tile_c as u128))
                        .checked_mul(4)
                        .is_some_and(|b| b <= usize::MAX as u128);
                prop_assert!(!fits || !tiles_fit, "{rows}x{cols} / {tile_r}x{tile_c}: {d:?} {s:?}");
            }
        }
    }

    /// Conversions with buffers that cannot match a huge shape refuse it at once; a shape
    /// with a zero dimension converts nothing, whatever the other dimension claims (no loop
    /// over 2^60 empty rows).
    #[test]
    fn conversions_refuse_or_finish_at_once(rows in dim(), cols in dim(), stride in dim()) {
        let shape = Shape::matrix(rows, cols).with_stride(stride);
        let start = std::time::Instant::now();
        let mut out = [BF16::ZERO; 64];
        let n = shape.len().min(64);
        let (data, scales) = ([0u8; 64], [0u8; 64]);
        let mx = Mx::new(MxElement::E2M1);
        let d = mx.data_len(shape).unwrap_or(0).min(64);
        let s = mx.scales_len(shape).unwrap_or(0).min(64);
        let r = mx.dequantize(&data[..d], &scales[..s], shape, &mut out[..n]);
        let extent_fits = (rows as u128) * (stride.max(cols) as u128) <= usize::MAX as u128;
        if shape.is_empty() && (rows <= 1 || stride >= cols) && extent_fits {
            prop_assert!(r.is_ok(), "{shape:?}: {r:?}");
        }
        if shape.checked_len().is_none_or(|l| l > 64) {
            prop_assert!(r.is_err(), "{shape:?}");
        }
        let fp8 = BlockFp8::deepseek();
        let d = fp8.data_len(shape).unwrap_or(0).min(64);
        let s = fp8.scale_inv_len(shape).unwrap_or(0).min(64);
        let r = fp8.dequantize(&data[..d], &scales[..s], shape, &mut out[..n]);
        if shape.checked_len().is_none_or(|l| l > 64) {
            prop_assert!(r.is_err(), "{shape:?}");
        }
        let src = [0f32; 64];
        let (mut q, mut sc) = ([0u8; 64], [0u8; 64]);
        let d = mx.data_len(shape).unwrap_or(0).min(64);
        let s = mx.scales_len(shape).unwrap_or(0).min(64);
        let r = mx.quantize(&src[..n], shape, &mut q[..d], &mut sc[..s]);
        if shape.checked_len().is_none_or(|l| l > 64) {
            prop_assert!(r.is_err(), "{shape:?}");
        }
        prop_assert!(start.elapsed() < std::time::Duration::from_secs(1), "{shape:?} took {:?}", start.elapsed());
    }
}

/// The examples of issue 33.
#[test]
fn issue_33_examples() {
    let s = Shape::matrix(1 << 63, 2);
    assert_eq!(s.checked_len(), None);
    assert_eq!(s.len(), usize::MAX);
    assert!(!s.is_empty());
    let mut out = [0f32; 4];
    let e = Mx::new(MxElement::E2M1)
        .dequantize(&[0u8; 2], &[0u8; 1], s, &mut out)
        .unwrap_err();
    assert!(matches!(e, Error::BlockShape { .. }), "{e:?}");
    // A zero dimension beside a huge one: nothing to do, done at once.
    let z = Shape::matrix(1 << 60, 0);
    assert_eq!((z.len(), z.is_empty()), (0, true));
    Mx::new(MxElement::E2M1)
        .dequantize(&[], &[], z, &mut [] as &mut [f32])
        .unwrap();
}
