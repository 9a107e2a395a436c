//! The rules of a manifest's `config.auth` its schema cannot express. A provider is reached
//! over https (its answers decide who people are); plain http only on this machine's loopback,
//! where a test provider or a local proxy runs.

use jig_model::Diagnostic;
use jig_model::diagnostic::codes;
use jig_model::manifest::AuthConfig;

use crate::located::Located;

/// Problems of `auth` (at `/config/auth` of `manifest`).
pub(crate) fn check(auth: &AuthConfig, manifest: &Located) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let Some(oidc) = &auth.oidc else { return out };
    if let Err(why) = issuer(&oidc.issuer) {
        out.push(manifest.at(
            Diagnostic::error(codes::AUTH, format!("issuer `{}` {why}", oidc.issuer)).with_hint(
                "write the provider's issuer as it publishes it, like https://login.acme.example",
            ),
            "/config/auth/oidc/issuer",
        ));
    }
    let roles = &oidc.roles;
    let none = roles.admin.is_empty()
        && roles.approver.is_empty()
        && roles.runner.is_empty()
        && roles.viewer.is_empty()
        && roles.default.is_none();
    if none {
        out.push(
            manifest.at(
                Diagnostic::warning(codes::AUTH, "no group gives a role: nobody can sign in")
                    .with_hint(
                        "map the provider's groups to roles, like `approver: [platform-leads]`",
                    ),
                "/config/auth/oidc/roles",
            ),
        );
    }
    out
}

/// Whether `auth` may be used at all: a provider it names is one Jig may trust (else nobody
/// signs in with it, and `check` says why).
pub(crate) fn usable(auth: &AuthConfig) -> bool {
    auth.oidc.as_ref().is_none_or(|oidc| issuer(&oidc.issuer).is_ok())
}

/// Why `url` is not an issuer Jig may trust, if it is not.
fn issuer(url: &str) -> Result<(), &'static str> {
    let (scheme, rest) = url.split_once("://").ok_or("is not a URL")?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.is_empty() || authority.contains('@') {
        return Err("has no host, or carries credentials");
    }
    if rest.contains(['?', '#']) {
        return Err("has a query or fragment");
    }
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => authority.rsplit_once(':').map_or(authority, |(host, _)| host),
    };
    let loopback =
        host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
    match scheme {
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        "http" => Err("is plain http: a provider is reached over https (http only on loopback)"),
        _ => Err("is not an https URL"),
    }
}

#[cfg(test)]
mod tests {
    use super::issuer;

    #[test]
    fn providers_are_reached_over_https_or_on_loopback() {
        assert!(issuer("https://login.acme.example").is_ok());
        assert!(issuer("https://login.acme.example/realms/ops").is_ok());
        assert!(issuer("http://127.0.0.1:7411").is_ok());
        assert!(issuer("http://[::1]:7411").is_ok());
        assert!(issuer("http://localhost:7411").is_ok());
        assert!(issuer("http://login.acme.example").is_err());
        assert!(issuer("http://127.0.0.1.evil.example").is_err());
        assert!(issuer("https://user:pw@login.acme.example").is_err());
        assert!(issuer("https://login.acme.example/?x=1").is_err());
        assert!(issuer("ftp://login.acme.example").is_err());
        assert!(issuer("login.acme.example").is_err());
    }
}
