//! Unit tests of the console cap.

use super::*;

#[test]
fn keeps_messages_until_the_cap_then_cuts_and_stops() {
    let console = ConsoleBuffer::new(10);
    assert!(console.write(ConsoleLevel::Log, "hello"));
    assert!(!console.write(ConsoleLevel::Warn, "world!!"));
    assert!(!console.write(ConsoleLevel::Error, "more"));
    let (entries, truncated) = console.take();
    assert_eq!(
        entries,
        vec![
            ConsoleEntry {
                level: ConsoleLevel::Log,
                message: "hello".to_owned()
            },
            ConsoleEntry {
                level: ConsoleLevel::Warn,
                message: "world".to_owned()
            },
        ]
    );
    assert!(truncated);
}

#[test]
fn cuts_on_a_character_boundary() {
    let console = ConsoleBuffer::new(4);
    assert!(!console.write(ConsoleLevel::Log, "aé€"));
    let (entries, truncated) = console.take();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].message, "aé");
    assert!(truncated);
}

#[test]
fn exactly_full_is_not_truncated() {
    let console = ConsoleBuffer::new(3);
    assert!(console.write(ConsoleLevel::Log, "abc"));
    let (entries, truncated) = console.take();
    assert_eq!(entries.len(), 1);
    assert!(!truncated);
}

#[test]
fn levels_come_from_method_names() {
    assert_eq!(level("log"), ConsoleLevel::Log);
    assert_eq!(level("info"), ConsoleLevel::Log);
    assert_eq!(level("warn"), ConsoleLevel::Warn);
    assert_eq!(level("error"), ConsoleLevel::Error);
}
