//! The benchmarks' store: an embedded dynoxide engine served with
//! dynoxide's own HTTP server on 127.0.0.1, for what needs a network
//! endpoint (the capacity model's upstream, the memory children). The host
//! itself never does this.

use std::net::SocketAddr;

use dynaslice_host::EmbeddedStore;

/// Serves `store`'s engine on a free port of 127.0.0.1 until the runtime
/// ends; returns the address.
pub async fn serve_http(store: &EmbeddedStore) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .expect("a free port");
    let addr = listener.local_addr().expect("bound address");
    tokio::spawn(dynoxide::server::serve_on(
        listener,
        store.database().clone(),
    ));
    addr
}
