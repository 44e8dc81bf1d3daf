//! The byte order a rank keeps numbers in, and the two conversions between it and the wire:
//! network order (big-endian) for every header field, little-endian for the elements typed
//! collectives and point-to-point calls carry.
//!
//! Rust's `to_be_bytes` is right on any host, so the encoders would not need this for
//! correctness. It exists so that one rank of a job on a little-endian machine can take the path
//! a big-endian host takes, as C code does with `htonl` and friends: each number as that host
//! holds it in memory (most significant byte first), then converted per field: left as it is for
//! a header, swapped for an element. A peer in that mode and a native one must agree on every
//! byte (`wire.byte_order=big`, see [`ByteOrders`]); golden-byte tests pin what both produce.

use bench_core::tunables::{Key, Kind, Settings};

/// The byte order numbers are held in on a rank.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum HostOrder {
    /// This machine's own.
    #[default]
    Native,
    /// Big-endian, as on s390x or POWER in big-endian mode, whatever this machine is.
    Big,
}

/// A number as a host holds it: its bytes in host order, and back.
pub trait Scalar: Copy {
    type Bytes: Default + AsRef<[u8]> + AsMut<[u8]>;
    fn ne_bytes(self) -> Self::Bytes;
    fn be_bytes(self) -> Self::Bytes;
    fn from_ne(b: Self::Bytes) -> Self;
    fn from_be(b: Self::Bytes) -> Self;
}

macro_rules! scalar {
    ($($t:ty),*) => {$(
        impl Scalar for $t {
            type Bytes = [u8; std::mem::size_of::<$t>()];
            #[inline(always)]
            fn ne_bytes(self) -> Self::Bytes {
                self.to_ne_bytes()
            }
            #[inline(always)]
            fn be_bytes(self) -> Self::Bytes {
                self.to_be_bytes()
            }
            #[inline(always)]
            fn from_ne(b: Self::Bytes) -> Self {
                <$t>::from_ne_bytes(b)
            }
            #[inline(always)]
            fn from_be(b: Self::Bytes) -> Self {
                <$t>::from_be_bytes(b)
            }
        }
    )*};
}

scalar!(u8, u16, u32, i32, u64, i64, f32, f64);

impl HostOrder {
    /// Whether numbers are held least significant byte first.
    #[inline(always)]
    pub fn is_little(self) -> bool {
        match self {
            HostOrder::Native => cfg!(target_endian = "little"),
            HostOrder::Big => false,
        }
    }

    /// `v`'s bytes as this host holds it in memory.
    #[inline(always)]
    fn held<T: Scalar>(self, v: T) -> T::Bytes {
        match self {
            HostOrder::Native => v.ne_bytes(),
            HostOrder::Big => v.be_bytes(),
        }
    }

    /// The number whose bytes this host holds as `b`.
    #[inline(always)]
    fn read<T: Scalar>(self, b: T::Bytes) -> T {
        match self {
            HostOrder::Native => T::from_ne(b),
            HostOrder::Big => T::from_be(b),
        }
    }

    /// Writes `v` into `out` in network order: the host's bytes, swapped where the host is
    /// little-endian (`htonl`).
    #[inline(always)]
    pub fn put_net<T: Scalar>(self, v: T, out: &mut [u8]) {
        let mut b = self.held(v);
        if self.is_little() {
            b.as_mut().reverse();
        }
        out.copy_from_slice(b.as_ref());
    }

    /// Reads a network-order number from `bytes` (exactly its size; `ntohl`).
    #[inline(always)]
    pub fn get_net<T: Scalar>(self, bytes: &[u8]) -> T {
        let mut b = T::Bytes::default();
        b.as_mut().copy_from_slice(bytes);
        if self.is_little() {
            b.as_mut().reverse();
        }
        self.read(b)
    }

    /// Writes `v` into `out` little-endian: the host's bytes, swapped where the host is
    /// big-endian.
    #[inline(always)]
    pub fn put_le<T: Scalar>(self, v: T, out: &mut [u8]) {
        let mut b = self.held(v);
        if !self.is_little() {
            b.as_mut().reverse();
        }
        out.copy_from_slice(b.as_ref());
    }

    /// Reads a little-endian number from `bytes` (exactly its size).
    #[inline(always)]
    pub fn get_le<T: Scalar>(self, bytes: &[u8]) -> T {
        let mut b = T::Bytes::default();
        b.as_mut().copy_from_slice(bytes);
        if !self.is_little() {
            b.as_mut().reverse();
        }
        self.read(b)
    }
}

/// The byte order a rank encodes headers and typed elements as (an engine tunable).
pub const BYTE_ORDER: Key<str> = Key::choice(
    "wire.byte_order",
    &["native", "big"],
    "native",
    "byte order a rank encodes frame headers and typed elements as: big takes a big-endian host's path (a test of heterogeneous peers; the bytes on the wire are the same); see wire.byte_order_rank",
);

/// The one rank [`BYTE_ORDER`] applies to (an engine tunable).
pub const BYTE_ORDER_RANK: Key<Option<i64>> = Key::optional_int(
    "wire.byte_order_rank",
    &Kind::Int {
        min: 0,
        max: 1 << 20,
    },
    "",
    "the one rank wire.byte_order applies to (the others stay native); unset: every rank",
);

/// The `wire.byte_order` and `wire.byte_order_rank` tunables: which order, on which ranks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ByteOrders {
    pub order: HostOrder,
    /// The one rank that takes `order`; `None`: every rank.
    pub only_rank: Option<usize>,
}

impl ByteOrders {
    pub fn from_settings(s: &Settings) -> ByteOrders {
        let order = match s.get(BYTE_ORDER) {
            "big" => HostOrder::Big,
            _ => HostOrder::Native,
        };
        let only_rank = s.get(BYTE_ORDER_RANK).map(|r| r as usize);
        ByteOrders { order, only_rank }
    }

    /// The order `rank` keeps numbers in.
    pub fn of(&self, rank: usize) -> HostOrder {
        match self.only_rank {
            Some(r) if r != rank => HostOrder::Native,
            _ => self.order,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_orders_write_the_same_network_and_little_endian_bytes() {
        for order in [HostOrder::Native, HostOrder::Big] {
            let mut b = [0u8; 4];
            order.put_net(0x0102_0304u32, &mut b);
            assert_eq!(b, [1, 2, 3, 4], "{order:?}");
            assert_eq!(order.get_net::<u32>(&b), 0x0102_0304);
            order.put_le(0x0102_0304u32, &mut b);
            assert_eq!(b, [4, 3, 2, 1], "{order:?}");
            assert_eq!(order.get_le::<u32>(&b), 0x0102_0304);
            let mut d = [0u8; 8];
            order.put_le(1.0f64, &mut d);
            assert_eq!(d, [0, 0, 0, 0, 0, 0, 0xf0, 0x3f], "{order:?}");
            assert_eq!(order.get_le::<f64>(&d), 1.0);
            order.put_net(-2i32, &mut b);
            assert_eq!(b, [0xff, 0xff, 0xff, 0xfe], "{order:?}");
            assert_eq!(order.get_net::<i32>(&b), -2);
        }
        assert!(!HostOrder::Big.is_little());
        assert_eq!(
            HostOrder::Native.is_little(),
            cfg!(target_endian = "little")
        );
    }

    #[test]
    fn the_order_applies_to_one_rank_or_all() {
        let one = ByteOrders {
            order: HostOrder::Big,
            only_rank: Some(1),
        };
        assert_eq!(one.of(0), HostOrder::Native);
        assert_eq!(one.of(1), HostOrder::Big);
        let all = ByteOrders {
            order: HostOrder::Big,
            only_rank: None,
        };
        assert_eq!(all.of(0), HostOrder::Big);
        assert_eq!(ByteOrders::default().of(3), HostOrder::Native);
    }
}
