use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use async_trait::async_trait;
use opsd_core::{OutboundUrlPolicy, UrlRejected};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::{Host, Url};

/// Where outbound calls to user-supplied URLs may go: `https` to public addresses only. With
/// `allow_loopback` (tests), plain `http` to loopback passes too.
#[derive(Debug, Clone, Copy)]
pub struct OutboundTargets {
    pub allow_loopback: bool,
}

impl OutboundTargets {
    fn allowed(self, ip: IpAddr) -> bool {
        is_public_address(ip) || (self.allow_loopback && ip.is_loopback())
    }

    /// A client whose DNS answers pass through the same rule, so a name that resolves to a
    /// private address at connect time (DNS rebinding) is refused too.
    pub fn guarded_client(self, timeout: std::time::Duration) -> reqwest::Client {
        reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(std::time::Duration::from_secs(5)))
            .redirect(reqwest::redirect::Policy::none())
            .dns_resolver(Arc::new(GuardedResolver { targets: self }))
            .build()
            .expect("a reqwest client with a guarded resolver")
    }

    fn check_syntax(self, raw: &str) -> Result<Url, UrlRejected> {
        let url = Url::parse(raw).map_err(|_| UrlRejected("must be an absolute URL".into()))?;
        let scheme_ok = url.scheme() == "https" || (self.allow_loopback && url.scheme() == "http");
        if !scheme_ok {
            return Err(UrlRejected("must be an https URL".into()));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(UrlRejected("must not carry credentials".into()));
        }
        if url.host().is_none() {
            return Err(UrlRejected("must name a host".into()));
        }
        Ok(url)
    }
}

#[async_trait]
impl OutboundUrlPolicy for OutboundTargets {
    async fn check(&self, raw: &str) -> Result<(), UrlRejected> {
        let url = self.check_syntax(raw)?;
        let port = url.port_or_known_default().unwrap_or(443);
        let addresses: Vec<IpAddr> = match url.host() {
            Some(Host::Ipv4(ip)) => vec![IpAddr::V4(ip)],
            Some(Host::Ipv6(ip)) => vec![IpAddr::V6(ip)],
            Some(Host::Domain(domain)) => tokio::net::lookup_host((domain, port))
                .await
                .map_err(|_| UrlRejected("the host does not resolve".into()))?
                .map(|addr| addr.ip())
                .collect(),
            None => Vec::new(),
        };
        if addresses.is_empty() || !addresses.iter().all(|ip| self.allowed(*ip)) {
            return Err(UrlRejected("must point to a public internet address".into()));
        }
        Ok(())
    }
}

struct GuardedResolver {
    targets: OutboundTargets,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let targets = self.targets;
        Box::pin(async move {
            let found: Vec<SocketAddr> = tokio::net::lookup_host((name.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> = found.into_iter().filter(|addr| targets.allowed(addr.ip())).collect();
            if allowed.is_empty() {
                return Err("the host resolves to no public address".into());
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

/// Not loopback, private, link-local, unspecified, shared (CGNAT), documentation, multicast or
/// broadcast; IPv4-mapped IPv6 addresses are judged as the IPv4 address they carry.
pub fn is_public_address(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
                || (a == 198 && (b == 18 || b == 19))
                || a >= 240)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public_address(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
                || first == 0x2001 && v6.segments()[1] == 0x0db8)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STRICT: OutboundTargets = OutboundTargets { allow_loopback: false };
    const TESTS: OutboundTargets = OutboundTargets { allow_loopback: true };

    #[test]
    fn private_and_special_addresses_are_not_public() {
        for ip in [
            "127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "0.0.0.0", "100.64.0.1",
            "255.255.255.255", "224.0.0.1", "::1", "::", "fd00::1", "fe80::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1",
        ] {
            assert!(!is_public_address(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111"] {
            assert!(is_public_address(ip.parse().unwrap()), "{ip}");
        }
    }

    #[tokio::test]
    async fn only_https_to_public_addresses_passes() {
        assert!(STRICT.check("https://8.8.8.8/hook").await.is_ok());
        for bad in [
            "http://8.8.8.8/hook",
            "https://127.0.0.1/hook",
            "https://localhost/hook",
            "https://[::1]/hook",
            "https://169.254.169.254/latest/meta-data",
            "https://10.0.0.1/",
            "https://user:pw@8.8.8.8/",
            "ftp://8.8.8.8/",
            "not a url",
        ] {
            assert!(STRICT.check(bad).await.is_err(), "{bad}");
        }
    }

    #[tokio::test]
    async fn the_test_switch_allows_loopback_only() {
        assert!(TESTS.check("http://127.0.0.1:9999/hook").await.is_ok());
        assert!(TESTS.check("http://10.0.0.1/hook").await.is_err());
        assert!(TESTS.check("https://192.168.0.1/hook").await.is_err());
    }
}
