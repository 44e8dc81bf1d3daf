//! The page's settings, each said once: those every column ran with, those every column of one
//! fabric ran with (a fabric's model parameters, say), and per column only the settings that
//! set it apart from the other columns of its fabric. A run records twenty-odd tunables; said
//! per column they made a line of 600 characters that hid the one that differed.

use std::collections::BTreeMap;

use crate::Column;

type Settings = Vec<String>;

/// The settings of the columns, split by how widely each is shared.
#[derive(Debug, Clone, PartialEq)]
pub struct Split {
    /// Same value in every column.
    pub common: Settings,
    /// Per fabric (in column order), the settings all its columns share beyond `common`;
    /// fabrics with none left out.
    pub per_fabric: Vec<(String, Settings)>,
    /// Per column, the settings its fabric's other columns do not all share.
    pub per_column: Vec<Settings>,
}

/// The settings every one of `sets` holds with the same value, in name order.
fn shared<'a>(sets: impl Iterator<Item = &'a Settings> + Clone) -> Settings {
    let mut all = sets.clone();
    let Some(first) = all.next() else {
        return Vec::new();
    };
    first
        .iter()
        .filter(|kv| sets.clone().all(|s| s.contains(kv)))
        .cloned()
        .collect()
}

pub fn split(columns: &[Column]) -> Split {
    let common = shared(columns.iter().map(|c| &c.settings));
    let mut fabrics: Vec<&str> = Vec::new();
    for c in columns {
        if !fabrics.contains(&c.fabric.as_str()) {
            fabrics.push(&c.fabric);
        }
    }
    let of_fabric: BTreeMap<&str, Settings> = fabrics
        .iter()
        .map(|f| {
            let mine = columns
                .iter()
                .filter(|c| c.fabric == *f)
                .map(|c| &c.settings);
            (*f, shared(mine))
        })
        .collect();
    let per_fabric = fabrics
        .iter()
        .map(|f| {
            let rest: Settings = of_fabric[f]
                .iter()
                .filter(|kv| !common.contains(kv))
                .cloned()
                .collect();
            (f.to_string(), rest)
        })
        .filter(|(_, rest)| !rest.is_empty())
        .collect();
    let per_column = columns
        .iter()
        .map(|c| {
            let own = &of_fabric[c.fabric.as_str()];
            c.settings
                .iter()
                .filter(|kv| !own.contains(kv))
                .cloned()
                .collect()
        })
        .collect();
    Split {
        common,
        per_fabric,
        per_column,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(fabric: &str, settings: &[(&str, &str)]) -> Column {
        Column {
            label: fabric.into(),
            input: 0,
            run_id: "A".into(),
            partial: false,
            fabric: fabric.into(),
            ranks: 2,
            kind: "native".into(),
            host: "h".into(),
            start_time: "t".into(),
            settings_line: String::new(),
            settings: settings.iter().map(|(k, v)| format!("{k}={v}")).collect(),
        }
    }

    fn kv(pairs: &[(&str, &str)]) -> Settings {
        pairs.iter().map(|(k, v)| format!("{k}={v}")).collect()
    }

    #[test]
    fn each_setting_is_said_once_where_it_is_shared() {
        let cols = [
            column("shm", &[("eager_limit", "4KiB"), ("shm.ring", "1MiB")]),
            column("shm", &[("eager_limit", "1KiB"), ("shm.ring", "1MiB")]),
            column("rapidio", &[("eager_limit", "4KiB"), ("rapidio.x", "8")]),
        ];
        let s = split(&cols);
        // eager_limit differs, so nothing is common to all three.
        assert_eq!(s.common, kv(&[]));
        assert_eq!(
            s.per_fabric,
            [
                ("shm".to_string(), kv(&[("shm.ring", "1MiB")])),
                (
                    "rapidio".to_string(),
                    kv(&[("eager_limit", "4KiB"), ("rapidio.x", "8")])
                )
            ]
        );
        assert_eq!(
            s.per_column,
            [
                kv(&[("eager_limit", "4KiB")]),
                kv(&[("eager_limit", "1KiB")]),
                kv(&[])
            ]
        );
    }

    #[test]
    fn settings_all_columns_share_are_common_and_nowhere_else() {
        let cols = [
            column("shm", &[("frag", "32KiB"), ("eager_limit", "4KiB")]),
            column("shm", &[("frag", "32KiB"), ("eager_limit", "1KiB")]),
        ];
        let s = split(&cols);
        assert_eq!(s.common, kv(&[("frag", "32KiB")]));
        assert!(s.per_fabric.is_empty(), "{s:?}");
        assert_eq!(s.per_column[1], kv(&[("eager_limit", "1KiB")]));
    }
}
