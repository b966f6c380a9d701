//! Discovery's tests: ranking on a small catalogue, the query caps, the corpus of requests and
//! keywords (`tests/data/search_corpus.json`), suggestions, parameter docs and shapes, limits.

use serde::Deserialize;
use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;

use super::text::{MAX_QUERY_TERMS, query_terms};
use super::*;

fn tool(name: &str, description: &str, category: Option<&str>, tags: &[&str]) -> ToolDefinition {
    let mut def = ToolDefinition::new(name, description, json!({"type": "object"}));
    def.category = category.map(str::to_owned);
    def.tags = tags.iter().map(|t| (*t).to_owned()).collect();
    def
}

fn small() -> Vec<ToolDefinition> {
    vec![
        tool(
            "send_email",
            "Send an email message to one or more recipients.",
            Some("Email"),
            &["smtp", "mail", "notify"],
        ),
        tool(
            "list_emails",
            "List the emails in a mailbox folder, newest first.",
            Some("Email"),
            &["inbox", "mail"],
        ),
        tool(
            "reply_email",
            "Reply to an email thread; the reply is sent to the original sender.",
            Some("Email"),
            &["respond", "mail"],
        ),
        tool(
            "calculate",
            "Evaluate a mathematical expression and return the number.",
            Some("Utilities"),
            &["math", "arithmetic", "compute"],
        ),
        tool(
            "word_frequency",
            "Count how often each word occurs in a text.",
            Some("Text"),
            &["count", "words", "statistics"],
        ),
        tool(
            "add_task",
            "Add a task to the todo list.",
            Some("Tasks"),
            &["todo", "reminder", "checklist"],
        ),
    ]
}

fn names(hits: &[Ranked<'_>]) -> Vec<String> {
    hits.iter().map(|h| h.tool.name.clone()).collect()
}

fn run(query: &str, category: Option<&str>) -> Vec<String> {
    let corpus = small();
    let refs: Vec<&ToolDefinition> = corpus.iter().collect();
    names(&search(&refs, query, category))
}

fn first(query: &str) -> Option<String> {
    run(query, None).into_iter().next()
}

#[test]
fn names_rank_above_descriptions() {
    let mut email = run("email", None)[..3].to_vec();
    email.sort();
    assert_eq!(email, ["list_emails", "reply_email", "send_email"]);
    assert_eq!(first("send email").as_deref(), Some("send_email"));
    assert_eq!(first("reply").as_deref(), Some("reply_email"));
    assert_eq!(first("count words").as_deref(), Some("word_frequency"));
}

#[test]
fn any_word_may_match_and_more_words_rank_higher() {
    // One word matches: the tool is still found.
    assert_eq!(first("email math").as_deref(), Some("calculate"));
    assert!(run("email math", None).contains(&"send_email".to_owned()));
    assert_eq!(first("mail inbox").as_deref(), Some("list_emails"));
    assert_eq!(run("smtp", None), ["send_email"]);
    assert_eq!(first("utilities arithmetic").as_deref(), Some("calculate"));
    assert_eq!(run("nothing-like-this", None), Vec::<String>::new());
}

#[test]
fn sentences_inflections_prefixes_synonyms_and_typos() {
    assert_eq!(
        first("How do I write an email to someone?").as_deref(),
        Some("send_email")
    );
    assert_eq!(first("the tasks").as_deref(), Some("add_task"));
    assert_eq!(first("calc").as_deref(), Some("calculate"));
    assert_eq!(first("computing").as_deref(), Some("calculate"));
    assert_eq!(
        first("what is the frequency of words").as_deref(),
        Some("word_frequency")
    );
    assert_eq!(first("answer a thread").as_deref(), Some("reply_email"));
    assert_eq!(first("arithmatic").as_deref(), Some("calculate"), "a typo");
    assert_eq!(first("What's 17% of 2,340?").as_deref(), Some("calculate"));
    // Only stop words, which no tool is indexed under.
    assert_eq!(run("the", None), Vec::<String>::new());
}

#[test]
fn scores_are_bm25() {
    let corpus = small();
    let refs: Vec<&ToolDefinition> = corpus.iter().collect();
    let (k1, b) = (1.2, 0.75);
    // One matching document out of 6: idf = ln(1 + (6 - 1 + 0.5) / (1 + 0.5)).
    let idf = (1.0f64 + 5.5 / 1.5).ln();
    let bm25 = |tf: f64| idf * tf * (k1 + 1.0) / (tf + k1);
    // A tag (×2): a short field, not normalised by length; not in the name, so no bonus.
    let hits = search(&refs, "smtp", None);
    assert_eq!(names(&hits), ["send_email"]);
    assert!((hits[0].score - bm25(2.0)).abs() < 1e-9, "{hits:?}");
    // A word of the description (×1), normalised by the body's length (BM25F).
    let docs: Vec<Document> = corpus.iter().map(Document::of).collect();
    let avg: f64 = docs.iter().map(|d| d.terms_len()).sum::<f64>() / 6.0;
    let hits = search(&refs, "recipients", None);
    assert_eq!(names(&hits), ["send_email"]);
    let tf = 1.0 / (1.0 - b + b * docs[0].terms_len() / avg);
    assert!((hits[0].score - bm25(tf)).abs() < 1e-9, "{hits:?}");
}

#[test]
fn all_lists_everything_and_category_filters() {
    let everything = run("all", None);
    assert_eq!(
        everything,
        [
            "add_task",
            "calculate",
            "list_emails",
            "reply_email",
            "send_email",
            "word_frequency"
        ]
    );
    assert_eq!(run("*", None), everything);
    assert_eq!(run("  ", None), everything);
    assert_eq!(
        run("all", Some("email")),
        ["list_emails", "reply_email", "send_email"]
    );
    assert_eq!(run("mail", Some("Tasks")), Vec::<String>::new());
    assert_eq!(run("reply", Some("EMAIL")), ["reply_email"]);
}

#[test]
fn query_words_are_split_stemmed_and_filtered() {
    assert_eq!(
        query_terms("How many euros would I get for 250 US dollars?"),
        ["count", "euro", "250", "dollar"]
    );
    assert_eq!(query_terms("currency_convert"), ["currenc", "convert"]);
    assert_eq!(query_terms("getWeatherForecast"), ["weather", "forecast"]);
    assert_eq!(query_terms("unique id"), ["uuid", "uniqu", "id"]);
    assert_eq!(query_terms("located locations"), ["locat"]);
}

#[test]
fn a_huge_query_is_cut_and_fast_to_read() {
    // 1 MiB of distinct words: deduplication is linear and only the first 1 KiB is read.
    let mut query = String::with_capacity(1 << 20);
    let mut i = 0u64;
    while query.len() < (1 << 20) {
        query.push_str(&format!("word{i} "));
        i += 1;
    }
    let terms = query_terms(&query);
    assert_eq!(terms.len(), MAX_QUERY_TERMS);
    // A matching word beyond the first kilobyte is not searched for.
    let late = format!("{} smtp", "zzz ".repeat(400));
    assert_eq!(run(&late, None), Vec::<String>::new());
    let corpus = small();
    let refs: Vec<&ToolDefinition> = corpus.iter().collect();
    // `word0` … are a typo away from `word`: only a few typo lookups are made.
    assert_eq!(names(&search(&refs, &query, None)), ["word_frequency"]);
    // Multi-byte characters at the cut do not split.
    let wide = "é".repeat(4000);
    assert!(query_terms(&wide).len() <= 1);
}

#[derive(Deserialize)]
struct Corpus {
    tools: Vec<ToolDefinition>,
    intents: Vec<Case>,
    keywords: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    query: String,
    expect: String,
}

fn corpus() -> (Vec<ToolDefinition>, Vec<Case>, Vec<Case>) {
    let text = include_str!("../../tests/data/search_corpus.json");
    let corpus: Corpus = serde_json::from_str(text).expect("the corpus is valid JSON");
    let mut tools: Vec<ToolDefinition> =
        toolsmith_builtins::utilities::tools(&toolsmith_builtins::BuiltinEnv::default())
            .into_iter()
            .map(|t| t.definition.clone())
            .collect();
    tools.extend(corpus.tools);
    (tools, corpus.intents, corpus.keywords)
}

/// (top-1 hits, top-3 hits, the misses with what came first).
fn rates(tools: &[ToolDefinition], cases: &[Case]) -> (usize, usize, Vec<String>) {
    let docs: Vec<Document> = tools.iter().map(Document::of).collect();
    let index = SearchIndex::build(&docs);
    let (mut top1, mut top3, mut misses) = (0, 0, Vec::new());
    for case in cases {
        let hits: Vec<&str> = index
            .search(&case.query, |_| true)
            .into_iter()
            .take(3)
            .map(|(i, _)| tools[i].name.as_str())
            .collect();
        assert!(
            tools.iter().any(|t| t.name == case.expect),
            "the corpus names a tool it does not have: {}",
            case.expect
        );
        if hits.first() == Some(&case.expect.as_str()) {
            top1 += 1;
        } else {
            misses.push(format!(
                "{:?} → {hits:?} (want {})",
                case.query, case.expect
            ));
        }
        if hits.contains(&case.expect.as_str()) {
            top3 += 1;
        }
    }
    (top1, top3, misses)
}

#[test]
fn the_corpus_of_requests_finds_the_right_tool() {
    let (tools, intents, _) = corpus();
    assert!(tools.len() >= 45 && intents.len() >= 40);
    let (top1, top3, misses) = rates(&tools, &intents);
    let n = intents.len();
    eprintln!(
        "intents: first {top1}/{n}, top 3 {top3}/{n}; misses:\n{}",
        misses.join("\n")
    );
    assert!(
        top3 * 10 >= n * 9,
        "top 3 for {top3} of {n} (< 90 %):\n{}",
        misses.join("\n")
    );
    assert!(
        top1 * 10 >= n * 8,
        "first for {top1} of {n} (< 80 %):\n{}",
        misses.join("\n")
    );
}

#[test]
fn the_corpus_of_keywords_finds_the_right_tool_first() {
    let (tools, _, keywords) = corpus();
    assert!(keywords.len() >= 30);
    let (top1, _, misses) = rates(&tools, &keywords);
    let n = keywords.len();
    eprintln!("keywords: first {top1}/{n}; misses:\n{}", misses.join("\n"));
    assert!(
        top1 * 10 >= n * 9,
        "first for {top1} of {n} (< 90 %):\n{}",
        misses.join("\n")
    );
}

/// Every request and keyword meant for a built-in utility finds it among the first three: the
/// utilities' tags are what `search_tools` matches people's words against.
#[test]
fn every_utility_request_finds_its_tool_in_the_top_3() {
    let (tools, intents, keywords) = corpus();
    let utilities: Vec<String> =
        toolsmith_builtins::utilities::tools(&toolsmith_builtins::BuiltinEnv::default())
            .iter()
            .map(|t| t.name().to_owned())
            .collect();
    let cases: Vec<Case> = intents
        .into_iter()
        .chain(keywords)
        .filter(|c| utilities.contains(&c.expect))
        .collect();
    let covered: std::collections::BTreeSet<&str> =
        cases.iter().map(|c| c.expect.as_str()).collect();
    assert_eq!(
        covered.len(),
        utilities.len(),
        "a case for every utility: {covered:?}"
    );
    assert!(cases.len() >= 40, "{} cases", cases.len());
    let (_, top3, misses) = rates(&tools, &cases);
    assert_eq!(
        top3,
        cases.len(),
        "not in the top 3:\n{}",
        misses.join("\n")
    );
}

/// The workspace (file, PDF, git), web and memory tools among every other built-in and the
/// corpus's tools: what a person asks for finds the tool in the top 3 (either name of a pair
/// the two seeds named differently).
#[test]
fn every_workspace_and_web_tool_request_finds_its_tool_in_the_top_3() {
    let (mut tools, _, _) = corpus();
    let env = toolsmith_builtins::BuiltinEnv::default();
    tools.extend(
        toolsmith_builtins::files::tools(&env)
            .into_iter()
            .chain(toolsmith_builtins::web::tools(&env))
            .chain(toolsmith_builtins::pdf::tools(&env))
            .chain(toolsmith_builtins::git::tools(&env))
            .chain(toolsmith_builtins::memory::tools(&env))
            .chain(toolsmith_builtins::exec::tools(&env))
            .map(|t| t.definition.clone()),
    );
    let cases: &[(&str, &[&str])] = &[
        ("run python", &["execute_python"]),
        ("run this python script", &["execute_python"]),
        (
            "execute python code to compute the average",
            &["execute_python"],
        ),
        (
            "execute a shell command",
            &["execute_shell", "sandbox_exec"],
        ),
        (
            "run ls -la in a terminal",
            &["execute_shell", "sandbox_exec"],
        ),
        ("run a bash script", &["execute_shell", "sandbox_exec"]),
        (
            "run javascript code",
            &["execute_javascript", "sandbox_run_js"],
        ),
        (
            "evaluate a js snippet",
            &["execute_javascript", "sandbox_run_js"],
        ),
        (
            "compile this C program and show the errors",
            &["compile_code"],
        ),
        ("check my java code for syntax errors", &["compile_code"]),
        (
            "install the requests package with pip",
            &["package_manager"],
        ),
        ("npm install lodash", &["package_manager"]),
        (
            "start a persistent sandbox session",
            &["sandbox_initialize"],
        ),
        ("stop the sandbox session", &["sandbox_stop"]),
        (
            "fetch this web page and give me its text",
            &["fetch_web_page", "web_fetch"],
        ),
        (
            "read the article at https://example.org/post",
            &["fetch_web_page", "web_fetch"],
        ),
        (
            "search the web for rust async tutorials",
            &["search_web", "web_search"],
        ),
        (
            "download the file at this url into my workspace",
            &["download_file"],
        ),
        (
            "send a POST request with a JSON body to an API",
            &["http_request", "json_api"],
        ),
        (
            "call a JSON API and return the response",
            &["json_api", "http_request"],
        ),
        ("read the contents of notes.txt", &["read_file"]),
        ("show me lines 10 to 20 of main.py", &["read_file"]),
        ("save this text to a file called report.md", &["write_file"]),
        ("replace foo with bar in config.yaml", &["edit_file"]),
        (
            "what files are in the docs folder",
            &["list_directory", "list_files"],
        ),
        (
            "list everything in my workspace",
            &["list_directory", "list_files"],
        ),
        (
            "find files containing the word TODO",
            &["search_files", "search"],
        ),
        (
            "search file contents with a regex",
            &["search_files", "search"],
        ),
        ("find all .rs files matching a glob pattern", &["glob"]),
        (
            "how big is data.csv and when was it modified",
            &["file_info"],
        ),
        ("delete the file old.log", &["delete_file"]),
        ("make a copy of report.md named backup.md", &["copy_file"]),
        ("rename draft.txt to final.txt", &["move_file"]),
        ("create a new folder called images", &["create_folder"]),
        ("read a pdf", &["read_pdf"]),
        ("extract the text from invoice.pdf", &["read_pdf"]),
        ("make a pdf from markdown", &["create_pdf"]),
        ("export this report as a PDF document", &["create_pdf"]),
        ("how many pages does the pdf have", &["pdf_info"]),
        ("who is the author of this PDF", &["pdf_info"]),
        ("commit my changes", &["git_commit"]),
        ("show git history", &["git_log"]),
        ("what files have I changed in the repo", &["git_status"]),
        ("show the diff of my uncommitted changes", &["git_diff"]),
        ("stage main.rs for the next commit", &["git_add"]),
        ("create a new branch called feature", &["git_branch"]),
        ("switch to the develop branch", &["git_checkout"]),
        ("list the branches of the repository", &["git_branch"]),
        ("remember that my daughter's name is Mia", &["remember"]),
        ("what do you know about me", &["recall", "memory_search"]),
        (
            "do you remember what I told you about my allergies",
            &["recall", "memory_search"],
        ),
        ("forget what I told you about my old address", &["forget"]),
        ("mark that memory as more important", &["boost_memory"]),
        ("how many memories have you stored", &["memory_stats"]),
        ("show me all the memories you saved", &["list_memories"]),
        (
            "store several facts about me in memory at once",
            &["batch_remember"],
        ),
    ];
    let misses = top3_misses(&tools, cases);
    assert!(
        misses.is_empty(),
        "not in the top 3:\n{}",
        misses.join("\n")
    );
}

/// Requests a person makes of the agent's own data (memory, tasks, notes, bookmarks, calendar,
/// contacts): the right tool in the top 3, among every built-in and the corpus's tools (the
/// corpus's stand-ins for tools that are now built-ins left out, so each name is there once).
#[test]
fn every_personal_data_request_finds_its_tool_in_the_top_3() {
    let tools = builtins_and_corpus();
    let cases: &[(&str, &[&str])] = &[
        ("remind me to call the dentist tomorrow", &["add_task"]),
        ("add buy milk to my todo list", &["add_task"]),
        ("add a to-do: renew my passport before June", &["add_task"]),
        ("what's on my to-do list", &["list_tasks"]),
        ("which tasks are overdue", &["list_tasks"]),
        ("mark the laundry task as done", &["complete_task"]),
        (
            "change the priority of that task to urgent",
            &["update_task"],
        ),
        ("delete the task about the car", &["delete_task"]),
        ("add these five tasks at once", &["batch_add_tasks"]),
        ("take a note of this meeting", &["add_note"]),
        ("write down this idea for later", &["add_note"]),
        ("what did I note about the project", &["list_notes"]),
        ("find my notes about sourdough", &["list_notes"]),
        ("edit the note and pin it", &["update_note"]),
        ("delete that note", &["delete_note"]),
        ("save this link", &["add_bookmark"]),
        ("bookmark this page for later", &["add_bookmark"]),
        ("show my saved bookmarks about rust", &["list_bookmarks"]),
        ("remove that bookmark", &["delete_bookmark"]),
        (
            "add to my calendar: lunch with Sam on Friday at noon",
            &["add_calendar_event"],
        ),
        (
            "schedule a meeting with the team next Tuesday",
            &["add_calendar_event"],
        ),
        ("what's on my calendar next week", &["list_calendar_events"]),
        (
            "do I have any appointments tomorrow",
            &["list_calendar_events"],
        ),
        ("cancel the dentist appointment", &["delete_calendar_event"]),
        ("save Ada's phone number as a new contact", &["add_contact"]),
        ("what is Tom's email address", &["list_contacts"]),
        (
            "look up the contact details of my plumber",
            &["list_contacts"],
        ),
        (
            "update Grace's job title in my contacts",
            &["update_contact"],
        ),
        (
            "delete the contact for my old landlord",
            &["delete_contact"],
        ),
        ("remember that I prefer window seats", &["remember"]),
        (
            "create a table to track my workouts",
            &["create_custom_table"],
        ),
        (
            "make a database of the books I read",
            &["create_custom_table"],
        ),
        ("what custom tables do I have", &["list_custom_tables"]),
        (
            "what columns does my books table have",
            &["describe_custom_table"],
        ),
        ("add a row to my reading list table", &["add_custom_record"]),
        (
            "insert these twenty rows into my workouts table",
            &["batch_add_custom_records"],
        ),
        (
            "show the records of my movies table sorted by rating",
            &["list_custom_records"],
        ),
        (
            "search my recipes table for pasta",
            &["search_custom_records"],
        ),
        (
            "get one record of my table by its id",
            &["get_custom_record"],
        ),
        (
            "change the rating in that row of my movies table",
            &["update_custom_record"],
        ),
        (
            "delete that row from my movies table",
            &["delete_custom_record"],
        ),
        ("drop the workouts table", &["delete_custom_table"]),
        ("track this expense: 12 euros for lunch", &["add_expense"]),
        ("I spent $40 on groceries today", &["add_expense"]),
        (
            "how much did I spend on food this month",
            &["expense_summary"],
        ),
        ("show my expenses over 100 dollars", &["query_expenses"]),
        ("export my expenses to a spreadsheet", &["export_expenses"]),
        ("scan this receipt", &["parse_receipt"]),
        ("delete that expense", &["delete_expense"]),
        ("I want to learn Spanish this year", &["create_goal"]),
        ("set a goal to run a marathon by October", &["create_goal"]),
        ("break this goal into steps", &["decompose_goal"]),
        ("what should I work on next", &["get_next_actions"]),
        ("show my active goals", &["list_goals"]),
        ("I finished the first step of my goal", &["complete_step"]),
        ("pause my goal of writing a book", &["update_goal"]),
        ("how am I doing on my goals overall", &["goal_stats"]),
        (
            "show the details and steps of that goal",
            &["get_goal_details"],
        ),
    ];
    assert_all_in_top3(&tools, cases);
}

/// Requests to automate: the scheduler's tools in the top 3, among every built-in (the
/// personal data families too: "remind me" and "schedule a meeting" stay theirs) and the
/// corpus's tools.
#[test]
fn every_scheduler_request_finds_its_tool_in_the_top_3() {
    let tools = builtins_and_corpus();
    let cases: &[(&str, &[&str])] = &[
        (
            "run the weather report tool every morning at 7",
            &["create_scheduled_task", "cron"],
        ),
        (
            "schedule the sales report to run every Monday at 9",
            &["create_scheduled_task", "cron"],
        ),
        ("set up a cron job", &["cron", "create_scheduled_task"]),
        ("automate this daily", &["create_scheduled_task", "cron"]),
        ("which jobs are scheduled", &["list_scheduled_tasks"]),
        (
            "pause the recurring job until next week",
            &["update_scheduled_task"],
        ),
        ("cancel the scheduled job", &["delete_scheduled_task"]),
        (
            "did my scheduled task run last night",
            &["get_task_history"],
        ),
        ("run that scheduled job now", &["trigger_task"]),
    ];
    assert_all_in_top3(&tools, cases);
}

/// Every built-in, and the corpus's tools but its stand-ins for tools that are now built-ins
/// (so each name is there once).
fn builtins_and_corpus() -> Vec<ToolDefinition> {
    let (corpus, _, _) = corpus();
    let builtins: Vec<ToolDefinition> =
        toolsmith_builtins::tools(&toolsmith_builtins::BuiltinEnv::default())
            .into_iter()
            .map(|t| t.definition.clone())
            .collect();
    let mut tools: Vec<ToolDefinition> = corpus
        .into_iter()
        .filter(|t| !builtins.iter().any(|b| b.name == t.name))
        .collect();
    tools.extend(builtins);
    tools
}

/// Fails with every request of `cases` whose tool is not in the top 3 of `tools`.
fn assert_all_in_top3(tools: &[ToolDefinition], cases: &[(&str, &[&str])]) {
    let misses = top3_misses(tools, cases);
    assert!(
        misses.is_empty(),
        "{} of {} not in the top 3:\n{}",
        misses.len(),
        cases.len(),
        misses.join("\n")
    );
}

/// The requests of `cases` whose tool (any of the names given) is not in the top 3 of `tools`.
fn top3_misses(tools: &[ToolDefinition], cases: &[(&str, &[&str])]) -> Vec<String> {
    let docs: Vec<Document> = tools.iter().map(Document::of).collect();
    let index = SearchIndex::build(&docs);
    cases
        .iter()
        .filter_map(|(query, want)| {
            let top3: Vec<&str> = index
                .search(query, |_| true)
                .into_iter()
                .take(3)
                .map(|(i, _)| tools[i].name.as_str())
                .collect();
            (!top3.iter().any(|hit| want.contains(hit)))
                .then(|| format!("{query:?} → {top3:?} (want one of {want:?})"))
        })
        .collect()
}

#[test]
fn suggestions_by_spelling_and_by_meaning() {
    let (tools, _, _) = corpus();
    let refs: Vec<&ToolDefinition> = tools.iter().collect();
    assert_eq!(closest_names("calculater", &refs)[0], "calculate");
    assert_eq!(closest_names("get_wether", &refs)[0], "get_weather");
    assert_eq!(closest_names("uuid", &refs)[0], "generate_uuid");
    assert!(closest_names("convert_money", &refs).contains(&"currency_convert".to_owned()));
    assert!(closest_names("*", &refs).is_empty());
    assert!(closest_names("", &refs).is_empty());
    assert!(closest_names(&"x".repeat(100_000), &refs).len() <= suggest::MAX_SUGGESTIONS);
}

#[test]
fn limits_inject_the_default() {
    let args = json!({"folder": "inbox"});
    let out = apply_tool_limits("list_emails", &args);
    assert_eq!(out, json!({"folder": "inbox", "limit": 20}));
    assert_eq!(args, json!({"folder": "inbox"}), "the input is not mutated");
    assert_eq!(
        apply_tool_limits("search_web", &json!({"query": "x", "maxResults": null})),
        json!({"query": "x", "maxResults": 10})
    );
}

#[test]
fn limits_cap_at_the_max_and_keep_smaller_values() {
    let args = json!({"limit": 500});
    assert_eq!(apply_tool_limits("list_tasks", &args), json!({"limit": 50}));
    assert_eq!(args, json!({"limit": 500}), "the input is not mutated");
    assert_eq!(
        apply_tool_limits("list_tasks", &json!({"limit": 7})),
        json!({"limit": 7})
    );
    assert_eq!(
        apply_tool_limits("semantic_search", &json!({"topK": 50.5})),
        json!({"topK": 50})
    );
    // Non-numbers are left for schema validation.
    assert_eq!(
        apply_tool_limits("list_tasks", &json!({"limit": "many"})),
        json!({"limit": "many"})
    );
}

#[test]
fn limits_leave_other_tools_alone() {
    let args = json!({"limit": 100000});
    assert_eq!(apply_tool_limits("calculate", &args), args);
    assert_eq!(apply_tool_limits("list_tasks", &json!([1])), json!([1]));
    assert_eq!(TOOL_LIMITS.len(), 19);
    assert_eq!(
        tool_limit("search_files"),
        Some(&ToolLimit {
            tool: "search_files",
            param: "maxResults",
            max: 100,
            default: 50
        })
    );
}

fn sample_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "limit": {"type": "integer", "description": "How many.", "minimum": 1, "default": 10},
            "text": {"type": "string", "description": "The text."},
            "mode": {"enum": ["fast", "slow"]},
            "tags": {"type": "array", "items": {"type": "string"}}
        },
        "required": ["text"]
    })
}

#[test]
fn parameter_docs_read_well() {
    assert_eq!(
        parameter_docs(&sample_schema()),
        "- text (string, required): The text.\n\
         - limit (integer, optional): How many. Default: 10. (min 1).\n\
         - mode (enum, optional) One of: \"fast\", \"slow\".\n\
         - tags (array of string, optional)"
    );
    assert_eq!(
        parameter_docs(&json!({"type": "object"})),
        "This tool takes no parameters."
    );
}

#[test]
fn expected_shape_is_one_line() {
    assert_eq!(
        expected_shape(&sample_schema()),
        r#"{"text": string, "limit"?: integer, "mode"?: "fast"|"slow", "tags"?: array of string}"#
    );
    assert_eq!(expected_shape(&json!({"type": "object"})), "{}");
    let wide: serde_json::Map<String, Value> = (0..200)
        .map(|i| (format!("field_{i}"), json!({"type": "string"})))
        .collect();
    let shape = expected_shape(&json!({"type": "object", "properties": wide}));
    assert!(
        shape.chars().count() < 700 && shape.ends_with("…}"),
        "{shape}"
    );
}

/// Issue 35: the summary cut enums after 8 values, so a model never saw the ninth.
#[test]
fn expected_shape_lists_every_value_of_an_enum() {
    let units: Vec<String> = (1..=12).map(|i| format!("unit_{i}")).collect();
    let shape = expected_shape(&json!({
        "type": "object",
        "properties": {"unit": {"type": "string", "enum": units}},
        "required": ["unit"]
    }));
    assert!(
        shape.contains(r#""unit_9"|"unit_10"|"unit_11"|"unit_12"}"#),
        "{shape}"
    );
    assert!(!shape.contains('…'), "{shape}");
    let many: Vec<String> = (1..=100).map(|i| format!("v{i}")).collect();
    let shape = expected_shape(&json!({
        "type": "object",
        "properties": {"v": {"enum": many}}
    }));
    assert!(
        shape.contains("(100 values: get_tool_help lists them all)"),
        "{shape}"
    );
}
