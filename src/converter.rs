//! [`Converter`]: a conversion resolved once (backend, kernel, options) and called many
//! times, for loops that convert row by row.

use core::fmt;
use core::marker::PhantomData;
use core::mem::MaybeUninit;

use crate::backend::{Entry, active_entry};
use crate::options::Policy;
use crate::slice::{Route, length_mismatch, values};
use crate::{Backend, ConvertTo, Element, Error, Options};

/// A conversion from `S` to `D` resolved once: the backend, its kernel for the pair and the
/// options are chosen when the handle is made, so each call goes straight to the kernel.
///
/// Make one before a loop that converts many short slices (rows of a matrix, heads,
/// KV-cache pages) and call it inside. Every call checks the lengths as
/// [`convert_slice_with`](crate::convert_slice_with) does and writes the same bits (every
/// backend writes the same bits). The handle is small and `Copy`, `Send` and `Sync`; it
/// keeps the backend it was made for, whatever `VCVT_BACKEND` or later calls say.
///
/// ```
/// use vcvt::{BF16, Converter, Options};
///
/// // A 4 × 64 f32 matrix converted row by row into a BF16 buffer.
/// let (rows, cols) = (4, 64);
/// let weights: Vec<f32> = (0..rows * cols).map(|i| i as f32 * 0.01).collect();
/// let mut out = vec![BF16::ZERO; rows * cols];
///
/// let to_bf16 = Converter::<f32, BF16>::new(Options::new());
/// for (src, dst) in weights.chunks(cols).zip(out.chunks_mut(cols)) {
///     to_bf16.convert(src, dst);
/// }
/// assert_eq!(out[100].to_f32(), BF16::from_f32(1.0).to_f32());
/// ```
pub struct Converter<S, D> {
    entry: &'static Entry,
    route: Route,
    policy: Policy,
    // `fn` pointers: the handle holds no `S` or `D`, so it is `Send`, `Sync` and `Copy`
    // whatever they are.
    _pair: PhantomData<fn(S) -> D>,
}

impl<S, D> Clone for Converter<S, D> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S, D> Copy for Converter<S, D> {}

impl<S, D> fmt::Debug for Converter<S, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Converter")
            .field("source", &core::any::type_name::<S>())
            .field("destination", &core::any::type_name::<D>())
            .field("backend", &self.entry.backend())
            .field("overflow", &self.policy.overflow)
            .field("nan", &self.policy.nan)
            .finish()
    }
}

impl<S: ConvertTo<D>, D: Element> Converter<S, D> {
    /// The conversion on the active backend ([`Backend::active`]) with `options`.
    ///
    /// ```
    /// use vcvt::{Converter, F16, Options};
    /// let c = Converter::<f32, F16>::new(Options::new());
    /// let mut dst = [F16::ZERO; 2];
    /// c.convert(&[1.5, -2.0], &mut dst);
    /// assert_eq!(dst[1].to_f32(), -2.0);
    /// ```
    #[inline]
    pub fn new(options: Options) -> Self {
        Self::with_entry(active_entry(), options)
    }

    /// The conversion on `backend` with `options`.
    ///
    /// # Errors
    /// [`Error::BackendUnavailable`] if this CPU cannot run `backend`.
    ///
    /// ```
    /// use vcvt::{Backend, Converter, F8E4M3, Options};
    /// let c = Converter::<f32, F8E4M3>::on(Backend::Scalar, Options::new())?;
    /// assert_eq!(c.backend(), Backend::Scalar);
    /// # Ok::<(), vcvt::Error>(())
    /// ```
    #[inline]
    pub fn on(backend: Backend, options: Options) -> Result<Self, Error> {
        if !backend.is_available() {
            return Err(Error::BackendUnavailable { backend });
        }
        Ok(Self::with_entry(backend.entry(), options))
    }

    #[inline(always)]
    fn with_entry(entry: &'static Entry, options: Options) -> Self {
        let policy = options.resolve(S::PAIR.default_overflow);
        Converter {
            entry,
            route: Route::of::<S, D>(entry, policy),
            policy,
            _pair: PhantomData,
        }
    }

    /// The backend this handle runs on.
    #[inline]
    pub fn backend(&self) -> Backend {
        self.entry.backend()
    }

    /// Converts `src` into `dst`.
    ///
    /// # Panics
    /// If the lengths do not match (as [`convert_slice_with`](crate::convert_slice_with):
    /// equal lengths, or `src.len().div_ceil(2)` bytes on a packed FP4 side).
    ///
    /// ```
    /// use vcvt::{BF16, Converter, F8E4M3, Options};
    /// let c = Converter::<F8E4M3, BF16>::new(Options::new());
    /// let mut dst = [BF16::ZERO; 1];
    /// c.convert(&[F8E4M3::from_f32(0.75)], &mut dst);
    /// assert_eq!(dst[0].to_f32(), 0.75);
    /// ```
    #[inline]
    #[track_caller]
    pub fn convert(&self, src: &[S], dst: &mut [D]) {
        match values::<S, D>(src.len(), dst.len()) {
            // SAFETY: the slices hold `n` values (`values` checked their lengths) and cannot
            // overlap (one is `&mut`); the entry's backend was available when the handle
            // was made, and a CPU's features do not go away.
            Ok(n) => unsafe { self.run(src.as_ptr().cast(), dst.as_mut_ptr().cast(), n) },
            Err(e) => length_mismatch("Converter::convert", e),
        }
    }

    /// Converts `src` into `dst`, or returns [`Error::LengthMismatch`] (nothing written)
    /// if their lengths do not match.
    ///
    /// ```
    /// use vcvt::{Converter, F16, Options};
    /// let c = Converter::<f32, F16>::new(Options::new());
    /// assert!(c.try_convert(&[1.0, 2.0], &mut [F16::ZERO; 1]).is_err());
    /// ```
    #[inline]
    pub fn try_convert(&self, src: &[S], dst: &mut [D]) -> Result<(), Error> {
        let n = values::<S, D>(src.len(), dst.len())?;
        // SAFETY: as in `convert`.
        unsafe { self.run(src.as_ptr().cast(), dst.as_mut_ptr().cast(), n) };
        Ok(())
    }

    /// Converts `src` into an uninitialized destination and returns it, now initialized.
    ///
    /// # Panics
    /// If the lengths do not match, as [`convert`](Self::convert).
    ///
    /// ```
    /// use vcvt::{Converter, F16, Options};
    /// let c = Converter::<f32, F16>::new(Options::new());
    /// let mut v: Vec<F16> = Vec::with_capacity(2);
    /// let out = c.convert_uninit(&[1.0, 2.0], &mut v.spare_capacity_mut()[..2]);
    /// assert_eq!(out[1].to_f32(), 2.0);
    /// // SAFETY: both elements were just initialized.
    /// unsafe { v.set_len(2) };
    /// ```
    #[inline]
    #[track_caller]
    pub fn convert_uninit<'d>(&self, src: &[S], dst: &'d mut [MaybeUninit<D>]) -> &'d mut [D] {
        let n = match values::<S, D>(src.len(), dst.len()) {
            Ok(n) => n,
            Err(e) => length_mismatch("Converter::convert_uninit", e),
        };
        let len = dst.len();
        let out = dst.as_mut_ptr().cast::<D>();
        // SAFETY: as in `convert`; `MaybeUninit<D>` has `D`'s layout, and the kernel writes
        // every destination element without reading the destination.
        unsafe { self.run(src.as_ptr().cast(), out.cast(), n) };
        // SAFETY: the kernel wrote all `len` elements, so they are initialized; the pointer
        // and lifetime come from `dst`, which stays mutably borrowed for 'd.
        unsafe { core::slice::from_raw_parts_mut(out, len) }
    }

    /// Runs the resolved route over `n` values.
    ///
    /// # Safety
    /// As for [`Route::call`]: `src` readable for `n` `S` values and `dst` writable for `n`
    /// `D` values (packed sides in bytes), without overlap.
    #[inline(always)]
    unsafe fn run(&self, src: *const u8, dst: *mut u8, n: usize) {
        // SAFETY: forwarded; the route was made for this pair from this entry and policy,
        // and the entry's backend is available (checked when the handle was made).
        unsafe {
            self.route
                .call::<S, D>(self.entry, n, src, dst, n, self.policy)
        }
    }
}

#[cfg(feature = "__internal-tests")]
pub(crate) mod internal_tests {
    //! Each route a handle can take, on every available backend, against the Scalar
    //! backend's free functions (so that Miri, which runs tests/internals.rs, sees the
    //! handle's pointer code).
    use super::*;
    use crate::{BF16, F8E4M3, F8E4M3FNUZ, NanPolicy, Overflow, convert_slice_on};

    const SRC: [f32; 19] = [
        0.0,
        -0.0,
        1.0,
        -1.5,
        0.1,
        448.0,
        500.0,
        -1e6,
        1e-9,
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        3.0,
        0.3,
        -0.07,
        2.5,
        17.0,
        -240.0,
        6.0e-5,
    ];
    const N: usize = SRC.len();

    /// Every route of a [`Converter`] on every available backend and NaN policy against
    /// `convert_slice_on(Backend::Scalar, ..)`, and the length check of `try_convert`.
    pub fn every_route_matches_the_free_functions_on_scalar() {
        let s = Backend::Scalar;
        for b in Backend::available() {
            for nan in [NanPolicy::Preserve, NanPolicy::Canonical, NanPolicy::ToMax] {
                let o = Options::new().nan(nan).overflow(Overflow::Saturate);
                // f32 -> E4M3: a table kernel (with the NaN patch unless `Preserve`).
                let (mut q, mut want_q) = ([F8E4M3::ZERO; N], [F8E4M3::ZERO; N]);
                Converter::<f32, F8E4M3>::on(b, o)
                    .unwrap()
                    .convert(&SRC, &mut q);
                convert_slice_on(s, &SRC, &mut want_q, o).unwrap();
                assert_eq!(
                    q.map(|x| x.to_bits()),
                    want_q.map(|x| x.to_bits()),
                    "{b} {nan:?}"
                );
                // E4M3 -> BF16 -> FNUZ: narrow -> narrow pairs (direct kernels under
                // `Preserve`, else two halves through a buffer).
                let c = Converter::<F8E4M3, BF16>::on(b, o).unwrap();
                let (mut z, mut want_z) = ([BF16::ZERO; N], [BF16::ZERO; N]);
                c.convert(&q, &mut z);
                convert_slice_on(s, &q, &mut want_z, o).unwrap();
                assert_eq!(
                    z.map(|x| x.to_bits()),
                    want_z.map(|x| x.to_bits()),
                    "{b} {nan:?}"
                );
                let mut out = [MaybeUninit::new(F8E4M3FNUZ::ZERO); N];
                let mut want = [F8E4M3FNUZ::ZERO; N];
                let c2 = Converter::<BF16, F8E4M3FNUZ>::on(b, o).unwrap();
                let out = c2.convert_uninit(&z, &mut out);
                convert_slice_on(s, &z, &mut want, o).unwrap();
                assert_eq!(
                    out.iter()
                        .map(|x| x.to_bits())
                        .collect::<alloc::vec::Vec<_>>(),
                    want.iter()
                        .map(|x| x.to_bits())
                        .collect::<alloc::vec::Vec<_>>(),
                    "{b} {nan:?}"
                );
                assert!(c.try_convert(&q, &mut z[1..]).is_err());
            }
        }
    }
}
