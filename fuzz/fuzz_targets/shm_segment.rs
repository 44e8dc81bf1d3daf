//! What a rank of the shm fabric reads that another rank wrote: the segment header rank 0
//! writes at the start of the shared segment and every other rank checks (magic, rank count,
//! ring byte area), the single-copy probe's requests rank 1 sends rank 0 through a ring
//! (24 bytes: size, tail, address), and the probe's verdict rank 1 publishes through the
//! bootstrap (text) for every rank to decode. The first byte picks the decoder. Each must not
//! panic, and what decodes encodes back: a header to the same 24 bytes, a request to the
//! frame's first 24 bytes (zero-padded, as rank 0 reads a short one), a verdict to text that
//! decodes to the same verdict.
//!
//! Seed corpus (fuzz/corpus/shm_segment/): `header-2ranks` is the first 24 bytes of
//! /dev/shm/fabbench-JOB-shm copied while `fabbench run osu_latency --fabric shm` ran (two
//! ranks started as Slurm tasks, SLURM_PROCID/SLURM_NTASKS/SLURM_JOB_ID set by hand, with
//! `--bootstrap dir:PATH`, so the bootstrap's files could be copied too); `verdict-copy` is
//! that run's `kv/shm%probe%result-*` file, rank 1's published verdict; `request-*` are the
//! requests rank 1 makes of rank 0 during such a probe, written by hand in the 24-byte layout
//! `Request::encode` has (pinned by its golden test; the ring frames themselves were not
//! captured): a 64 KiB stream, a 4 MiB shared copy's 2 MiB tail (at the buffer address that
//! run published as `shm/probe/src`), and the stop; each behind the selector byte.
#![no_main]

use libfuzzer_sys::fuzz_target;
use transports::shm::probe::{Request, Verdict};
use transports::shm::{read_segment_header, segment_header, SEGMENT_HEADER_LEN};

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    match which % 3 {
        0 => {
            if let Some((ranks, cap)) = read_segment_header(rest) {
                let again = segment_header(ranks as usize, cap as usize);
                assert_eq!(&again[..], &rest[..SEGMENT_HEADER_LEN]);
            } else {
                assert!(rest.len() < SEGMENT_HEADER_LEN || &rest[..8] != b"FABBSHM1");
            }
        }
        1 => {
            let req = Request::decode(rest);
            let mut want = [0u8; 24];
            let n = rest.len().min(24);
            want[..n].copy_from_slice(&rest[..n]);
            assert_eq!(req.encode(), want);
            assert_eq!(Request::decode(&req.encode()), req);
        }
        _ => {
            let Ok(text) = std::str::from_utf8(rest) else {
                return;
            };
            if let Some(v) = Verdict::decode(text) {
                let again = v.encode();
                assert_eq!(Verdict::decode(&again).as_ref(), Some(&v), "{again}");
                // What the manifest and the run's closing comment say of it, and what it
                // decides for every size the engine may ask about.
                let _ = v.describe();
                for len in [0, 1, 8 << 10, 1 << 20, u64::MAX] {
                    let _ = v.single_copy(len);
                }
            }
        }
    }
});
