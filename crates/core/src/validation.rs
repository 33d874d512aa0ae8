use std::fmt;

/// One rule a request broke, named by its JSON field path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self { field: field.into(), message: message.into() }
    }
}

/// Every rule a request broke, so a client can fix them all at once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ValidationErrors(Vec<FieldError>);

impl ValidationErrors {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn single(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self(vec![FieldError::new(field, message)])
    }

    pub fn push(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.0.push(FieldError::new(field, message));
    }

    /// Keeps the value when it parsed, records the error otherwise.
    pub fn check<T>(&mut self, result: Result<T, FieldError>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(error) => {
                self.0.push(error);
                None
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn errors(&self) -> &[FieldError] {
        &self.0
    }

    /// `Ok(())` when nothing was recorded.
    pub fn into_result(self) -> Result<(), ValidationErrors> {
        if self.0.is_empty() { Ok(()) } else { Err(self) }
    }
}

impl fmt::Display for ValidationErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fields: Vec<&str> = self.0.iter().map(|e| e.field.as_str()).collect();
        write!(f, "invalid fields: {}", fields.join(", "))
    }
}

impl std::error::Error for ValidationErrors {}

impl From<FieldError> for ValidationErrors {
    fn from(error: FieldError) -> Self {
        Self(vec![error])
    }
}
