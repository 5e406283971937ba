//! TLS for Postgres connections, as libpq's `sslmode` means it, with rustls (pure Rust, the
//! `ring` provider): no system OpenSSL.
//!
//! * `disable`: plain text. `allow` / `prefer`: TLS when the server offers it, else plain text.
//!   `require`: TLS or nothing. None of these check the server's certificate — unless a root
//!   certificate file is there (`sslrootcert`, or `~/.postgresql/root.crt`), when libpq checks the
//!   chain against it and so does this.
//! * `verify-ca`: the chain must lead to a root in `sslrootcert` (default `~/.postgresql/root.crt`,
//!   which must then exist; `sslrootcert=system` = the system's trusted roots).
//! * `verify-full`: `verify-ca`, and the certificate must name the host connected to.
//! * A client certificate is sent when `sslcert` / `sslkey` (default `~/.postgresql/postgresql.crt`
//!   / `.key`) exist.

use super::target::{Host, SslMode, Target};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What `connect` hands the `postgres` crate for a TLS session.
pub type Connector = tokio_postgres_rustls::MakeRustlsConnect;

/// The connector `t` asks for: `None` for plain text (`sslmode=disable`, or a unix socket, where
/// libpq never uses TLS either); an error (one line, naming the file at fault) when its files
/// cannot be used.
pub fn connector(t: &Target) -> Result<Option<Connector>, String> {
    if t.sslmode == SslMode::Disable || !matches!(t.host, Host::Tcp(_)) {
        return Ok(None);
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let roots = roots(t)?;
    let verify = matches!(t.sslmode, SslMode::VerifyCa | SslMode::VerifyFull) || roots.is_some();
    let inner = match roots.filter(|_| verify) {
        Some(store) => Some(
            WebPkiServerVerifier::builder_with_provider(Arc::new(store), provider.clone())
                .build()
                .map_err(|e| format!("TLS: the root certificates cannot be used: {e}"))?,
        ),
        None => None,
    };
    let verifier = Arc::new(Verifier {
        inner,
        check_name: t.sslmode == SslMode::VerifyFull,
        provider: provider.clone(),
    });
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let config = match client_cert(t)? {
        Some((chain, key)) => builder
            .with_client_auth_cert(chain, key)
            .map_err(|e| format!("TLS: the client certificate cannot be used: {e}"))?,
        None => builder.with_no_client_auth(),
    };
    Ok(Some(Connector::new(config)))
}

/// A TLS failure said in `sslmode`'s terms (`None`: not about TLS).
pub fn explain(e: &postgres::Error, t: &Target) -> Option<String> {
    let text = e.to_string();
    let mut inner = None;
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        inner = Some(s.to_string());
        src = s.source();
    }
    let why = inner.unwrap_or_else(|| text.clone());
    let mode = t.sslmode.name();
    if text.contains("server does not support TLS") {
        return Some(format!(
            "the server does not accept TLS connections, and sslmode={mode} requires TLS (turn ssl on at the server, or use sslmode=prefer / disable)"
        ));
    }
    if !text.contains("TLS") && !why.contains("certificate") {
        return None;
    }
    let host = match &t.host {
        Host::Tcp(h) => h.as_str(),
        Host::Unix(_) => "",
    };
    let roots = match &t.sslrootcert {
        Some(p) => p.display().to_string(),
        None => "~/.postgresql/root.crt".into(),
    };
    Some(
        if why.contains("NotValidForName") || why.contains("not valid for name") {
            format!("TLS: the server's certificate is not valid for the host name {host:?} (sslmode=verify-full checks the name; verify-ca does not): {why}")
        } else if why.contains("UnknownIssuer") || why.contains("unknown issuer") {
            format!("TLS: the server's certificate is not signed by a root certificate in {roots} (sslmode={mode}): {why}")
        } else if why.contains("certificate") {
            format!("TLS: the server's certificate was refused (sslmode={mode}): {why}")
        } else {
            format!("TLS handshake failed (sslmode={mode}): {why}")
        },
    )
}

/// The root store to check the server's chain against, if any: `sslrootcert` (a PEM file, or
/// `system`), else `~/.postgresql/root.crt` when it exists. `verify-*` without one is an error,
/// as in libpq.
fn roots(t: &Target) -> Result<Option<RootCertStore>, String> {
    if t.sslmode == SslMode::Disable {
        return Ok(None);
    }
    let file = match &t.sslrootcert {
        Some(p) if p.as_os_str() == "system" => {
            let found = rustls_native_certs::load_native_certs();
            let mut store = RootCertStore::empty();
            let (added, _) = store.add_parsable_certificates(found.certs);
            if added == 0 {
                return Err(format!(
                    "sslrootcert=system: no trusted root certificates found on this system{}",
                    found
                        .errors
                        .first()
                        .map(|e| format!(" ({e})"))
                        .unwrap_or_default()
                ));
            }
            return Ok(Some(store));
        }
        Some(p) => Some(p.clone()),
        None => t.home.as_ref().map(|h| h.join(".postgresql/root.crt")),
    };
    match file {
        Some(f) if f.exists() => {
            let mut store = RootCertStore::empty();
            let certs = read_certs(&f)?;
            let (added, _) = store.add_parsable_certificates(certs);
            if added == 0 {
                return Err(format!("{}: no usable certificate in it", f.display()));
            }
            Ok(Some(store))
        }
        Some(f) if t.sslrootcert.is_some() || t.sslmode.verifies() => Err(format!(
            "root certificate file {} does not exist: give one with sslrootcert=FILE (or sslrootcert=system for the system's trusted roots), or use sslmode=require to skip checking the server's certificate",
            f.display()
        )),
        _ if t.sslmode.verifies() => Err(
            "sslmode=".to_string() + t.sslmode.name() + " needs a root certificate: sslrootcert=FILE (or sslrootcert=system); no home directory to find ~/.postgresql/root.crt in",
        ),
        _ => Ok(None),
    }
}

fn read_certs(f: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    CertificateDer::pem_file_iter(f)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("{}: not a PEM certificate file ({e})", f.display()))
}

/// `sslcert` + `sslkey` (defaults `~/.postgresql/postgresql.crt` / `.key`, used when present).
fn client_cert(
    t: &Target,
) -> Result<Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)>, String> {
    let dir = t.home.as_ref().map(|h| h.join(".postgresql"));
    let cert = t
        .sslcert
        .clone()
        .or_else(|| dir.as_ref().map(|d| d.join("postgresql.crt")));
    let key: Option<PathBuf> = t
        .sslkey
        .clone()
        .or_else(|| dir.as_ref().map(|d| d.join("postgresql.key")));
    let Some(cert) = cert.filter(|c| c.exists()) else {
        if let Some(c) = &t.sslcert {
            return Err(format!("certificate file {} does not exist", c.display()));
        }
        return Ok(None);
    };
    let Some(key) = key.filter(|k| k.exists()) else {
        return Err(format!(
            "certificate {} has no private key (sslkey, default ~/.postgresql/postgresql.key)",
            cert.display()
        ));
    };
    let chain = read_certs(&cert)?;
    let key = PrivateKeyDer::from_pem_file(&key)
        .map_err(|e| format!("{}: not a PEM private key ({e})", key.display()))?;
    Ok(Some((chain, key)))
}

/// libpq's checks: the chain (when there are roots to check it against), the host name only for
/// `verify-full`; the handshake's signatures always.
#[derive(Debug)]
struct Verifier {
    inner: Option<Arc<WebPkiServerVerifier>>,
    check_name: bool,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(inner) = &self.inner else {
            return Ok(ServerCertVerified::assertion());
        };
        match inner.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.check_name => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::postgres::target::Env;

    struct Home(Option<PathBuf>);
    impl Env for Home {
        fn var(&self, _: &str) -> Option<String> {
            None
        }
        fn home(&self) -> Option<PathBuf> {
            self.0.clone()
        }
        fn os_user(&self) -> String {
            "alice".into()
        }
    }

    fn target(url: &str, home: &Path) -> Target {
        Target::parse(url, &Home(Some(home.to_path_buf()))).unwrap()
    }

    fn err(url: &str, home: &Path) -> String {
        match connector(&target(url, home)) {
            Err(e) => e,
            Ok(c) => panic!("{url}: a connector ({})", c.is_some()),
        }
    }

    #[test]
    fn plain_text_needs_no_connector() {
        let home = tempfile::tempdir().unwrap();
        for url in [
            "postgresql://u@h/db?sslmode=disable",
            // a unix socket never speaks TLS, whatever sslmode says (libpq's rule)
            "postgresql://u@/db?host=/run/postgresql&sslmode=verify-full",
        ] {
            assert!(
                connector(&target(url, home.path())).unwrap().is_none(),
                "{url}"
            );
        }
        for url in [
            "postgresql://u@h/db",
            "postgresql://u@h/db?sslmode=allow",
            "postgresql://u@h/db?sslmode=require",
        ] {
            assert!(
                connector(&target(url, home.path())).unwrap().is_some(),
                "{url}"
            );
        }
    }

    #[test]
    fn verifying_needs_a_root_certificate_as_in_libpq() {
        let home = tempfile::tempdir().unwrap();
        let e = err("postgresql://u@h/db?sslmode=verify-full", home.path());
        assert!(e.contains(".postgresql/root.crt does not exist"), "{e}");
        assert!(e.contains("sslrootcert=system"), "{e}");
        let e = err(
            "postgresql://u@h/db?sslmode=require&sslrootcert=/nonexistent/ca.crt",
            home.path(),
        );
        assert!(e.contains("/nonexistent/ca.crt does not exist"), "{e}");
        // a file that holds no certificate
        let junk = home.path().join("junk.crt");
        std::fs::write(&junk, "not a certificate\n").unwrap();
        let e = err(
            &format!(
                "postgresql://u@h/db?sslmode=verify-ca&sslrootcert={}",
                junk.display()
            ),
            home.path(),
        );
        assert!(e.contains("junk.crt: no usable certificate"), "{e}");
    }

    #[test]
    fn a_client_certificate_needs_its_key() {
        let home = tempfile::tempdir().unwrap();
        let e = err(
            "postgresql://u@h/db?sslmode=require&sslcert=/nonexistent/client.crt",
            home.path(),
        );
        assert!(
            e.contains("certificate file /nonexistent/client.crt does not exist"),
            "{e}"
        );
        let cert = home.path().join("client.crt");
        std::fs::write(&cert, "x").unwrap();
        let e = err(
            &format!(
                "postgresql://u@h/db?sslmode=require&sslcert={}&sslkey=/nonexistent/k.key",
                cert.display()
            ),
            home.path(),
        );
        assert!(e.contains("has no private key"), "{e}");
    }
}
