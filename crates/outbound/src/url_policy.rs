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
        // Never through a proxy: a proxy would resolve the name itself, past this rule.
        reqwest::Client::builder()
            .no_proxy()
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
        match url.host() {
            None => return Err(UrlRejected("must name a host".into())),
            Some(Host::Domain(domain)) if is_metadata_host(domain) => {
                return Err(UrlRejected("must point to a public internet address".into()));
            }
            Some(_) => {}
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
            if is_metadata_host(name.as_str()) {
                return Err("a cloud metadata host is never a target".into());
            }
            let found: Vec<SocketAddr> = tokio::net::lookup_host((name.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> = found.into_iter().filter(|addr| targets.allowed(addr.ip())).collect();
            if allowed.is_empty() {
                return Err("the host resolves to no public address".into());
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

/// Host names of cloud metadata services, refused by name as well as by their (link-local or
/// unique-local) addresses.
const METADATA_HOSTS: [&str; 6] = [
    "metadata",
    "metadata.google.internal",
    "metadata.goog",
    "instance-data",
    "instance-data.ec2.internal",
    "metadata.azure.internal",
];

fn is_metadata_host(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    METADATA_HOSTS.contains(&host.as_str())
}

/// A globally reachable unicast address, by the IANA special-purpose address registries (as the
/// `ip_network` crate implements them: private, shared/CGNAT, loopback, link-local, "this network",
/// documentation, benchmarking, reserved, broadcast, unique-local and more), never multicast.
/// An IPv6 address that carries an IPv4 one (IPv4-mapped `::ffff:0:0/96`, NAT64 `64:ff9b::/96`,
/// 6to4 `2002::/16`) is judged by the IPv4 address it carries; the local-use NAT64 prefix
/// `64:ff9b:1::/48` and Teredo `2001::/32` are refused outright.
pub fn is_public_address(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => !v4.is_multicast() && ip_network::Ipv4Network::new(v4, 32).is_ok_and(|net| net.is_global()),
        IpAddr::V6(v6) => {
            if let Some(v4) = embedded_ipv4(v6) {
                return is_public_address(IpAddr::V4(v4));
            }
            let [first, second, third, ..] = v6.segments();
            let nat64_local = first == 0x0064 && second == 0xff9b && third == 0x0001;
            let teredo = first == 0x2001 && second == 0x0000;
            !(nat64_local || teredo || v6.is_multicast())
                && ip_network::Ipv6Network::new(v6, 128).is_ok_and(|net| net.is_global())
        }
    }
}

fn embedded_ipv4(v6: std::net::Ipv6Addr) -> Option<std::net::Ipv4Addr> {
    let s = v6.segments();
    let from = |high: u16, low: u16| std::net::Ipv4Addr::from((u32::from(high) << 16) | u32::from(low));
    if let Some(v4) = v6.to_ipv4_mapped() {
        return Some(v4);
    }
    match s {
        // NAT64 well-known prefix: the IPv4 address in the last 32 bits.
        [0x0064, 0xff9b, 0, 0, 0, 0, high, low] => Some(from(high, low)),
        // 6to4: the IPv4 address right after the prefix.
        [0x2002, high, low, ..] => Some(from(high, low)),
        _ => None,
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
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            // Added by the security review: CGNAT, "this network", benchmarking, documentation, reserved.
            "100.127.255.254",
            "0.1.2.3",
            "198.18.0.1",
            "198.19.255.255",
            "192.0.2.1",
            "198.51.100.1",
            "203.0.113.9",
            "240.0.0.1",
            "239.255.255.250",
            "192.0.0.1",
            // IPv6 forms that carry an internal IPv4 address, or leave the network's control.
            "64:ff9b::7f00:1",
            "64:ff9b::a00:1",
            "64:ff9b:1::808:808",
            "2002:7f00:1::",
            "2002:a9fe:a9fe::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "ff02::1",
            "ff0e::1",
            "2001:db8::1",
            "fec0::1",
        ] {
            assert!(!is_public_address(ip.parse().unwrap()), "{ip}");
        }
        for ip in
            ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "64:ff9b::808:808", "2002:808:808::1", "::ffff:8.8.4.4"]
        {
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
            "https://metadata.google.internal/computeMetadata/v1/",
            "https://METADATA.google.internal./",
            "https://[::ffff:127.0.0.1]/hook",
            "https://[64:ff9b::a9fe:a9fe]/",
            "https://100.64.0.1/",
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
