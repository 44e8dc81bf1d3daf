//! Options some suites spell with a single dash and a word, as the tools they reproduce do
//! (mpptest's `-size 0 1048576 128 -sync -quick -logscale`), so a command line from a guide
//! pastes as is. clap cannot parse these (it would read `-fast` as `-f ast`), so they are
//! taken out of `run`'s command line first; clap parses the rest.

use std::ffi::OsString;

use suites::{Dash, OptionDef, OptionKind};

/// The single-dash options given: (name without the dash, values joined by spaces).
pub type Given = Vec<(String, String)>;

/// Every single-dash option any suite takes.
fn single_dash_options() -> Vec<OptionDef> {
    suites::all_options()
        .into_iter()
        .filter(|o| o.dash == Dash::One)
        .collect()
}

/// Whether `word` reads as an option name (`-size`, `-n_avg`, `--fabric`), not a value (`-1`).
fn looks_like_option(word: &str) -> bool {
    let mut c = word.chars();
    c.next() == Some('-')
        && c.next()
            .is_some_and(|x| x.is_ascii_alphabetic() || x == '-')
}

/// The short options `cmd` parses after `run` (its own and the global ones): a cluster of
/// them, `-cz` or `-vv`, is clap's, not a single-dash word.
pub fn run_shorts(cmd: &clap::Command) -> Vec<char> {
    let run = cmd
        .find_subcommand("run")
        .into_iter()
        .flat_map(|r| r.get_arguments());
    let mut s: Vec<char> = cmd
        .get_arguments()
        .chain(run)
        .filter_map(|a| a.get_short())
        .collect();
    // clap's own -h and -V
    s.extend(['h', 'V']);
    s
}

/// The suites named on the command line that take single-dash options.
fn single_dash_suites(words: &[String]) -> Vec<&'static str> {
    suites::SUITES
        .iter()
        .filter(|s| s.options().iter().any(|o| o.dash == Dash::One))
        .map(|s| s.name())
        .filter(|n| words.iter().any(|w| w == n))
        .collect()
}

/// Splits `args` (the whole command line, program first) into what clap parses and the
/// single-dash options given after `run`. A single-dash word that no suite takes, when a suite
/// with such options is named, or a missing value, is refused in one line.
pub fn split(args: Vec<OsString>, shorts: &[char]) -> Result<(Vec<OsString>, Given), String> {
    let Some(at) = args.iter().position(|a| a == "run") else {
        return Ok((args, Vec::new()));
    };
    let words: Vec<String> = args[at + 1..]
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let known = single_dash_options();
    let named = single_dash_suites(&words);
    let mut rest: Vec<OsString> = args[..=at].to_vec();
    let mut given = Given::new();
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        let name = w
            .strip_prefix('-')
            .filter(|n| n.len() >= 2 && looks_like_option(w));
        let Some(name) = name.filter(|n| !n.starts_with('-')) else {
            rest.push(args[at + 1 + i].clone());
            i += 1;
            continue;
        };
        if let Some(o) = known.iter().find(|o| o.long == name) {
            let n = o.kind.arity();
            let values: Vec<&String> = words[i + 1..].iter().take(n).collect();
            if values.len() < n || values.iter().any(|v| looks_like_option(v)) {
                let what = if o.value_name.is_empty() {
                    format!("{n} values")
                } else {
                    o.value_name.to_string()
                };
                return Err(format!("-{name} needs {what}"));
            }
            let joined: Vec<&str> = values.iter().map(|v| v.as_str()).collect();
            given.push((name.to_string(), joined.join(" ")));
            i += 1 + n;
            continue;
        }
        let word_like = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && name.chars().any(|c| !shorts.contains(&c));
        let first_is_short = name.chars().next().is_some_and(|c| shorts.contains(&c))
            && name.chars().skip(1).any(|c| c.is_ascii_digit());
        if !named.is_empty() && word_like && !first_is_short {
            let names: Vec<String> = known.iter().map(|o| format!("-{}", o.long)).collect();
            return Err(format!(
                "unknown option -{name} for {}: its options are {} (see 'fabbench run --help')",
                named.join(", "),
                names.join(" ")
            ));
        }
        rest.push(attached_value(w).unwrap_or_else(|| args[at + 1 + i].clone()));
        i += 1;
    }
    Ok((rest, given))
}

/// `-z50,95` as clap takes it, `--tail-lat=50,95`: a short flag with an optional value takes
/// it attached only (so `-z osu_bw` never eats a suite), and clap attaches a short's value
/// only after `=`.
fn attached_value(word: &str) -> Option<OsString> {
    let mut chars = word.strip_prefix('-')?.chars();
    let short = chars.next()?;
    let value: String = chars.collect();
    if value.is_empty() || value.starts_with('=') {
        return None;
    }
    suites::SUITES
        .iter()
        .flat_map(|s| s.options())
        .find(|o| o.kind == OptionKind::FlagOrValue && o.short == Some(short))
        .map(|o| OsString::from(format!("--{}={value}", o.long)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split_words(line: &str) -> Result<(Vec<String>, Given), String> {
        let args: Vec<OsString> = line.split(' ').map(OsString::from).collect();
        split(args, &run_shorts(&crate::cli::command()))
            .map(|(r, g)| (r.into_iter().map(|a| a.into_string().unwrap()).collect(), g))
    }

    #[test]
    fn an_attached_optional_value_is_given_to_its_long_form() {
        let (rest, _) = split_words("fabbench run osu_latency -z50,95 -z -c").unwrap();
        assert_eq!(
            rest,
            [
                "fabbench",
                "run",
                "osu_latency",
                "--tail-lat=50,95",
                "-z",
                "-c"
            ]
        );
    }

    #[test]
    fn the_ti_guide_line_pastes_as_is() {
        let (rest, given) = split_words(
            "fabbench run mpptest -size 0 1048576 128 -sync -quick -logscale --fabric hyperlink",
        )
        .unwrap();
        assert_eq!(rest.join(" "), "fabbench run mpptest --fabric hyperlink");
        assert_eq!(
            given,
            vec![
                ("size".to_string(), "0 1048576 128".to_string()),
                ("sync".into(), "".into()),
                ("quick".into(), "".into()),
                ("logscale".into(), "".into()),
            ]
        );
    }

    #[test]
    fn clap_keeps_its_own_options() {
        let (rest, given) =
            split_words("fabbench -v run mpptest -fast -f shm -n 4 -vv -fname out.txt").unwrap();
        assert_eq!(rest.join(" "), "fabbench -v run mpptest -f shm -n 4 -vv");
        assert_eq!(given[0].0, "fast");
        assert_eq!(given[1], ("fname".to_string(), "out.txt".to_string()));
        // OSU's short clusters and attached values are clap's
        let (rest, given) = split_words("fabbench run osu_latency -cz -m4K -n2").unwrap();
        assert_eq!(rest.len(), 6);
        assert!(given.is_empty());
    }

    #[test]
    fn an_unknown_word_or_a_missing_value_is_one_line() {
        let e = split_words("fabbench run mpptest -sizes 0 1 1").unwrap_err();
        assert!(e.starts_with("unknown option -sizes for mpptest"), "{e}");
        assert!(e.contains("-size ") && !e.contains('\n'));
        let e = split_words("fabbench run mpptest -size 0 1024").unwrap_err();
        assert_eq!(e, "-size needs START END STRIDE");
        let e = split_words("fabbench run mpptest -fname -sync").unwrap_err();
        assert_eq!(e, "-fname needs FILE");
        let e = split_words("fabbench run mpptest -size 0 10 --fabric shm").unwrap_err();
        assert_eq!(e, "-size needs START END STRIDE");
        // without a suite that takes such words, clap reports them as it always did
        let (rest, _) = split_words("fabbench run osu_latency -bogus").unwrap();
        assert_eq!(rest.last().unwrap(), "-bogus");
    }
}
