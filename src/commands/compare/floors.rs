//! `fabbench compare --history STORE`: the noise floors a single run a side is judged against,
//! learned from a history store's entries (each run's median at each point), so the crates stay
//! apart: compare never reads a store, history never decides a verdict.

use std::path::Path;

use compare::Floors;

/// Each measured (not exact) record's median, filed by point and metric. Entries from the
/// candidate's host are used when the store has any: another machine's spread says little
/// about this one's.
pub fn learn(store: &Path, host: &str) -> Result<Floors, String> {
    let entries = history::Store::open(store)
        .and_then(|s| s.entries())
        .map_err(|e| format!("--history {}: {e}", store.display()))?;
    let here = entries.iter().any(|e| e.host.hostname == host);
    let mut floors = Floors::default();
    for e in entries.iter().filter(|e| !here || e.host.hostname == host) {
        for r in e.records.iter().filter(|r| !r.exact) {
            let name = Floors::name(
                &r.suite,
                &r.fabric,
                r.ranks,
                &r.key().to_string(),
                &r.metric,
            );
            floors.learn(name, r.p50);
        }
    }
    Ok(floors)
}
