//! Typed elements received from a peer (`recv_values`, `sendrecv_values` and every typed
//! collective: f64, f32, u64, i64, u32, i32, u8 and complex numbers travel little-endian): the
//! bytes a peer sent, decoded into a buffer by `decode_into` on a native rank and on one
//! taking a big-endian host's path (`wire.byte_order=big`). The first byte picks the element
//! type, the second how many elements the receive buffer holds (a message may be shorter than
//! the buffer, or end in part of an element). Must hold: no panic; both byte orders decode
//! the same values, bit for bit; encoding what was decoded gives the bytes back; elements past
//! what came keep their value; combining decoded values (what reductions do) never panics,
//! overflow included (integers wrap, as MPI's do).
//!
//! Seed corpus (fuzz/corpus/typed_elements/): the payloads of the typed messages ranks
//! sent in `fabbench run nbody --fabric tcp --bodies 16 --steps 2` (captured with `strace -f
//! -e trace=writev -xx`: the f64 positions and state of its allgathers and the f64 of its
//! reductions), behind the two selector bytes: as f64 into buffers of their size, one into
//! a larger buffer than the message, and the same bytes taken as complex numbers and u64.
#![no_main]

use libfuzzer_sys::fuzz_target;
use transports::comm::{decode_into, encode, Complex64, Element, ReduceOp};
use transports::order::HostOrder;

/// The value's little-endian bytes: its identity, NaN payloads included.
fn bits<T: Element>(values: &[T]) -> Vec<u8> {
    encode(values, HostOrder::Native)
}

fn check<T: Element>(len_byte: u8, bytes: &[u8]) {
    // A receive buffer of up to 64 elements, prefilled so untouched elements show.
    let n = len_byte as usize % 65;
    let fill = {
        let mut one = [T::default()];
        decode_into(&[0xa5u8; 16][..T::SIZE], &mut one, HostOrder::Native);
        one[0]
    };
    let came = (bytes.len() / T::SIZE).min(n);
    let mut decoded = Vec::new();
    for order in [HostOrder::Native, HostOrder::Big] {
        let mut buf = vec![fill; n];
        decode_into(bytes, &mut buf, order);
        assert_eq!(
            encode(&buf[..came], order),
            &bytes[..came * T::SIZE],
            "{order:?}"
        );
        assert_eq!(
            bits(&buf[came..]),
            bits(&vec![fill; n - came]),
            "past the message"
        );
        decoded.push(buf);
    }
    assert_eq!(bits(&decoded[0]), bits(&decoded[1]), "byte orders agree");
    let v = &decoded[0];
    for op in [ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min] {
        if T::supports(op) {
            for pair in v.windows(2) {
                let _ = T::combine(pair[0], pair[1], op);
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let [which, len, rest @ ..] = data else {
        return;
    };
    match which % 8 {
        0 => check::<f64>(*len, rest),
        1 => check::<f32>(*len, rest),
        2 => check::<u64>(*len, rest),
        3 => check::<i64>(*len, rest),
        4 => check::<u32>(*len, rest),
        5 => check::<i32>(*len, rest),
        6 => check::<u8>(*len, rest),
        _ => check::<Complex64>(*len, rest),
    }
});
