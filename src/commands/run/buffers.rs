//! OSU's buffer-location arguments: `osu_latency [options] [BUF_TYPE BUF_TYPE]`, each H (host),
//! D (device) or M (managed, MH/MD). ReFrame's OSU test always appends them, so `run` takes
//! them after its suites: `H H` is what fabbench measures (host memory) and is accepted; any
//! device or managed buffer is refused. OSU's point-to-point tests take exactly two (one per
//! rank) or none, and so does fabbench.

/// OSU's point-to-point suites, the only ones that take buffer locations.
const OSU_SUITES: &[&str] = &["osu_latency", "osu_bw", "osu_bibw"];

/// Whether `word` is an OSU buffer location (what OSU's own parser reads as one).
fn is_location(word: &str) -> bool {
    matches!(word, "H" | "D" | "M" | "MH" | "MD")
}

/// Takes the buffer locations off the end of `suites`; Err is the one line for a location
/// fabbench cannot measure or a count OSU would refuse.
pub fn take(suites: &mut Vec<String>) -> Result<(), String> {
    let first = suites
        .iter()
        .rposition(|w| !is_location(w))
        .map_or(0, |i| i + 1);
    let given: Vec<String> = suites.split_off(first);
    if given.is_empty() {
        return Ok(());
    }
    let spelled = given.join(" ");
    if let Some(other) = suites.iter().find(|s| !OSU_SUITES.contains(&s.as_str())) {
        return Err(format!(
            "{spelled}: buffer locations are OSU's arguments ({}); {other} takes none",
            OSU_SUITES.join(", ")
        ));
    }
    if given.iter().any(|w| w != "H") {
        return Err(format!(
            "{spelled}: fabbench measures host memory only; give H H (host buffers on both ranks) or nothing"
        ));
    }
    if given.len() != 2 {
        return Err(format!(
            "{spelled}: OSU's point-to-point tests take two buffer locations, one per rank; give H H or nothing"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn host_buffers_are_taken_off_the_suites() {
        let mut s = words("osu_latency osu_bw H H");
        take(&mut s).unwrap();
        assert_eq!(s, words("osu_latency osu_bw"));
        let mut s = words("osu_bw");
        take(&mut s).unwrap();
        assert_eq!(s, words("osu_bw"));
    }

    #[test]
    fn device_managed_and_miscounted_buffers_are_refused() {
        for (given, says) in [
            ("osu_latency D D", "host memory only"),
            ("osu_latency H D", "host memory only"),
            ("osu_latency MH MH", "host memory only"),
            ("osu_latency H", "take two buffer locations"),
            ("osu_latency H H H", "take two buffer locations"),
            ("mpptest H H", "mpptest takes none"),
        ] {
            let e = take(&mut words(given)).unwrap_err();
            assert!(e.contains(says), "{given}: {e}");
        }
    }
}
