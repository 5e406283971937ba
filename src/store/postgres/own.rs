//! superstep's own tables beside LangGraph's in a Postgres database (the recorded calls,
//! `crate::replay`): a plain client reached exactly as the store is.

use super::{classify, connect, redact, tls, Mode, ProcessEnv, StoreError, Target};
use postgres::Client;

/// A plain client on the database `url` names — libpq's environment, pgpass and TLS as for the
/// store — for superstep's own tables beside LangGraph's (the recorded calls, `crate::replay`).
pub fn client(url: &str, mode: Mode) -> Result<Client, StoreError> {
    let target = Target::parse(url, &ProcessEnv).map_err(|detail| StoreError::Server {
        path: redact(url),
        detail,
    })?;
    let label = target.label();
    let tls = tls::connector(&target).map_err(|detail| StoreError::Server {
        path: label.clone(),
        detail,
    })?;
    connect(&target, tls.as_ref(), mode).map_err(|e| classify(&label, &target, &e))
}
