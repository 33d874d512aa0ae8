crate::wire_enum! {
    /// Where a shift's labor counts: front of house, back of house, or other.
    pub enum Department {
        #[strum(serialize = "FOH")]
        Foh,
        #[strum(serialize = "BOH")]
        Boh,
        Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_written_once_and_read_back() {
        assert_eq!(Department::names(), ["FOH", "BOH", "Other"]);
        assert_eq!(Department::parse("BOH"), Some(Department::Boh));
        assert_eq!(Department::parse("boh"), None);
        assert_eq!(serde_json::to_string(&Department::Foh).unwrap(), "\"FOH\"");
        let error = serde_json::from_str::<Department>("\"Kitchen\"").unwrap_err().to_string();
        assert!(error.starts_with("unknown variant `Kitchen`, expected one of `FOH`, `BOH`, `Other`"), "{error}");
        assert!(serde_json::from_str::<Department>("3").is_err());
    }
}
