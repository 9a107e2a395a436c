//! Rule `sec.network.allowlist`: which URLs a tool may reach.
//!
//! The host is taken from a real URL parser (WHATWG), never from the text: `https://ok.example@evil.example/`
//! goes to `evil.example`, and `http://2130706433/`, `http://0x7f.1/` and `http://017700000001/`
//! are all `127.0.0.1`. Host names compare case-insensitively without a trailing dot. Addresses
//! in loopback, private, link-local and other non-public ranges — including IPv4 written inside
//! IPv6 (`::ffff:127.0.0.1`, NAT64, 6to4) — are refused unless `allow_private` is set, even when
//! the name is allow-listed, since a name is only as good as what it resolves to.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use jig_model::policy::NetworkPolicy;
use url::{Host, Url};

use crate::decision::Denial;

/// The rule id.
pub const RULE: &str = "sec.network.allowlist";

/// Check `raw` against `policy`; the parsed URL when allowed.
pub fn check_url(raw: &str, policy: &NetworkPolicy) -> Result<Url, Denial> {
    let url =
        Url::parse(raw).map_err(|e| Denial::new(RULE, format!("`{raw}` is not a URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Denial::new(
            RULE,
            format!("scheme `{}` is not allowed; use http or https", url.scheme()),
        ));
    }
    // Credentials in a URL end up in logs, histories and the audit, and `user@host` is a
    // classic way to make a URL read as another host: refused (docs/policy.md).
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Denial::new(
            RULE,
            "URLs with credentials (`user:password@`) are refused; pass credentials in a header",
        ));
    }
    match url.host() {
        None => Err(Denial::new(RULE, format!("`{raw}` has no host"))),
        Some(Host::Domain(name)) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            if allowed_name(&name, &policy.allowed_domains) {
                Ok(url)
            } else {
                Err(Denial::new(RULE, format!("host `{name}` is not in `network.allowed_domains`")))
            }
        }
        Some(Host::Ipv4(ip)) => check_literal(IpAddr::V4(ip), policy).map(|()| url),
        Some(Host::Ipv6(ip)) => check_literal(IpAddr::V6(ip), policy).map(|()| url),
    }
}

/// An address written in the URL: it must be allow-listed (or the list be `*`), and be public
/// unless `allow_private`.
fn check_literal(ip: IpAddr, policy: &NetworkPolicy) -> Result<(), Denial> {
    check_resolved(ip, policy)?;
    let listed = policy.allowed_domains.iter().any(|entry| {
        entry == "*"
            || entry
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<IpAddr>()
                .is_ok_and(|e| e == ip)
    });
    if listed {
        Ok(())
    } else {
        Err(Denial::new(RULE, format!("address {ip} is not in `network.allowed_domains`")))
    }
}

/// An address a connection is about to use, after DNS resolution of an allowed name: it must
/// be public unless `allow_private` (this is what stops DNS rebinding to internal services).
pub fn check_resolved(ip: IpAddr, policy: &NetworkPolicy) -> Result<(), Denial> {
    if !policy.allow_private && !is_public(ip) {
        return Err(Denial::new(
            RULE,
            format!("{ip} is a loopback, private or otherwise non-public address"),
        ));
    }
    Ok(())
}

fn allowed_name(name: &str, allowed: &[String]) -> bool {
    allowed.iter().any(|entry| {
        let entry = entry.trim_end_matches('.').to_ascii_lowercase();
        match entry.strip_prefix("*.") {
            Some(suffix) => name.len() > suffix.len() && name.ends_with(&format!(".{suffix}")),
            None => entry == "*" || entry == name,
        }
    })
}

/// Whether `ip` is a globally reachable unicast address.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || a >= 240 // reserved, and 255.255.255.255
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 198 && (b == 18 || b == 19))) // benchmarking
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let segments = ip.segments();
    // IPv4 carried inside IPv6 is judged as the IPv4 address it carries.
    if let Some(v4) = embedded_v4(ip) {
        return is_public_v4(v4);
    }
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || (segments[0] & 0xfe00) == 0xfc00 // unique local
        || (segments[0] & 0xffc0) == 0xfe80 // link-local
        || (segments[0] & 0xffc0) == 0xfec0 // site-local (deprecated)
        || (segments[0] == 0x2001 && segments[1] == 0x0db8)) // documentation
}

/// The IPv4 address inside an IPv4-mapped, IPv4-compatible, NAT64 or 6to4 address.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low =
        |hi: u16, lo: u16| Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8);
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    if s[..6] == [0, 0, 0, 0, 0, 0] && !(s[6] == 0 && s[7] <= 1) {
        return Some(low(s[6], s[7])); // IPv4-compatible (deprecated)
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(low(s[6], s[7])); // NAT64
    }
    if s[0] == 0x2002 {
        return Some(low(s[1], s[2])); // 6to4
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(domains: &[&str]) -> NetworkPolicy {
        NetworkPolicy {
            allowed_domains: domains.iter().map(|d| (*d).to_owned()).collect(),
            allow_private: false,
        }
    }

    #[test]
    fn names_match_exactly_or_by_suffix_case_and_trailing_dot_aside() {
        let p = policy(&["crates.io", "*.github.com"]);
        for ok in [
            "https://crates.io/x",
            "https://CRATES.IO./",
            "https://api.github.com/",
            "http://a.b.github.com:8080/",
        ] {
            assert!(check_url(ok, &p).is_ok(), "{ok}");
        }
        for bad in [
            "https://github.com/",
            "https://evilcrates.io/",
            "https://crates.io.evil.example/",
            "ftp://crates.io/",
        ] {
            assert!(check_url(bad, &p).is_err(), "{bad}");
        }
    }

    #[test]
    fn userinfo_does_not_change_the_host() {
        let p = policy(&["crates.io"]);
        assert!(check_url("https://crates.io@evil.example/", &p).is_err());
        assert!(check_url("https://evil.example#@crates.io/", &p).is_err());
        for with_userinfo in
            ["https://user:pw@crates.io/", "https://user@crates.io/", "https://:pw@crates.io/"]
        {
            let denied = check_url(with_userinfo, &p).expect_err(with_userinfo);
            assert!(denied.reason.contains("credentials"), "{}", denied.reason);
        }
    }

    #[test]
    fn loopback_and_private_literals_are_refused_in_every_notation() {
        let p = policy(&["*"]);
        for bad in [
            "http://127.0.0.1/",
            "http://2130706433/",
            "http://0x7f000001/",
            "http://0x7f.0.0.1/",
            "http://017700000001/",
            "http://127.1/",
            "http://[::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://[::ffff:7f00:1]/",
            "http://[64:ff9b::a00:1]/",
            "http://[2002:a9fe:a9fe::]/",
            "http://10.0.0.1/",
            "http://169.254.169.254/latest/meta-data/",
            "http://100.64.0.1/",
            "http://0.0.0.0/",
            "http://[fd00::1]/",
            "http://[fe80::1]/",
        ] {
            assert!(check_url(bad, &p).is_err(), "{bad}");
        }
        let mut allow = policy(&["*"]);
        allow.allow_private = true;
        assert!(check_url("http://127.0.0.1:8080/", &allow).is_ok());
    }

    #[test]
    fn public_literals_need_an_allow_list_entry() {
        assert!(check_url("http://93.184.216.34/", &policy(&["example.com"])).is_err());
        assert!(check_url("http://93.184.216.34/", &policy(&["93.184.216.34"])).is_ok());
        assert!(
            check_url("http://[2606:2800:220:1::1]/", &policy(&["[2606:2800:220:1::1]"])).is_ok()
        );
    }
}
