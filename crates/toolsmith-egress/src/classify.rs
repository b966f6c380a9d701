//! Which IP addresses tools may never reach: [`classify`] sorts an address into a refused
//! [`AddressClass`], or `None` for an ordinary public address.
//!
//! IPv6 forms that carry an IPv4 address (mapped `::ffff:a.b.c.d`, compatible `::a.b.c.d`,
//! NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are judged by the IPv4 address inside. Every IPv6
//! address outside global unicast (`2000::/3`) is refused.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The kind of a refused address, as error messages name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AddressClass {
    Unspecified,
    Loopback,
    Private,
    LinkLocal,
    SharedCgnat,
    Multicast,
    Broadcast,
    Documentation,
    Reserved,
}

impl AddressClass {
    /// A stable snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            AddressClass::Unspecified => "unspecified",
            AddressClass::Loopback => "loopback",
            AddressClass::Private => "private",
            AddressClass::LinkLocal => "link_local",
            AddressClass::SharedCgnat => "shared_cgnat",
            AddressClass::Multicast => "multicast",
            AddressClass::Broadcast => "broadcast",
            AddressClass::Documentation => "documentation",
            AddressClass::Reserved => "reserved",
        }
    }
}

impl fmt::Display for AddressClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AddressClass::Unspecified => "an unspecified address",
            AddressClass::Loopback => "a loopback address",
            AddressClass::Private => "a private-network address",
            AddressClass::LinkLocal => "a link-local address (cloud metadata lives there)",
            AddressClass::SharedCgnat => "a carrier-grade NAT address",
            AddressClass::Multicast => "a multicast address",
            AddressClass::Broadcast => "a broadcast address",
            AddressClass::Documentation => "a documentation address",
            AddressClass::Reserved => "a reserved address",
        })
    }
}

/// Refused IPv4 ranges: network, prefix length, class. First match wins.
const V4_RANGES: &[([u8; 4], u32, AddressClass)] = &[
    ([255, 255, 255, 255], 32, AddressClass::Broadcast),
    ([0, 0, 0, 0], 8, AddressClass::Unspecified),
    ([10, 0, 0, 0], 8, AddressClass::Private),
    ([100, 64, 0, 0], 10, AddressClass::SharedCgnat),
    ([127, 0, 0, 0], 8, AddressClass::Loopback),
    ([169, 254, 0, 0], 16, AddressClass::LinkLocal),
    ([172, 16, 0, 0], 12, AddressClass::Private),
    ([192, 0, 0, 0], 24, AddressClass::Reserved),
    ([192, 0, 2, 0], 24, AddressClass::Documentation),
    ([192, 88, 99, 0], 24, AddressClass::Reserved),
    ([192, 168, 0, 0], 16, AddressClass::Private),
    ([198, 18, 0, 0], 15, AddressClass::Reserved),
    ([198, 51, 100, 0], 24, AddressClass::Documentation),
    ([203, 0, 113, 0], 24, AddressClass::Documentation),
    ([224, 0, 0, 0], 4, AddressClass::Multicast),
    ([240, 0, 0, 0], 4, AddressClass::Reserved),
];

/// The refused class of `ip`, or `None` when tools may reach it.
pub fn classify(ip: IpAddr) -> Option<AddressClass> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> Option<AddressClass> {
    let bits = u32::from(ip);
    V4_RANGES.iter().find_map(|&(net, len, class)| {
        let mask = u32::MAX << (32 - len);
        (bits & mask == u32::from(Ipv4Addr::from(net)) & mask).then_some(class)
    })
}

fn classify_v6(ip: Ipv6Addr) -> Option<AddressClass> {
    let bits = u128::from(ip);
    let segments = ip.segments();
    let low_v4 = Ipv4Addr::from(bits as u32);
    if ip.is_unspecified() {
        return Some(AddressClass::Unspecified);
    }
    if ip.is_loopback() {
        return Some(AddressClass::Loopback);
    }
    if let Some(v4) = ip.to_ipv4_mapped() {
        return classify_v4(v4);
    }
    if bits >> 32 == 0 {
        // IPv4-compatible (deprecated): refused even for a public IPv4 address.
        return Some(classify_v4(low_v4).unwrap_or(AddressClass::Reserved));
    }
    if bits >> 32 == 0x0064_ff9b_0000_0000_0000_0000 {
        // NAT64 well-known prefix: the IPv4 address decides.
        return classify_v4(low_v4);
    }
    if segments[0] == 0x2002 {
        // 6to4: the IPv4 address sits in bits 16..48.
        let embedded = Ipv4Addr::from((bits >> 80) as u32);
        return classify_v4(embedded);
    }
    match segments[0] {
        0xff00..=0xffff => return Some(AddressClass::Multicast),
        0xfe80..=0xfebf => return Some(AddressClass::LinkLocal),
        // fc00::/7 unique local, fec0::/10 site-local (deprecated).
        0xfc00..=0xfdff | 0xfec0..=0xfeff => return Some(AddressClass::Private),
        _ => {}
    }
    if segments[0] == 0x2001 && segments[1] == 0x0db8 {
        return Some(AddressClass::Documentation);
    }
    if segments[0] == 0x2001 && segments[1] < 0x0200 {
        // 2001::/23: IETF protocol assignments (Teredo, ORCHID, benchmarking …).
        return Some(AddressClass::Reserved);
    }
    if segments[0] & 0xe000 != 0x2000 {
        // Outside global unicast 2000::/3 (includes 100::/64 discard, 64:ff9b:1::/48).
        return Some(AddressClass::Reserved);
    }
    None
}

#[cfg(test)]
mod tests;
