//! The values collectives carry and reduce, and how they travel: little-endian, element by
//! element, so ranks of different byte order agree. On a little-endian host that is the host's
//! own layout, so buffers go on the wire as they are, without a copy.

use std::borrow::Cow;

use crate::error::{Result, TransportError};
use crate::transport::{ElemKind, ReduceOp};

/// A complex number of two f64 (C's `double complex`, MPI's `MPI_C_DOUBLE_COMPLEX`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[repr(C)]
pub struct Complex64 {
    pub re: f64,
    pub im: f64,
}

impl Complex64 {
    pub fn new(re: f64, im: f64) -> Complex64 {
        Complex64 { re, im }
    }
}

/// A value collectives can carry and reduce: fixed size, explicit little-endian encoding.
pub trait Element: Copy + Default + PartialEq + std::fmt::Debug + Send + Sync + 'static {
    const SIZE: usize;
    const KIND: ElemKind;
    fn put(self, out: &mut [u8]);
    fn take(bytes: &[u8]) -> Self;
    /// Whether `op` is defined on this type (max and min are not, on complex numbers).
    fn supports(_op: ReduceOp) -> bool {
        true
    }
    fn combine(a: Self, b: Self, op: ReduceOp) -> Self;
}

macro_rules! ordered {
    ($a:expr, $b:expr, $op:expr, $add:expr, $mul:expr) => {
        match $op {
            ReduceOp::Sum => $add,
            ReduceOp::Prod => $mul,
            ReduceOp::Max => {
                if $b > $a {
                    $b
                } else {
                    $a
                }
            }
            ReduceOp::Min => {
                if $b < $a {
                    $b
                } else {
                    $a
                }
            }
        }
    };
}

/// An element type whose sum and product are `$add` and `$mul` of `a` and `b`.
macro_rules! element {
    ($t:ty, $k:ident, |$a:ident, $b:ident| $add:expr, $mul:expr) => {
        impl Element for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            const KIND: ElemKind = ElemKind::$k;
            fn put(self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_le_bytes());
            }
            fn take(bytes: &[u8]) -> Self {
                <$t>::from_le_bytes(bytes.try_into().expect("element size"))
            }
            fn combine($a: Self, $b: Self, op: ReduceOp) -> Self {
                ordered!($a, $b, op, $add, $mul)
            }
        }
    };
}

// Integers wrap on overflow, as C's (and so MPI's) unsigned arithmetic does.
element!(u8, U8, |a, b| a.wrapping_add(b), a.wrapping_mul(b));
element!(u32, U32, |a, b| a.wrapping_add(b), a.wrapping_mul(b));
element!(i32, I32, |a, b| a.wrapping_add(b), a.wrapping_mul(b));
element!(u64, U64, |a, b| a.wrapping_add(b), a.wrapping_mul(b));
element!(i64, I64, |a, b| a.wrapping_add(b), a.wrapping_mul(b));
element!(f32, F32, |a, b| a + b, a * b);
element!(f64, F64, |a, b| a + b, a * b);

impl Element for Complex64 {
    const SIZE: usize = 16;
    const KIND: ElemKind = ElemKind::C64;
    fn put(self, out: &mut [u8]) {
        out[..8].copy_from_slice(&self.re.to_le_bytes());
        out[8..].copy_from_slice(&self.im.to_le_bytes());
    }
    fn take(bytes: &[u8]) -> Self {
        Complex64 {
            re: f64::from_le_bytes(bytes[..8].try_into().expect("element size")),
            im: f64::from_le_bytes(bytes[8..16].try_into().expect("element size")),
        }
    }
    fn supports(op: ReduceOp) -> bool {
        matches!(op, ReduceOp::Sum | ReduceOp::Prod)
    }
    fn combine(a: Self, b: Self, op: ReduceOp) -> Self {
        match op {
            ReduceOp::Prod => Complex64 {
                re: a.re * b.re - a.im * b.im,
                im: a.re * b.im + a.im * b.re,
            },
            // Max and min are refused before any data moves (`supports`).
            _ => Complex64 {
                re: a.re + b.re,
                im: a.im + b.im,
            },
        }
    }
}

/// Refuses a reduction the element type does not define, before anything is sent.
pub(crate) fn check_op<T: Element>(what: &str, op: ReduceOp) -> Result<()> {
    if T::supports(op) {
        Ok(())
    } else {
        Err(TransportError::Usage(format!(
            "{what}: {op:?} is not defined on {:?} elements (MPI does not define it either); use Sum or Prod",
            T::KIND
        )))
    }
}

/// Whether the host layout of every element type is its wire layout.
const HOST_IS_WIRE: bool = cfg!(target_endian = "little");

/// The host representation of a slice of elements.
pub(crate) fn host_bytes<T: Element>(v: &[T]) -> &[u8] {
    // SAFETY: Element types are plain numbers (or repr(C) pairs of them) with no padding.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

pub(crate) fn host_bytes_mut<T: Element>(v: &mut [T]) -> &mut [u8] {
    // SAFETY: as above; every byte pattern is a valid value of these types.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut u8, std::mem::size_of_val(v)) }
}

pub(crate) fn encode<T: Element>(values: &[T]) -> Vec<u8> {
    let mut out = vec![0u8; values.len() * T::SIZE];
    for (v, chunk) in values.iter().zip(out.chunks_exact_mut(T::SIZE)) {
        v.put(chunk);
    }
    out
}

pub(crate) fn decode_into<T: Element>(bytes: &[u8], out: &mut [T]) {
    for (o, chunk) in out.iter_mut().zip(bytes.chunks_exact(T::SIZE)) {
        *o = T::take(chunk);
    }
}

/// `values` as the bytes that travel: the buffer itself where the host layout is the wire's.
pub(crate) fn wire<T: Element>(values: &[T]) -> Cow<'_, [u8]> {
    if HOST_IS_WIRE {
        Cow::Borrowed(host_bytes(values))
    } else {
        Cow::Owned(encode(values))
    }
}

/// Runs `f` on `values` as wire bytes (in and out), in place where the host layout is the
/// wire's, else through an encoded copy decoded afterwards.
pub(crate) fn with_wire_mut<T: Element, R>(
    values: &mut [T],
    f: impl FnOnce(&mut [u8]) -> Result<R>,
) -> Result<R> {
    if HOST_IS_WIRE {
        f(host_bytes_mut(values))
    } else {
        let mut bytes = encode(values);
        let r = f(&mut bytes)?;
        decode_into(&bytes, values);
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_encode_little_endian_and_combine() {
        let b = encode(&[1u32, 0x0102_0304]);
        assert_eq!(b, vec![1, 0, 0, 0, 4, 3, 2, 1]);
        let mut back = [0u32; 2];
        decode_into(&b, &mut back);
        assert_eq!(back, [1, 0x0102_0304]);
        assert_eq!(f64::combine(1.5, 2.0, ReduceOp::Sum), 3.5);
        assert_eq!(f64::combine(1.5, 2.0, ReduceOp::Prod), 3.0);
        assert_eq!(i64::combine(-3, 2, ReduceOp::Max), 2);
        assert_eq!(u64::combine(7, 2, ReduceOp::Min), 2);
        assert_eq!(u8::combine(200, 100, ReduceOp::Sum), 44, "wraps as C does");
        assert_eq!(i32::combine(-4, 5, ReduceOp::Prod), -20);
    }

    #[test]
    fn complex_numbers_travel_as_two_doubles_and_multiply() {
        let z = Complex64::new(1.0, -2.0);
        let b = encode(&[z]);
        assert_eq!(&b[..8], &1.0f64.to_le_bytes());
        assert_eq!(&b[8..], &(-2.0f64).to_le_bytes());
        assert_eq!(
            host_bytes(&[z]),
            &b[..],
            "repr(C) host layout is the wire's here"
        );
        let p = Complex64::combine(z, Complex64::new(3.0, 4.0), ReduceOp::Prod);
        assert_eq!(p, Complex64::new(11.0, -2.0));
        assert!(!Complex64::supports(ReduceOp::Max));
        assert!(check_op::<Complex64>("allreduce", ReduceOp::Min)
            .unwrap_err()
            .to_string()
            .contains("not defined on C64"));
        assert!(check_op::<f64>("allreduce", ReduceOp::Min).is_ok());
    }
}
