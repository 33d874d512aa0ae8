//! Rules written once: validation checks them, and the API document states them (the binary reads
//! these same values into its request schemas).

/// A text of `min` to `max` characters (Unicode scalar values), as the field keeps it (trimmed when
/// the field trims). With `min` above 0, whitespace alone does not count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextLength {
    pub min: usize,
    pub max: usize,
}

impl TextLength {
    pub const fn new(min: usize, max: usize) -> Self {
        Self { min, max }
    }

    pub fn fits(&self, value: &str) -> bool {
        let count = value.chars().count();
        count >= self.min && count <= self.max && (self.min == 0 || !value.trim().is_empty())
    }

    /// `must be 1 to 200 characters`, or `must be at most 2000 characters` when it may be empty.
    pub fn message(&self) -> String {
        if self.min == 0 {
            format!("must be at most {} characters", self.max)
        } else {
            format!("must be {} to {} characters", self.min, self.max)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_length_counts_characters_and_refuses_only_whitespace_when_required() {
        let name = TextLength::new(1, 3);
        assert!(name.fits("añb") && !name.fits("abcd") && !name.fits("") && !name.fits("  "));
        assert!(TextLength::new(0, 2).fits(""));
        assert_eq!(name.message(), "must be 1 to 3 characters");
        assert_eq!(TextLength::new(0, 2000).message(), "must be at most 2000 characters");
    }
}
