//! `serde` support (feature `serde`), as the `half` crate does it.
//!
//! Every element type serializes as a newtype struct of its bits (lossless and compact).
//! Deserializing accepts those bits, a string (parsed by the type's correctly rounded
//! `FromStr`), an `f32` or an `f64` (rounded once by `from_f32`/`from_f64`). In a
//! human-readable format (JSON, where a newtype struct is written as its content) an
//! integer is read as the bits and a string or a non-integer number as the value; a binary
//! format reads the bits. To write the
//! value instead of the bits, put [`serialize_as_f32`] or [`serialize_as_string`] (the
//! shortest round-trip text, `Display`) in `#[serde(serialize_with = "...")]`.
//!
//! ```
//! # #[cfg(feature = "std")] {
//! use vcvt::F16;
//! let x = F16::from_f32(0.1);
//! // bits by default (serde_json writes a newtype struct as its content)
//! assert_eq!(serde_json::to_string(&x).unwrap(), "11878");
//! let back: F16 = serde_json::from_str("11878").unwrap();
//! assert_eq!(back, x);
//! // the shortest string, which the `FromStr` impl reads back
//! let mut s = serde_json::Serializer::new(Vec::new());
//! vcvt::serde::serialize_as_string(&x, &mut s).unwrap();
//! assert_eq!(s.into_inner(), b"\"0.1\"");
//! let back: F16 = serde_json::from_str("\"0.1\"").unwrap();
//! assert_eq!(back, x);
//! # }
//! ```

use core::fmt;
use core::marker::PhantomData;

use ::serde::de::{self, Deserializer, Visitor};
use ::serde::{Deserialize, Serialize, Serializer};

use crate::*;

/// Serializes an element as its exact `f32` value (for `#[serde(serialize_with)]`).
pub fn serialize_as_f32<T, S>(x: &T, serializer: S) -> Result<S::Ok, S::Error>
where
    T: Copy + Into<f32>,
    S: Serializer,
{
    serializer.serialize_f32((*x).into())
}

/// Serializes an element as its `Display` string: the shortest decimal that parses back to
/// it (for `#[serde(serialize_with)]`; no allocation).
pub fn serialize_as_string<T, S>(x: &T, serializer: S) -> Result<S::Ok, S::Error>
where
    T: fmt::Display,
    S: Serializer,
{
    serializer.collect_str(x)
}

/// The visitor of every element type: bits in a newtype struct, a string, or a float.
struct ElementVisitor<T>(PhantomData<T>);

macro_rules! serde_impls {
    ($($t:ident($bits:ty)),*) => {$(
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_newtype_struct(stringify!($t), &self.to_bits())
            }
        }

        impl<'de> Visitor<'de> for ElementVisitor<$t> {
            type Value = $t;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(concat!("a ", stringify!($t), ": its bits, a string or a float"))
            }

            fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<$t, D::Error> {
                if d.is_human_readable() {
                    // JSON and the like hand the newtype's content over directly: an integer
                    // is the bits, a string or a float the value.
                    d.deserialize_any(self)
                } else {
                    <$bits>::deserialize(d).map($t::from_bits)
                }
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<$t, E> {
                match <$bits>::try_from(v) {
                    Ok(b) => Ok($t::from_bits(b)),
                    Err(_) => Err(E::invalid_value(de::Unexpected::Unsigned(v), &self)),
                }
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<$t, E> {
                match <$bits>::try_from(v) {
                    Ok(b) => Ok($t::from_bits(b)),
                    Err(_) => Err(E::invalid_value(de::Unexpected::Signed(v), &self)),
                }
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<$t, E> {
                v.parse()
                    .map_err(|_| E::invalid_value(de::Unexpected::Str(v), &"a float"))
            }

            fn visit_f32<E: de::Error>(self, v: f32) -> Result<$t, E> {
                Ok($t::from_f32(v))
            }

            fn visit_f64<E: de::Error>(self, v: f64) -> Result<$t, E> {
                Ok($t::from_f64(v))
            }
        }

        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
                d.deserialize_newtype_struct(stringify!($t), ElementVisitor::<$t>(PhantomData))
            }
        }
    )*};
}

/// The registry's lines (`src/format/mod.rs`) turned into `serde_impls!`: every format but
/// the packed `F4E2M1x2` (two values per byte, no single value to write), with its bits type.
macro_rules! serde_registry {
    ($($index:literal => $name:ident in $module:ident, $kind:ident, $role:ident;)*) => {$(
        serde_registry!(@one $name);
    )*};
    (@one F4E2M1x2) => {};
    (@one F16) => { serde_impls!(F16(u16)); };
    (@one BF16) => { serde_impls!(BF16(u16)); };
    (@one $name:ident) => { serde_impls!($name(u8)); };
}

crate::format::for_each_format!(serde_registry);
