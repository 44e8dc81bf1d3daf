//! What ranks send the frontend and what the frontend hands ranks: the bootstrap server's
//! greeting and request lines (with the deadline the server computes from a request's wait),
//! escaped values, rank events (JSON lines, a point's samples packed in base64 inside), the
//! packed samples alone (as bytes and as base64), the job spec (JSON in FABBENCH_SPEC) and an
//! external launcher's environment. The first byte picks the decoder.
#![no_main]

use std::time::Instant;

use bench_core::bootstrap::discover::detect_with;
use bench_core::bootstrap::auth::parse_hello;
use bench_core::bootstrap::tcp::Request;
use bench_core::bootstrap::{escape, unescape};
use libfuzzer_sys::fuzz_target;
use runner::job::{samples, JobSpec, RankEvent};

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    if which % 6 == 5 {
        // A point's samples, packed: what decodes packs back to the same values.
        for decoded in [
            samples::unpack(rest),
            std::str::from_utf8(rest).map_or(Ok(Vec::new()), samples::decode),
        ] {
            if let Ok(values) = decoded {
                assert_eq!(
                    samples::unpack(&samples::pack(&values)).as_ref(),
                    Ok(&values)
                );
                assert_eq!(
                    samples::decode(&samples::encode(&values)).as_ref(),
                    Ok(&values)
                );
            }
        }
        return;
    }
    // Lines reach the decoders as text: the server reads them with read_line, which refuses
    // bytes that are not UTF-8, and the job spec is an environment variable read as a String.
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    match which % 6 {
        0 => {
            let _ = parse_hello(text);
            match Request::parse(text) {
                Request::Get { wait, .. } | Request::Fence { wait, .. } => {
                    assert!(Instant::now().checked_add(wait).is_some());
                }
                _ => {}
            }
        }
        1 => {
            assert_eq!(unescape(&escape(text)), text);
            let _ = escape(&unescape(text));
        }
        2 => {
            if let Ok(ev) = serde_json::from_str::<RankEvent>(text) {
                let again = serde_json::to_string(&ev).expect("a decoded event serialises");
                serde_json::from_str::<RankEvent>(&again).expect("and decodes again");
            }
        }
        3 => {
            if let Ok(spec) = serde_json::from_str::<JobSpec>(text) {
                let again = serde_json::to_string(&spec).expect("a decoded spec serialises");
                serde_json::from_str::<JobSpec>(&again).expect("and decodes again");
            }
        }
        _ => {
            let env: Vec<(&str, &str)> = text.lines().filter_map(|l| l.split_once('=')).collect();
            let _ = detect_with(&|k| {
                env.iter()
                    .find(|(name, _)| *name == k)
                    .map(|(_, v)| v.to_string())
            });
        }
    }
});
