//! The command-line options a suite takes, declared as data, and the values a user gave.
//!
//! A suite declares its options ([`OptionDef`]); the binary turns every registered suite's
//! declarations into command-line arguments and hands each suite the values of its own
//! ([`SuiteArgs`]). So a new suite with new options is one module and one registry line, and
//! suites that share an option (the OSU trio's `-m`) share one argument.
//!
//! Options are spelled as the tool a suite reproduces spells them, so a command line pasted
//! from a guide works: GNU style for OSU (`--message-size`, `-m`), a single dash and a word for
//! mpptest (`-size 0 1024 32`, `-logscale`), which the binary picks out before clap parses.

use std::collections::BTreeMap;

/// A refusal of a suite's parameters: one line saying what is wrong and what is valid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ParamError(pub String);

/// What kind of value an option takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionKind {
    /// No value: present or not.
    Flag,
    /// A non-negative whole number (the command line checks it is one).
    Count,
    /// Free text the suite parses itself.
    Text,
    /// This many values (`-size START END STRIDE`), kept space-separated for the suite.
    Values(usize),
    /// A flag that may carry a value attached (`-z`, `-z50,95`, `--tail-lat=50,95`); given
    /// bare it maps to an empty value, as a flag does.
    FlagOrValue,
}

impl OptionKind {
    /// How many command-line words follow the option.
    pub fn arity(&self) -> usize {
        match *self {
            OptionKind::Flag | OptionKind::FlagOrValue => 0,
            OptionKind::Count | OptionKind::Text => 1,
            OptionKind::Values(n) => n,
        }
    }
}

/// How an option is spelled on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dash {
    /// `--long` (and `-s` when it has a short form), as OSU's options are.
    Two,
    /// `-word`, as mpptest's options are; no short form.
    One,
}

/// One option a suite takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionDef {
    /// The long name without dashes, also the key in [`SuiteArgs`]: "message-size".
    pub long: &'static str,
    pub short: Option<char>,
    pub dash: Dash,
    pub kind: OptionKind,
    /// How the value is shown in help: "[MIN:]MAX".
    pub value_name: &'static str,
    pub help: &'static str,
}

/// `--repeat N`: how many times an application suite (NPB, nbody) runs its timed section,
/// each from the initial state; shared so every such suite spells and explains it alike.
pub const REPEAT: OptionDef = OptionDef {
    long: "repeat",
    short: None,
    dash: Dash::Two,
    kind: OptionKind::Count,
    value_name: "N",
    help: "Timed runs, each from the initial state (default 1, as NPB runs once); every run is a sample",
};

/// The options a user gave to one suite, by long name. Flags map to an empty value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SuiteArgs {
    values: BTreeMap<String, String>,
}

impl OptionDef {
    /// How the option is written: "--message-size", "-size".
    pub fn spelled(&self) -> String {
        match self.dash {
            Dash::Two => format!("--{}", self.long),
            Dash::One => format!("-{}", self.long),
        }
    }
}

impl SuiteArgs {
    pub fn new() -> SuiteArgs {
        SuiteArgs::default()
    }

    /// Records a value option.
    pub fn set(&mut self, long: &str, value: impl Into<String>) -> &mut SuiteArgs {
        self.values.insert(long.to_string(), value.into());
        self
    }

    /// Records a flag.
    pub fn flag_on(&mut self, long: &str) -> &mut SuiteArgs {
        self.values.insert(long.to_string(), String::new());
        self
    }

    pub fn get(&self, long: &str) -> Option<&str> {
        self.values.get(long).map(String::as_str)
    }

    pub fn flag(&self, long: &str) -> bool {
        self.values.contains_key(long)
    }

    /// A [`OptionKind::Count`] option's value.
    pub fn count(&self, long: &str) -> Result<Option<u64>, ParamError> {
        self.get(long)
            .map(|v| {
                v.parse()
                    .map_err(|_| ParamError(format!("--{long} {v}: expected a whole number")))
            })
            .transpose()
    }

    /// A [`OptionKind::Values`] option's values.
    pub fn values(&self, long: &str) -> Option<Vec<&str>> {
        self.get(long).map(|v| v.split(' ').collect())
    }

    /// The long names given.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.values.keys().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_flags_and_counts() {
        let mut a = SuiteArgs::new();
        a.set("iterations", "20").flag_on("validation");
        assert_eq!(a.get("iterations"), Some("20"));
        assert!(a.flag("validation") && !a.flag("tail-lat"));
        assert_eq!(a.count("iterations"), Ok(Some(20)));
        assert_eq!(a.count("warmup"), Ok(None));
        a.set("warmup", "x");
        assert!(a.count("warmup").unwrap_err().0.contains("whole number"));
        assert_eq!(
            a.names().collect::<Vec<_>>(),
            ["iterations", "validation", "warmup"]
        );
    }
}
