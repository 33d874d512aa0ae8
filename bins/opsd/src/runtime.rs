//! The process's Tokio runtime. The HTTP workers have a runtime each (actix); this one runs the rest:
//! the database connections' drivers, the listener and the background tasks.

/// Half the cores, at least one. Every thread here competes with an HTTP worker for the cores, and
/// each hand-off between a handler and its connection's driver wakes the other side. Measured on
/// 2 cores (uncached team-wide report, 32 connections): one thread here served 13% more requests
/// than two. `TOKIO_WORKER_THREADS`, Tokio's own variable, overrides it.
pub fn background_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |cores| (cores.get() / 2).max(1))
}

pub fn background() -> std::io::Result<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all();
    if std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
        builder.worker_threads(background_threads());
    }
    builder.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_background_runtime_can_block_in_place_as_migrations_do() {
        let runtime = background().unwrap();
        let answer = runtime.block_on(async {
            let driver = tokio::spawn(async { 42 });
            let blocked = tokio::task::block_in_place(|| 1);
            blocked + driver.await.unwrap()
        });
        assert_eq!(answer, 43);
        assert!(background_threads() >= 1);
    }
}
