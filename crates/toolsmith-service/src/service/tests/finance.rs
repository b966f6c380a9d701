//! Finance (003 §18) end to end through the service's pipeline, on both backends: expenses
//! added, queried, summed per currency without float drift, exported as formula-safe CSV and
//! JSON, deleted; bad arguments naming the fix; the max limits; `parse_receipt` without a
//! vision service; and isolation between users and agents.

use serde_json::{Value, json};

use super::memory::call;
use super::personal::{Kind, field, ok, on_both_backends, open, refused};
use super::*;

on_both_backends!(
    expenses_add_query_summarise_export_delete,
    finance_bad_arguments_limits_and_isolation,
);

async fn expenses_add_query_summarise_export_delete(kind: Kind) {
    let Some(env) = open(kind, ToolServiceSettings::default()).await else {
        return;
    };
    let s = &env.service;
    let lunch = ok(s, "add_expense", json!({"amount": 12.5, "category": "food", "description": "Lunch at Luigi's", "date": "2026-05-03", "tags": ["Work"]})).await["expense"].clone();
    assert_eq!(lunch["amount"], "12.50");
    assert_eq!(lunch["currency"], "USD");
    assert_eq!(lunch["tags"], json!(["work"]));
    assert!(lunch["id"].as_str().unwrap().starts_with("exp_"));
    let coffees: Vec<Value> = (0..30)
        .map(|_| json!({"amount": 0.1, "category": "food", "description": "Coffee", "date": "2026-05-04"}))
        .collect();
    assert_eq!(
        ok(s, "batch_add_expenses", json!({"expenses": coffees})).await["added"],
        30
    );
    let batch = ok(s, "batch_add_expenses", json!({"expenses": [
        {"amount": 20, "currency": "eur", "category": "transport", "description": "Train to Lyon", "date": "2026-05-10"},
        {"amount": 1200, "currency": "JPY", "category": "shopping", "description": "Notebook", "date": "2026-04-30"},
        {"amount": "1.250", "currency": "BHD", "category": "food", "description": "Tea", "date": "2026-05-11"},
        {"amount": 0.2, "category": "other", "description": "=HYPERLINK(\"http://evil.example\",\"x\")", "date": "2026-05-12", "notes": "@SUM(1+1)"}
    ]}))
    .await;
    assert_eq!(
        field(&batch, "expenses", "amount"),
        ["20.00", "1200", "1.250", "0.20"]
    );

    for (args, count) in [
        (json!({"category": "food"}), 32),
        (json!({"currency": "eur"}), 1),
        (json!({"minAmount": 10}), 3),
        (json!({"minAmount": 1.25, "maxAmount": 12.5}), 2),
        (
            json!({"startDate": "2026-05-01", "endDate": "2026-05-03"}),
            1,
        ),
        (json!({"search": "luigi"}), 1),
        (json!({"tags": ["work"]}), 1),
    ] {
        let found = ok(s, "query_expenses", args.clone()).await;
        assert_eq!(found["count"], count, "{args}: {found}");
    }
    let by_amount = ok(s, "query_expenses", json!({"sortBy": "amount", "limit": 3})).await;
    assert_eq!(
        field(&by_amount, "expenses", "description"),
        ["Notebook", "Train to Lyon", "Lunch at Luigi's"]
    );

    // "How much did I spend on food this month": 12.50 + 30 × 0.10, exactly.
    let food = ok(s, "expense_summary", json!({"category": "food", "currency": "USD", "startDate": "2026-05-01", "endDate": "2026-05-31"})).await;
    assert_eq!(
        food["currencies"],
        json!([{"currency": "USD", "total": "15.50", "count": 31,
        "byCategory": [{"category": "food", "total": "15.50", "count": 31}],
        "byPeriod": [{"period": "2026-05", "total": "15.50", "count": 31}]}])
    );
    // Every currency apart; never one total across them.
    let all = ok(s, "expense_summary", json!({"groupBy": "week"})).await;
    let totals: Vec<(&str, &str)> = all["currencies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["currency"].as_str().unwrap(),
                c["total"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        totals,
        [
            ("BHD", "1.250"),
            ("EUR", "20.00"),
            ("JPY", "1200"),
            ("USD", "15.70")
        ]
    );
    assert!(
        all["message"]
            .as_str()
            .unwrap()
            .contains("never added together")
    );
    let usd = &all["currencies"][3];
    assert_eq!(
        usd["byCategory"][0],
        json!({"category": "food", "total": "15.50", "count": 31})
    );
    assert_eq!(usd["byPeriod"][0]["period"], "2026-W18");

    // CSV: RFC 4180 quoting, formula cells neutralised.
    let csv = ok(
        s,
        "export_expenses",
        json!({"format": "csv", "startDate": "2026-05-12"}),
    )
    .await;
    assert_eq!(csv["count"], 1);
    let text = csv["csv"].as_str().unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("id,date,amount,currency,category,description,paymentMethod,tags,notes,createdAt")
    );
    let row = lines.next().unwrap();
    assert!(
        row.contains(",\"'=HYPERLINK(\"\"http://evil.example\"\",\"\"x\"\")\","),
        "{row}"
    );
    assert!(row.contains(",'@SUM(1+1),"), "{row}");
    assert!(row.contains(",2026-05-12,0.20,USD,other,"), "{row}");
    let json_export = ok(
        s,
        "export_expenses",
        json!({"format": "json", "category": "shopping"}),
    )
    .await;
    assert_eq!(json_export["expenses"][0]["amount"], "1200");
    assert_eq!(json_export["truncated"], false);

    let id = lunch["id"].as_str().unwrap();
    ok(s, "delete_expense", json!({"expenseId": id})).await;
    let res = call(s, "alice", None, "delete_expense", json!({"expenseId": id})).await;
    refused(&res, "find ids with query_expenses");
    assert_eq!(ok(s, "query_expenses", json!({})).await["total"], 34);
}

async fn finance_bad_arguments_limits_and_isolation(kind: Kind) {
    let Some(env) = open(kind, ToolServiceSettings::default()).await else {
        return;
    };
    let s = &env.service;
    let secret = ok(
        s,
        "add_expense",
        json!({"amount": 99, "category": "health", "description": "zebra clinic"}),
    )
    .await["expense"]["id"]
        .clone();
    let good = json!({"amount": 5, "category": "food", "description": "x"});
    let with = |key: &str, value: Value| {
        let mut args = good.clone();
        args[key] = value;
        args
    };
    for (tool, args, words) in [
        (
            "add_expense",
            with("amount", json!(-5)),
            "'amount' must be a positive number",
        ),
        (
            "add_expense",
            with("amount", json!(0)),
            "'amount' must be a positive number",
        ),
        (
            "add_expense",
            with("amount", json!(12.345)),
            "round it to 2 decimals",
        ),
        (
            "add_expense",
            json!({"amount": 1.5, "currency": "JPY", "category": "food", "description": "x"}),
            "round it to 0 decimals",
        ),
        ("add_expense", with("amount", json!(1e15)), "amount"),
        (
            "add_expense",
            with("currency", json!("1$a")),
            "three-letter ISO 4217",
        ),
        (
            "add_expense",
            with("category", json!("groceries")),
            "category",
        ),
        ("add_expense", with("date", json!("2026-13-01")), "date"),
        (
            "add_expense",
            json!({"amount": 5, "category": "food"}),
            "description",
        ),
        (
            "query_expenses",
            json!({"minAmount": 10, "maxAmount": 5}),
            "'minAmount' must not be more than 'maxAmount'",
        ),
        ("query_expenses", json!({"startDate": "soon"}), "startDate"),
        ("export_expenses", json!({"format": "xlsx"}), "format"),
        ("expense_summary", json!({"groupBy": "decade"}), "groupBy"),
        (
            "delete_expense",
            json!({"expenseId": "exp_0"}),
            "find ids with query_expenses",
        ),
        (
            "batch_add_expenses",
            json!({"expenses": [good.clone(), {"amount": 1}]}),
            "description",
        ),
        (
            "parse_receipt",
            json!({"image": "aGVsbG8gd29ybGQ="}),
            "PNG, JPEG, GIF or WebP",
        ),
    ] {
        let res = call(s, "alice", None, tool, args.clone()).await;
        refused(&res, words);
    }
    assert_eq!(
        ok(s, "query_expenses", json!({})).await["total"],
        1,
        "nothing half-added"
    );
    // Without a vision service, parse_receipt says which Config Center entry to set.
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    let res = call(s, "alice", None, "parse_receipt", json!({"image": png})).await;
    assert!(res.is_error, "{res:?}");
    let text = res.content.to_string();
    assert!(
        text.contains("Config Center service 'vision'") && text.contains("base_url"),
        "{text}"
    );

    // The tool max limits: query_expenses 50 by default, 100 at most.
    for chunk in 0..3 {
        let items: Vec<Value> = (0..40).map(|i| json!({"amount": i + 1, "category": "other", "description": format!("item {chunk}-{i}")})).collect();
        ok(s, "batch_add_expenses", json!({"expenses": items})).await;
    }
    assert_eq!(ok(s, "query_expenses", json!({})).await["count"], 50);
    assert_eq!(
        ok(s, "query_expenses", json!({"limit": 1000})).await["count"],
        100
    );

    // Nobody else sees Alice's expenses, in any tool.
    for (user, agent) in [
        ("bob", None),
        ("bob", Some("agent-1")),
        ("alice", Some("agent-2")),
    ] {
        for args in [json!({}), json!({"search": "zebra"})] {
            let res = call(s, user, agent, "query_expenses", args).await;
            assert_eq!(res.content["total"], 0, "{user}/{agent:?}: {res:?}");
        }
        let sum = call(s, user, agent, "expense_summary", json!({})).await;
        assert_eq!(sum.content["count"], 0, "{sum:?}");
        let export = call(s, user, agent, "export_expenses", json!({"format": "csv"})).await;
        assert_eq!(export.content["count"], 0, "{export:?}");
        assert!(!export.content.to_string().contains("zebra"));
        let res = call(
            s,
            user,
            agent,
            "delete_expense",
            json!({"expenseId": secret}),
        )
        .await;
        refused(&res, "among yours");
    }
    let found = ok(s, "query_expenses", json!({"search": "zebra"})).await;
    assert_eq!(found["expenses"][0]["id"], secret);
}
