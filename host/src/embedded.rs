//! The embedded store: dynoxide (a DynamoDB-compatible server on SQLite)
//! running inside this process, serving the DynamoDB API on 127.0.0.1, so
//! dynaslice works on a fresh machine with no AWS account. The host talks to
//! it through the same SDK client as to any server.

use std::net::SocketAddr;
use std::path::Path;

use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::error::HostError;

/// A running embedded store. Stop it with [`EmbeddedStore::stop`]; dropping
/// it stops accepting connections too.
#[derive(Debug)]
pub struct EmbeddedStore {
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<Result<(), String>>>,
}

impl EmbeddedStore {
    /// Starts the store on 127.0.0.1 and a free port, with its data in the
    /// SQLite file `path` (created with its folder if missing), or in memory
    /// when `path` is `None`. Must run inside a tokio runtime.
    pub async fn start(path: Option<&Path>) -> Result<Self, HostError> {
        let db = match path {
            Some(path) => {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).map_err(|e| HostError::io(dir.display(), e))?;
                }
                let text = path.to_str().ok_or_else(|| {
                    HostError::Embedded(format!("path {} is not UTF-8", path.display()))
                })?;
                dynoxide::Database::new(text)
            }
            None => dynoxide::Database::memory(),
        }
        .map_err(|e| HostError::Embedded(e.to_string()))?;
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(|e| HostError::Embedded(format!("cannot listen on 127.0.0.1: {e}")))?;
        let addr = listener
            .local_addr()
            .map_err(|e| HostError::Embedded(e.to_string()))?;
        let (shutdown, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(dynoxide::server::serve_with_shutdown(listener, db, async {
            let _ = stopped.await;
        }));
        Ok(Self {
            addr,
            shutdown: Some(shutdown),
            task: Some(task),
        })
    }

    /// The address it serves on (always 127.0.0.1).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The endpoint URL for an SDK client.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops serving and waits for requests in flight to finish.
    pub async fn stop(mut self) -> Result<(), HostError> {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        match self.task.take() {
            Some(task) => task
                .await
                .map_err(|e| HostError::Embedded(e.to_string()))?
                .map_err(HostError::Embedded),
            None => Ok(()),
        }
    }
}

impl Drop for EmbeddedStore {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }
}
