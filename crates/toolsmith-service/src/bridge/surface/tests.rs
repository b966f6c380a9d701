use super::{BridgedNews, BridgedWatch, Kind, Missed, SurfaceChange, SurfaceChanges};

/// Reads what the watcher has already received; `None` when nothing is to be told of it.
async fn ready(watch: &mut BridgedWatch) -> Option<BridgedNews> {
    tokio::select! {
        biased;
        news = watch.next() => Some(news),
        () = std::future::ready(()) => None,
    }
}

fn updated(server: &str, uri: &str, count: u64) -> BridgedNews {
    BridgedNews::Change(SurfaceChange::Updated {
        server: server.to_owned(),
        uri: uri.to_owned(),
        count,
    })
}

#[tokio::test]
async fn a_watcher_left_behind_is_told_only_the_servers_whose_counts_moved() {
    let changes = SurfaceChanges::default();
    changes.send("a", Kind::Prompts);
    let mut watch = changes.watch();
    // What came before the watch is not told; what comes after is, in order.
    changes.send("a", Kind::Updated("notes://today".to_owned()));
    assert_eq!(watch.next().await, updated("a", "notes://today", 1));

    // Another server's burst, more than the channel holds: not "anything changed", but that
    // server's updates (and nothing of "a").
    for _ in 0..300 {
        changes.send("z", Kind::Updated("notes://flood".to_owned()));
    }
    changes.send("a", Kind::Resources);
    assert_eq!(
        watch.next().await,
        BridgedNews::Missed(vec![
            Missed {
                server: "a".to_owned(),
                prompts: false,
                resources: true,
                updated: false,
            },
            Missed {
                server: "z".to_owned(),
                prompts: false,
                resources: false,
                updated: true,
            },
        ])
    );
    // The changes the resync covered, still in the channel, are not told again; the next one is.
    assert_eq!(ready(&mut watch).await, None);
    changes.send("a", Kind::Updated("notes://today".to_owned()));
    assert_eq!(watch.next().await, updated("a", "notes://today", 2));
}

#[tokio::test]
async fn a_watcher_started_after_a_burst_missed_nothing_of_it() {
    let changes = SurfaceChanges::default();
    let mut behind = changes.watch();
    for _ in 0..300 {
        changes.send("z", Kind::Updated("notes://flood".to_owned()));
    }
    // A watcher started after the burst missed nothing: its first news is the next change.
    let mut later = changes.watch();
    assert!(matches!(behind.next().await, BridgedNews::Missed(_)));
    assert_eq!(ready(&mut behind).await, None);
    assert_eq!(ready(&mut later).await, None);
    changes.send("a", Kind::Prompts);
    let prompts = BridgedNews::Change(SurfaceChange::Prompts {
        server: "a".to_owned(),
        count: 1,
    });
    assert_eq!(later.next().await, prompts);
    assert_eq!(behind.next().await, prompts);
}
