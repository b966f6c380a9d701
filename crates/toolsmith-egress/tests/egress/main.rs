//! Integration tests of the egress guard, through its public API only. Hostile addresses are
//! checked by classification and resolution (a test resolver), never connected to; requests
//! only go to servers the tests start on 127.0.0.1.

mod origin;
mod policy;
mod send;
mod ssrf;
mod support;
