//! `profile.toml`: the deployed settings (what passed the gate; a value held back keeps its
//! default, and a comment says why) as a fabbench profile, the file a user deploys with
//! `fabbench run ... --profile profile.toml`. It is what `Settings::apply_profile` reads: a
//! `[tunables]` table of `name = "value"`, values in their canonical text, so a profile
//! reads like the `--set` arguments that would give the same run.

use std::path::PathBuf;

use super::{command_line, comment, ExportError, Exporter, File};
use crate::outcome::Outcome;

/// Writes `profile.toml`, always: even an outcome that kept every default is a profile.
pub struct Profile;

impl Exporter for Profile {
    fn files(&self, o: &Outcome) -> Result<Vec<File>, ExportError> {
        let text = format!("{}{}", header(o), tunables(o)?);
        Ok(vec![(PathBuf::from("profile.toml"), text.into_bytes())])
    }
}

fn header(o: &Outcome) -> String {
    [
        format!("fabbench autotune profile for {} ({})", o.fabric, o.kind),
        format!("made by: {}", command_line(o)),
        format!("started: {}", o.start_time),
        format!(
            "load it with: fabbench run osu_bw --fabric {} --profile profile.toml",
            o.fabric
        ),
    ]
    .iter()
    .chain(&held_back(o))
    .map(|l| comment(l))
    .collect::<String>()
        + "\n"
}

/// One line per value the search chose but the gate held back: a reader of the profile sees
/// why the default is there.
fn held_back(o: &Outcome) -> Vec<String> {
    o.decisions
        .iter()
        .filter_map(|d| {
            d.withheld.as_ref().map(|why| {
                format!(
                    "not deployed: {} = {} (search's choice; the default {} stays): {why}",
                    d.param, d.chosen, d.default
                )
            })
        })
        .collect()
}

/// The `[tunables]` table, written by the toml crate so that names with dots are quoted keys
/// (`"bxi.rendezvous" = ...`) rather than nested tables of a different shape.
fn tunables(o: &Outcome) -> Result<String, ExportError> {
    let table: toml::Table = o
        .deployed_values()
        .iter()
        .map(|(k, v)| (k.clone(), toml::Value::String(v.clone())))
        .collect();
    let mut doc = toml::Table::new();
    doc.insert("tunables".into(), toml::Value::Table(table));
    Ok(toml::to_string(&doc)?)
}

#[cfg(test)]
mod tests {
    use bench_core::tunables::{Def, Key, Registry, Source};

    use super::*;
    use crate::export::sample;

    const EAGER_LIMIT: Key<u64> =
        Key::size("eager_limit", 0, 1 << 30, "4K", "largest eager message");
    const BXI_RENDEZVOUS: Key<u64> =
        Key::size("bxi.rendezvous", 0, 1 << 30, "32K", "rendezvous threshold");
    const RX_THREAD: Key<bool> = Key::flag("rx_thread", "off", "receive thread");
    const DEFS: &[Def] = &[EAGER_LIMIT.def(), BXI_RENDEZVOUS.def(), RX_THREAD.def()];

    fn text(o: &Outcome) -> String {
        let files = Profile.files(o).unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].0, PathBuf::from("profile.toml"));
        String::from_utf8(files[0].1.clone()).unwrap()
    }

    #[test]
    fn loads_through_apply_profile() {
        let mut o = sample::outcome();
        o.deployed.insert("bxi.rendezvous".into(), "64KiB".into());
        o.deployed.insert("eager_limit".into(), "65536".into());
        o.deployed.insert("rx_thread".into(), "on".into());
        let profile = text(&o);
        let registry = Registry::new(&[DEFS]);
        let mut s = registry.defaults();
        s.apply_profile(&registry, &profile).unwrap();
        assert_eq!(s.get(EAGER_LIMIT), 65536);
        assert_eq!(s.get(BXI_RENDEZVOUS), 64 << 10);
        assert!(s.get(RX_THREAD));
        for name in ["eager_limit", "bxi.rendezvous", "rx_thread"] {
            assert_eq!(s.source(name), Source::Profile, "{name}");
        }
        assert!(
            profile.contains("\"bxi.rendezvous\" = \"64KiB\"\n"),
            "{profile}"
        );
    }

    #[test]
    fn header_says_what_and_how() {
        let profile = text(&sample::outcome());
        let head: Vec<&str> = profile.lines().take(4).collect();
        assert_eq!(
            head,
            [
                "# fabbench autotune profile for bxi (emulated, virtual time)",
                "# made by: fabbench autotune --fabric bxi --budget 10m",
                "# started: 2025-06-01T10:00:00Z",
                "# load it with: fabbench run osu_bw --fabric bxi --profile profile.toml",
            ]
        );
        // The deployed values, not the search's: rx_thread=on was held back by the gate.
        assert!(
            profile.contains("\n[tunables]\neager_limit = \"12KiB\"\nrx_thread = \"off\"\n"),
            "{profile}"
        );
        assert!(
            profile.contains("# not deployed: rx_thread = on (search's choice; the default off stays): with rx_thread=on the profile fails on osu_bw\n"),
            "{profile}"
        );
    }

    #[test]
    fn an_outcome_from_before_the_gate_deploys_its_choice() {
        let mut o = sample::outcome();
        o.deployed.clear();
        assert!(text(&o).contains("rx_thread = \"on\"\n"));
    }

    #[test]
    fn a_hostile_command_line_stays_in_comments() {
        let mut o = sample::outcome();
        o.command_line.push("x\n[tunables]\nbogus = 1".into());
        let registry = Registry::new(&[DEFS]);
        let mut s = registry.defaults();
        s.apply_profile(&registry, &text(&o)).unwrap();
        assert_eq!(s.get(EAGER_LIMIT), 12 << 10);
    }
}
