//! The values collectives carry and reduce, and how they travel: little-endian, element by
//! element, so ranks of different byte order agree. On a little-endian host that is the host's
//! own layout, so buffers go on the wire as they are, without a copy; a big-endian host (or a
//! rank told to take its path, `wire.byte_order=big`) converts each element through a copy.

use std::borrow::Cow;

use crate::error::{Result, TransportError};
use crate::order::HostOrder;
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
    /// Writes the value's little-endian bytes, converting from a host that keeps numbers in
    /// `order`.
    fn put(self, out: &mut [u8], order: HostOrder);
    /// Reads little-endian bytes into a value held in `order`.
    fn take(bytes: &[u8], order: HostOrder) -> Self;
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
            fn put(self, out: &mut [u8], order: HostOrder) {
                order.put_le(self, out);
            }
            fn take(bytes: &[u8], order: HostOrder) -> Self {
                order.get_le(bytes)
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
    fn put(self, out: &mut [u8], order: HostOrder) {
        order.put_le(self.re, &mut out[..8]);
        order.put_le(self.im, &mut out[8..16]);
    }
    fn take(bytes: &[u8], order: HostOrder) -> Self {
        Complex64 {
            re: order.get_le(&bytes[..8]),
            im: order.get_le(&bytes[8..16]),
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

/// The host representation of a slice of elements.
pub(crate) fn host_bytes<T: Element>(v: &[T]) -> &[u8] {
    // SAFETY: Element types are plain numbers (or repr(C) pairs of them) with no padding.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

pub(crate) fn host_bytes_mut<T: Element>(v: &mut [T]) -> &mut [u8] {
    // SAFETY: as above; every byte pattern is a valid value of these types.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut u8, std::mem::size_of_val(v)) }
}

/// `values` as the little-endian bytes that travel, from a host that holds them in `order`.
pub fn encode<T: Element>(values: &[T], order: HostOrder) -> Vec<u8> {
    let mut out = vec![0u8; values.len() * T::SIZE];
    for (v, chunk) in values.iter().zip(out.chunks_exact_mut(T::SIZE)) {
        v.put(chunk, order);
    }
    out
}

/// Typed elements received from a peer (`bytes`, little-endian) into `out`, held in `order`:
/// one element per whole `T::SIZE` bytes, as many as both hold; elements of `out` past what
/// came stay as they were, a trailing part of an element is not read. Public, like `encode`,
/// for the fuzz target `typed_elements`.
pub fn decode_into<T: Element>(bytes: &[u8], out: &mut [T], order: HostOrder) {
    for (o, chunk) in out.iter_mut().zip(bytes.chunks_exact(T::SIZE)) {
        *o = T::take(chunk, order);
    }
}

/// `values` as the bytes that travel: the buffer itself where the host layout is the wire's
/// (a little-endian host: every element type's layout is then its wire layout).
pub(crate) fn wire<T: Element>(values: &[T], order: HostOrder) -> Cow<'_, [u8]> {
    if order.is_little() {
        Cow::Borrowed(host_bytes(values))
    } else {
        Cow::Owned(encode(values, order))
    }
}

/// Runs `f` on `values` as wire bytes (in and out), in place where the host layout is the
/// wire's, else through an encoded copy decoded afterwards.
pub(crate) fn with_wire_mut<T: Element, R>(
    values: &mut [T],
    order: HostOrder,
    f: impl FnOnce(&mut [u8]) -> Result<R>,
) -> Result<R> {
    if order.is_little() {
        f(host_bytes_mut(values))
    } else {
        let mut bytes = encode(values, order);
        let r = f(&mut bytes)?;
        decode_into(&bytes, values, order);
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORDERS: [HostOrder; 2] = [HostOrder::Native, HostOrder::Big];

    #[test]
    fn elements_encode_little_endian_and_combine() {
        for o in ORDERS {
            let b = encode(&[1u32, 0x0102_0304], o);
            assert_eq!(b, vec![1, 0, 0, 0, 4, 3, 2, 1], "{o:?}");
            let mut back = [0u32; 2];
            decode_into(&b, &mut back, o);
            assert_eq!(back, [1, 0x0102_0304]);
        }
        assert_eq!(f64::combine(1.5, 2.0, ReduceOp::Sum), 3.5);
        assert_eq!(f64::combine(1.5, 2.0, ReduceOp::Prod), 3.0);
        assert_eq!(i64::combine(-3, 2, ReduceOp::Max), 2);
        assert_eq!(u64::combine(7, 2, ReduceOp::Min), 2);
        assert_eq!(u8::combine(200, 100, ReduceOp::Sum), 44, "wraps as C does");
        assert_eq!(i32::combine(-4, 5, ReduceOp::Prod), -20);
    }

    /// The wire bytes of every element type, pinned, from either host order.
    #[test]
    fn every_element_type_has_its_golden_bytes() {
        fn check<T: Element>(v: T, want: &[u8]) {
            for o in ORDERS {
                assert_eq!(encode(&[v], o), want, "{:?} from {o:?}", T::KIND);
                assert_eq!(&*wire(&[v], o), want, "{:?} from {o:?}", T::KIND);
                let mut back = [T::default()];
                decode_into(want, &mut back, o);
                assert_eq!(back[0], v, "{:?} into {o:?}", T::KIND);
                let mut inplace = [T::default()];
                with_wire_mut(&mut inplace, o, |b| {
                    b.copy_from_slice(want);
                    Ok(())
                })
                .unwrap();
                assert_eq!(inplace[0], v, "{:?} received into {o:?}", T::KIND);
            }
        }
        check(0xabu8, &[0xab]);
        check(0x0102_0304u32, &[4, 3, 2, 1]);
        check(-2i32, &[0xfe, 0xff, 0xff, 0xff]);
        check(0x0102_0304_0506_0708u64, &[8, 7, 6, 5, 4, 3, 2, 1]);
        check(-2i64, &[0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
        check(1.0f32, &[0, 0, 0x80, 0x3f]);
        check(-2.5f64, &[0, 0, 0, 0, 0, 0, 0x04, 0xc0]);
        check(
            Complex64::new(1.0, -2.5),
            &[0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0x04, 0xc0],
        );
    }

    #[test]
    fn complex_numbers_travel_as_two_doubles_and_multiply() {
        let z = Complex64::new(1.0, -2.0);
        let b = encode(&[z], HostOrder::Native);
        assert_eq!(&b[..8], &1.0f64.to_le_bytes());
        assert_eq!(&b[8..], &(-2.0f64).to_le_bytes());
        if cfg!(target_endian = "little") {
            assert_eq!(
                host_bytes(&[z]),
                &b[..],
                "repr(C) host layout is the wire's here"
            );
        }
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
