//! NPB's problem classes. Each kernel fixes its sizes, iteration counts and reference values
//! per class; S and W are the small test classes, A, B and C the benchmark ones.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A problem class, as NPB names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Class {
    S,
    W,
    A,
    B,
    C,
}

impl Class {
    pub const ALL: [Class; 5] = [Class::S, Class::W, Class::A, Class::B, Class::C];

    /// The class's position in NPB's tables (S = 0 .. C = 4), for per-class arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// Picks this class's entry of a per-class table (S, W, A, B, C).
    pub fn pick<T: Copy>(self, table: [T; 5]) -> T {
        table[self.index()]
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = match self {
            Class::S => "S",
            Class::W => "W",
            Class::A => "A",
            Class::B => "B",
            Class::C => "C",
        };
        f.write_str(c)
    }
}

impl FromStr for Class {
    type Err = String;
    fn from_str(s: &str) -> Result<Class, String> {
        match s.to_ascii_uppercase().as_str() {
            "S" => Ok(Class::S),
            "W" => Ok(Class::W),
            "A" => Ok(Class::A),
            "B" => Ok(Class::B),
            "C" => Ok(Class::C),
            _ => Err(format!("class '{s}' is not one of S, W, A, B, C")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_parse_print_and_index() {
        for c in Class::ALL {
            assert_eq!(c.to_string().parse::<Class>().unwrap(), c);
        }
        assert_eq!("a".parse::<Class>().unwrap(), Class::A);
        assert!("D".parse::<Class>().unwrap_err().contains("S, W, A, B, C"));
        assert_eq!(Class::W.pick([1, 2, 3, 4, 5]), 2);
    }
}
