//! `toolsmith timezone [NAME]`: the user's time zone for dates in words — UTC unless set, an
//! IANA name or a refusal naming the form, and a built-in run afterwards reads "tomorrow
//! 9am" as 9am there.

use crate::support::Env;

#[test]
fn the_time_zone_is_shown_set_and_used_by_the_data_tools() {
    let env = Env::new();
    let refused = env.run(&["--json", "timezone", "Kolkata"]);
    assert_ne!(refused.code, 0, "{}", refused.stdout);
    let (code, message) = refused.error_doc();
    assert_eq!(code, "validation_error", "{message}");
    assert!(message.contains("Europe/Paris"), "{message}");
    // Nothing set (the refusal made the store): UTC.
    let shown = env.run(&["timezone"]).expect(0);
    assert_eq!(shown.stdout.trim(), "UTC", "{}", shown.stderr);

    let set = env.json(&["timezone", "Asia/Kolkata"]);
    assert_eq!(set["timeZone"], "Asia/Kolkata");
    assert_eq!(env.json(&["timezone"])["timeZone"], "Asia/Kolkata");

    // Asia/Kolkata is +05:30 all year: 9am there carries that offset.
    let out = env.run(&[
        "run",
        "add_task",
        "--args",
        r#"{"title": "Call the bank", "dueDate": "tomorrow 9am"}"#,
    ]);
    let out = out.expect(0);
    assert!(
        out.stdout.contains("T09:00:00+05:30") && out.stdout.contains("(Asia/Kolkata)"),
        "{}",
        out.stdout
    );
}
