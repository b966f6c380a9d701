//! Unit tests of the address classes: every refused range at its edges, and public neighbours.

use std::net::IpAddr;

use super::*;

fn class(ip: &str) -> Option<AddressClass> {
    classify(ip.parse::<IpAddr>().unwrap())
}

#[test]
fn ipv4_ranges_are_refused_at_their_edges() {
    let cases = [
        ("0.0.0.0", AddressClass::Unspecified),
        ("0.255.255.255", AddressClass::Unspecified),
        ("10.0.0.0", AddressClass::Private),
        ("10.255.255.255", AddressClass::Private),
        ("100.64.0.0", AddressClass::SharedCgnat),
        ("100.127.255.255", AddressClass::SharedCgnat),
        ("127.0.0.1", AddressClass::Loopback),
        ("127.255.255.254", AddressClass::Loopback),
        ("169.254.169.254", AddressClass::LinkLocal),
        ("172.16.0.0", AddressClass::Private),
        ("172.31.255.255", AddressClass::Private),
        ("192.0.0.8", AddressClass::Reserved),
        ("192.0.2.1", AddressClass::Documentation),
        ("192.88.99.1", AddressClass::Reserved),
        ("192.168.0.1", AddressClass::Private),
        ("198.18.0.1", AddressClass::Reserved),
        ("198.19.255.255", AddressClass::Reserved),
        ("198.51.100.1", AddressClass::Documentation),
        ("203.0.113.1", AddressClass::Documentation),
        ("224.0.0.1", AddressClass::Multicast),
        ("239.255.255.250", AddressClass::Multicast),
        ("240.0.0.1", AddressClass::Reserved),
        ("255.255.255.255", AddressClass::Broadcast),
    ];
    for (ip, expected) in cases {
        assert_eq!(class(ip), Some(expected), "{ip}");
    }
}

#[test]
fn public_ipv4_neighbours_pass() {
    for ip in [
        "1.1.1.1",
        "9.255.255.255",
        "11.0.0.0",
        "100.63.255.255",
        "100.128.0.0",
        "126.255.255.255",
        "128.0.0.0",
        "169.253.255.255",
        "172.15.255.255",
        "172.32.0.0",
        "192.167.255.255",
        "192.169.0.0",
        "198.17.255.255",
        "198.20.0.0",
        "223.255.255.255",
        "93.184.216.34",
    ] {
        assert_eq!(class(ip), None, "{ip}");
    }
}

#[test]
fn ipv6_ranges_are_refused() {
    let cases = [
        ("::", AddressClass::Unspecified),
        ("::1", AddressClass::Loopback),
        ("::ffff:127.0.0.1", AddressClass::Loopback),
        ("::ffff:10.1.2.3", AddressClass::Private),
        ("::ffff:169.254.169.254", AddressClass::LinkLocal),
        ("::127.0.0.1", AddressClass::Loopback),
        ("::8.8.8.8", AddressClass::Reserved),
        ("64:ff9b::127.0.0.1", AddressClass::Loopback),
        ("64:ff9b::a9fe:a9fe", AddressClass::LinkLocal),
        ("64:ff9b:1::1", AddressClass::Reserved),
        ("2002:7f00:1::", AddressClass::Loopback),
        ("2002:c0a8:101::1", AddressClass::Private),
        ("fc00::1", AddressClass::Private),
        ("fdff:ffff::1", AddressClass::Private),
        ("fe80::1", AddressClass::LinkLocal),
        ("febf::1", AddressClass::LinkLocal),
        ("fec0::1", AddressClass::Private),
        ("ff02::1", AddressClass::Multicast),
        ("ff0e::1", AddressClass::Multicast),
        ("2001:db8::1", AddressClass::Documentation),
        ("2001::1", AddressClass::Reserved),
        ("100::1", AddressClass::Reserved),
        ("4000::1", AddressClass::Reserved),
    ];
    for (ip, expected) in cases {
        assert_eq!(class(ip), Some(expected), "{ip}");
    }
}

#[test]
fn public_ipv6_and_embedded_public_ipv4_pass() {
    for ip in [
        "2606:4700:4700::1111",
        "2a00:1450:4001:80b::200e",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
        "2002:808:808::1",
    ] {
        assert_eq!(class(ip), None, "{ip}");
    }
}
