use serde::{Deserialize, Serialize};

/// Where a shift's labor counts: front of house, back of house, or other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Department {
    #[serde(rename = "FOH")]
    Foh,
    #[serde(rename = "BOH")]
    Boh,
    Other,
}

impl Department {
    pub fn as_str(self) -> &'static str {
        match self {
            Department::Foh => "FOH",
            Department::Boh => "BOH",
            Department::Other => "Other",
        }
    }

    pub fn parse(stored: &str) -> Option<Self> {
        [Department::Foh, Department::Boh, Department::Other].into_iter().find(|d| d.as_str() == stored)
    }
}
