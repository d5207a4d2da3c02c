//! The x86-64 implementations of [`Vector`](super::Vector) and their kernel instantiations.

pub(crate) mod avx512;
