/// What a storage or provider port may fail with besides its business outcomes. The adapter keeps
/// the driver's own message for the log; it never reaches a client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The store could not be reached (pool exhausted, connection lost): worth a retry.
    #[error("store unavailable: {0}")]
    Unavailable(String),
    #[error("store failure: {0}")]
    Unknown(String),
}
