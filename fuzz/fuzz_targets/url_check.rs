//! `curl`'s URL check against an independent reading of the same URL: whatever it accepts is
//! http(s), carries no credentials, and goes to an allow-listed name, or to a public address
//! when any host is allowed.
#![no_main]

use std::net::IpAddr;

use jig_model::policy::NetworkPolicy;
use libfuzzer_sys::fuzz_target;
use url::Host;

fn public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast())
        }
        IpAddr::V6(v6) => {
            let mapped = v6.to_ipv4_mapped().map(IpAddr::V4);
            !(v6.is_loopback() || v6.is_unspecified()) && mapped.is_none_or(public)
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = std::str::from_utf8(data) else { return };
    let named = NetworkPolicy {
        allowed_domains: vec!["example.com".into(), "*.corp.example".into()],
        ..NetworkPolicy::default()
    };
    if let Ok(url) = jig_policy::network::check_url(raw, &named) {
        let reread = url::Url::parse(raw).expect("accepted, so it parses");
        assert!(matches!(reread.scheme(), "http" | "https"), "{raw}");
        assert!(reread.username().is_empty() && reread.password().is_none(), "{raw}");
        match reread.host() {
            Some(Host::Domain(name)) => {
                let name = name.trim_end_matches('.').to_ascii_lowercase();
                assert!(
                    name == "example.com" || name.ends_with(".corp.example"),
                    "{raw} reached {name}"
                );
            }
            other => panic!("{raw}: an address passed a list of names: {other:?}"),
        }
        assert_eq!(url.host_str(), reread.host_str());
    }
    let any = NetworkPolicy { allowed_domains: vec!["*".into()], ..NetworkPolicy::default() };
    if jig_policy::network::check_url(raw, &any).is_ok() {
        let reread = url::Url::parse(raw).expect("accepted, so it parses");
        match reread.host() {
            Some(Host::Ipv4(v4)) => assert!(public(IpAddr::V4(v4)), "{raw}"),
            Some(Host::Ipv6(v6)) => assert!(public(IpAddr::V6(v6)), "{raw}"),
            _ => {}
        }
    }
});
