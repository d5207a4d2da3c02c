//! Every size `vcvt-st` derives from a checkpoint's header or from an argument, computed
//! with checked arithmetic in one place.
//!
//! A header is untrusted: the safetensors crate checks that each tensor's element count
//! times its element size is the length of its bytes, but a tensor with a zero dimension
//! holds no bytes whatever its other dimensions claim (`[2^60, 0, 16]` is a valid empty
//! tensor), so a product of *some* of its dimensions, or a dimension times a factor, can
//! be anything. Here such a size is either exact or an error that names the tensor; the
//! writer's loops then run over the values present (none for an empty tensor), never over
//! a claimed dimension.

use safetensors::Dtype;
use vcvt::safetensors::Format;

/// The largest `--fp8-block`: a tile side beyond any tensor dimension of a real checkpoint
/// (larger tiles would only ever be one tile per tensor).
pub(crate) const MAX_FP8_BLOCK: usize = 1 << 20;

/// `clap` parser of `--fp8-block`: 1 ..= [`MAX_FP8_BLOCK`].
pub(crate) fn parse_fp8_block(s: &str) -> Result<usize, String> {
    let b: usize = s
        .parse()
        .map_err(|_| format!("`{s}` is not a number from 1 to {MAX_FP8_BLOCK}"))?;
    if (1..=MAX_FP8_BLOCK).contains(&b) {
        Ok(b)
    } else {
        Err(format!("{b} is not from 1 to {MAX_FP8_BLOCK}"))
    }
}

/// The most `--threads`: rayon starts them all at once, so a huge count would only exhaust
/// the process's threads or memory.
pub(crate) const MAX_THREADS: usize = 1024;

/// `clap` parser of `--threads`: 1 ..= [`MAX_THREADS`].
pub(crate) fn parse_threads(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=MAX_THREADS).contains(&n) => Ok(n),
        _ => Err(format!(
            "`{s}` is not a number from 1 to {MAX_THREADS} (without --threads, all cores are used)"
        )),
    }
}

/// The product of `dims`, or an error naming tensor `name`.
pub(crate) fn product(name: &str, what: &str, dims: &[usize]) -> Result<usize, String> {
    dims.iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or_else(|| format!("tensor `{name}`: {what} of shape {dims:?} does not fit in 64 bits"))
}

/// Bytes of a tensor of `dtype` and `shape`, or an error naming tensor `name`.
pub(crate) fn bytes(name: &str, dtype: Dtype, shape: &[usize]) -> Result<usize, String> {
    let n = product(name, "the element count", shape)?;
    let b = match Format::from_dtype(dtype) {
        Some(f) => f.bytes_for(n),
        None => n.checked_mul(dtype.bitsize()).map(|bits| bits.div_ceil(8)),
    };
    b.ok_or_else(|| {
        format!("tensor `{name}`: {dtype} {shape:?} holds more bytes than 64 bits count")
    })
}

/// What dequantizing MXFP4 `*_blocks` of `shape` (`[..., G, 16]`, checked by the caller)
/// gives: `rows` (the product of the leading dimensions), `cols` (`G · 32`) and the output
/// shape `[..., G · 32]`.
pub(crate) fn mx_dequant(
    name: &str,
    shape: &[usize],
) -> Result<(usize, usize, Vec<usize>), String> {
    let n = shape.len();
    let rows = product(name, "the row count", &shape[..n - 2])?;
    let cols = shape[n - 2].checked_mul(32).ok_or_else(|| {
        format!(
            "tensor `{name}` {shape:?}: {} blocks of 32 values per row do not fit in 64 bits",
            shape[n - 2]
        )
    })?;
    let mut out = shape[..n - 2].to_vec();
    out.push(cols);
    product(name, "the dequantized element count", &out)?;
    Ok((rows, cols, out))
}

/// Rows of a `rows × cols` matrix that a step of about `step` values covers: whole multiples
/// of `unit` rows (tile rows), at least `unit`, never zero, without overflow.
pub(crate) fn step_rows(step: usize, unit: usize, cols: usize) -> usize {
    let unit = unit.max(1);
    let per = step / unit.saturating_mul(cols).max(1);
    per.max(1).saturating_mul(unit)
}

/// The sum of the output sizes, or an error.
pub(crate) fn total(sizes: impl IntoIterator<Item = usize>) -> Result<u64, String> {
    sizes
        .into_iter()
        .try_fold(0u64, |a, b| a.checked_add(b as u64))
        .ok_or_else(|| "the output would hold more bytes than 64 bits count".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_sizes() {
        assert_eq!(product("t", "x", &[1 << 60, 0, 16]), Ok(0));
        assert!(product("t", "x", &[1 << 40, 1 << 40, 0]).is_err());
        let e = mx_dequant("b", &[0, 1 << 59, 16]).unwrap_err();
        assert!(e.contains("`b`"), "{e}");
        assert_eq!(
            mx_dequant("b", &[1 << 60, 0, 16]),
            Ok((1 << 60, 0, vec![1 << 60, 0]))
        );
        assert!(bytes("t", Dtype::F32, &[1 << 62, 2]).is_err());
        assert_eq!(bytes("t", Dtype::F32, &[1 << 62, 0]), Ok(0));
        assert_eq!(step_rows(1 << 22, usize::MAX, 3), usize::MAX);
        assert_eq!(step_rows(1 << 22, 128, 1024), 32 * 128);
        assert!(step_rows(1 << 22, 128, 0) > 0);
        assert_eq!(step_rows(1 << 22, 1, 1 << 30), 1);
        assert!(parse_fp8_block("9223372036854775808").is_err());
        assert!(parse_fp8_block("0").is_err());
        assert_eq!(parse_fp8_block("128"), Ok(128));
        assert!(total([usize::MAX, usize::MAX, 2]).is_err());
        assert!(parse_threads("0").is_err() && parse_threads("1000000").is_err());
        assert_eq!(parse_threads("4"), Ok(4));
    }
}
