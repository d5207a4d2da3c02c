//! A tensor of a checkpoint, as its header gives it.

use safetensors::Dtype;

/// A tensor of the checkpoint.
#[derive(Clone, Debug)]
pub(crate) struct Tensor {
    /// Which shard of the checkpoint holds it.
    pub shard: usize,
    pub dtype: Dtype,
    pub shape: Vec<usize>,
    pub bytes: usize,
}
