//! The `safetensors` feature: dtype mapping both ways, and `TensorView`s of a file (with
//! misaligned tensors, as other writers make them) converted into typed and uninitialised
//! destinations, checked against the `half` and `float8` crates' decoders.
#![cfg(feature = "safetensors")]

use std::mem::MaybeUninit;

use safetensors::{Dtype, SafeTensors};
use vcvt::safetensors::{
    Format, TensorErrorKind, convert_tensor, convert_tensor_uninit, tensor_to_vec,
};
use vcvt::{BF16, F16};

#[test]
fn dtype_mapping_round_trips() {
    let all = [
        Dtype::F32,
        Dtype::F64,
        Dtype::F16,
        Dtype::BF16,
        Dtype::F8_E4M3,
        Dtype::F8_E5M2,
        Dtype::F8_E4M3FNUZ,
        Dtype::F8_E5M2FNUZ,
        Dtype::F8_E8M0,
        Dtype::F6_E2M3,
        Dtype::F6_E3M2,
        Dtype::F4,
    ];
    for d in all {
        let f = Format::from_dtype(d).unwrap_or_else(|| panic!("{d} has no format"));
        assert_eq!(f.dtype(), d);
        // The byte count agrees with safetensors' own bit size.
        assert_eq!(f.bytes_for(8), Some(8 * d.bitsize() / 8));
    }
    for d in [
        Dtype::BOOL,
        Dtype::U8,
        Dtype::I8,
        Dtype::I16,
        Dtype::U16,
        Dtype::I32,
        Dtype::U32,
        Dtype::I64,
        Dtype::U64,
        Dtype::C64,
    ] {
        assert_eq!(Format::from_dtype(d), None, "{d}");
    }
}

/// A safetensors file built by hand, with tensors at odd offsets: `a` 3 bytes of U8, then
/// `bf` (BF16 [2, 3]), `h` (F16 [5]), `e` (F8_E4M3 [4]), `f4` (F4 [6]).
fn misaligned_file(bf: &[u16], h: &[u16], e: &[u8], f4: &[u8]) -> Vec<u8> {
    let mut data = vec![1u8, 2, 3];
    let mut entries = Vec::new();
    let mut add = |name: &str, dtype: &str, shape: &str, bytes: &[u8], data: &mut Vec<u8>| {
        let s = data.len();
        data.extend_from_slice(bytes);
        entries.push(format!(
            "\"{name}\":{{\"dtype\":\"{dtype}\",\"shape\":{shape},\"data_offsets\":[{s},{}]}}",
            data.len()
        ));
    };
    let le16 = |v: &[u16]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>();
    add("bf", "BF16", "[2,3]", &le16(bf), &mut data);
    add("h", "F16", "[5]", &le16(h), &mut data);
    add("e", "F8_E4M3", "[4]", e, &mut data);
    add("f4", "F4", "[6]", f4, &mut data);
    let header = format!(
        "{{\"a\":{{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[0,3]}},{}}}",
        entries.join(",")
    );
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend_from_slice(header.as_bytes());
    file.extend_from_slice(&data);
    file
}

#[test]
fn tensors_of_a_misaligned_file() {
    let bf = [0x3F80u16, 0xC040, 0x0001, 0x7F80, 0xFFC1, 0x8000];
    let h = [0x3C00u16, 0xC000, 0x0001, 0x7BFF, 0xFC00];
    let e = [0x38u8, 0xC0, 0x7E, 0x01];
    let f4 = [0x21u8, 0x7F, 0x9A];
    let file = misaligned_file(&bf, &h, &e, &f4);
    let st = SafeTensors::deserialize(&file).unwrap();

    let v = st.tensor("bf").unwrap();
    let got: Vec<f32> = tensor_to_vec("bf", &v).unwrap();
    let want: Vec<f32> = bf
        .iter()
        .map(|&b| half::bf16::from_bits(b).to_f32())
        .collect();
    assert_eq!(
        got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        want.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );

    let v = st.tensor("h").unwrap();
    let mut un = [MaybeUninit::<f64>::uninit(); 5];
    let got = convert_tensor_uninit("h", &v, &mut un).unwrap();
    let want: Vec<f64> = h
        .iter()
        .map(|&b| half::f16::from_bits(b).to_f64())
        .collect();
    assert_eq!(got, &want[..]);

    // F16 into F16 is a copy; BF16 into F16 one rounding (half's from_f32 of the exact value).
    let mut same = [F16::ZERO; 5];
    convert_tensor("h", &st.tensor("h").unwrap(), &mut same).unwrap();
    assert_eq!(same.map(|x| x.to_bits()), h);
    let mut hb = [F16::ZERO; 6];
    convert_tensor("bf", &st.tensor("bf").unwrap(), &mut hb).unwrap();
    for (i, (&g, &b)) in hb.iter().zip(&bf).enumerate() {
        let x = half::bf16::from_bits(b).to_f32();
        if x.is_nan() {
            assert!(g.is_nan());
        } else {
            assert_eq!(g.to_bits(), half::f16::from_f32(x).to_bits(), "element {i}");
        }
    }

    let v = st.tensor("e").unwrap();
    let got: Vec<BF16> = tensor_to_vec("e", &v).unwrap();
    let want: Vec<f32> = e
        .iter()
        .map(|&b| float8::F8E4M3::from_bits(b).to_f32())
        .collect();
    assert_eq!(got.iter().map(|x| x.to_f32()).collect::<Vec<_>>(), want);

    // F4: element 2j in the low nibble of byte j; E2M1 values 0, .5, 1, 1.5, 2, 3, 4, 6.
    let e2m1 = [0.0f32, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
    let dec = |n: u8| {
        if n & 8 != 0 {
            -e2m1[(n & 7) as usize]
        } else {
            e2m1[n as usize]
        }
    };
    let want: Vec<f32> = f4
        .iter()
        .flat_map(|&b| [dec(b & 15), dec(b >> 4)])
        .collect();
    let got: Vec<f32> = tensor_to_vec("f4", &st.tensor("f4").unwrap()).unwrap();
    assert_eq!(got, want);
}

#[test]
fn errors_name_the_tensor() {
    let file = misaligned_file(&[0; 6], &[0; 5], &[0; 4], &[0; 3]);
    let st = SafeTensors::deserialize(&file).unwrap();
    let err = tensor_to_vec::<f32>("a", &st.tensor("a").unwrap()).unwrap_err();
    assert_eq!(err.kind(), &TensorErrorKind::UnsupportedDtype);
    assert_eq!(
        err.to_string(),
        "tensor `a` (U8 [3]): vcvt converts no U8 tensors"
    );

    let mut small = [0.0f32; 5];
    let err = convert_tensor("bf", &st.tensor("bf").unwrap(), &mut small).unwrap_err();
    assert_eq!(err.tensor(), "bf");
    assert_eq!(err.dtype(), Dtype::BF16);
    assert_eq!(err.shape(), &[2, 3]);
    assert_eq!(err.kind(), &TensorErrorKind::Length { values: 6, dst: 5 });
    assert_eq!(small, [0.0; 5], "nothing is written on error");

    let bytes = [0u8; 16];
    let v = safetensors::tensor::TensorView::new(Dtype::F64, vec![2], &bytes).unwrap();
    let err = tensor_to_vec::<f32>("d", &v).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tensor `d` (F64 [2]): vcvt has no conversion from F64 to F32"
    );
    let v = safetensors::tensor::TensorView::new(Dtype::F6_E2M3, vec![4], &bytes[..3]).unwrap();
    assert_eq!(
        tensor_to_vec::<f32>("six", &v).unwrap_err().kind(),
        &TensorErrorKind::PackedFp6
    );
}

#[cfg(feature = "rayon")]
#[test]
fn parallel_tensor_conversion_matches() {
    let n: usize = 1 << 20;
    let bytes: Vec<u8> = (0..2 * n).map(|i| (i * 7919 % 251) as u8).collect();
    let v = safetensors::tensor::TensorView::new(Dtype::BF16, vec![1024, 1024], &bytes).unwrap();
    let a: Vec<F16> = vcvt::safetensors::par_tensor_to_vec("w", &v).unwrap();
    let b: Vec<F16> = tensor_to_vec("w", &v).unwrap();
    assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
}
