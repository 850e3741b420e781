//! `hist timeline`: the page it writes, where it writes it, and the page drawn by a real
//! browser (headless Chromium) for the fixtures' feed, checked against answers got another
//! way (`hist sql` over the changes view, `hist history`, `hist show`).

use crate::common::TestEnv;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The fixtures' feed (45 snapshots of `feed/acme` from 2026-09-01 to 2026-09-15), with
/// `/contact` personal and forgotten and the stock changes compacted to one a day by gc.
fn acme() -> TestEnv {
    let env = TestEnv::init();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let feed = root.join("fixtures/docs/acme-history.ndjson");
    let w = ["--actor", "user:sam"];
    for rule in [
        &["rules", "array-key", "/items", "id"][..],
        &["rules", "set", "/items[*]/tags"],
        &["rules", "personal", "/contact"],
        &[
            "rules",
            "retention",
            "/items[*]/stock",
            "--keep",
            "3d",
            "--then",
            "daily",
        ],
    ] {
        env.run(&[rule, &w].concat()).ok();
    }
    env.run(&["import", feed.to_str().unwrap()]).ok();
    env.run(&["gc", "--actor", "job:gc", "--at", "@2026-09-20"])
        .ok();
    env.run(&[
        "forget",
        "feed/acme",
        "--actor",
        "user:dpo",
        "-m",
        "erasure request 118",
        "--at",
        "@2026-09-21",
    ])
    .ok();
    env
}

/// The rows of `hist sql QUERY --json`, each as its JSON line.
fn sql(env: &TestEnv, query: &str) -> Vec<serde_json::Value> {
    env.run(&["sql", query, "--json"])
        .ok()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The paths of the key's changes, most changed first (equal counts by path text): the
/// brief's GROUP BY query, answered by SQL.
fn most_changed(env: &TestEnv) -> Vec<(String, u64)> {
    sql(
        env,
        "SELECT path, count(*) AS n FROM changes WHERE key = 'feed/acme' \
         GROUP BY path ORDER BY n DESC, path",
    )
    .iter()
    .map(|r| {
        (
            r["path"].as_str().unwrap().to_owned(),
            r["n"].as_u64().unwrap(),
        )
    })
    .collect()
}

#[test]
fn timeline_writes_one_self_contained_page_with_a_table_of_the_transactions() {
    let env = acme();
    let out = env.run(&["timeline", "feed/acme", "-o", "acme.html"]);
    assert_eq!(out.ok(), "");
    assert!(
        out.stderr
            .starts_with("wrote the timeline of feed/acme: 45 transactions, 18 lanes, "),
        "{}",
        out.stderr
    );
    let html = std::fs::read_to_string(env.join("acme.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    // Nothing from the network: no external script, style, image or font.
    for outside in ["src=", "href=\"http", "@import", "url(http", "<link"] {
        assert!(!html.contains(outside), "the page holds {outside}");
    }
    // Without scripts: a table row per transaction that touched the key, newest first.
    let txs: Vec<u64> = sql(
        &env,
        "SELECT DISTINCT tx FROM changes WHERE key = 'feed/acme' ORDER BY tx DESC",
    )
    .iter()
    .map(|r| r["tx"].as_u64().unwrap())
    .collect();
    assert_eq!(txs.len(), 45);
    let rows: Vec<u64> = html
        .match_indices("<tr id=\"tx-")
        .map(|(at, m)| {
            let rest = &html[at + m.len()..];
            rest[..rest.find('"').unwrap()].parse().unwrap()
        })
        .collect();
    assert_eq!(rows, txs);
    assert!(html.contains("<td>price correction, ticket 1194</td>"));
    assert!(html.contains("<noscript>"));
    assert!(html.contains("Every path that changed has a lane (18)."));

    // --lanes: the page says how many more paths changed, and how many changes they had.
    let paths = most_changed(&env);
    let rest: u64 = paths[3..].iter().map(|p| p.1).sum();
    env.run(&["timeline", "feed/acme", "--lanes", "3", "-o", "three.html"])
        .ok();
    let three = std::fs::read_to_string(env.join("three.html")).unwrap();
    assert!(
        three.contains(&format!(
            "The 3 most changed paths have a lane; 15 more paths changed ({rest} changes)."
        )),
        "{three}"
    );

    // Not a terminal and no -o: the page on stdout.
    let piped = env.run(&["timeline", "feed/acme"]);
    assert!(piped.ok().starts_with("<!DOCTYPE html>"));
    assert_eq!(piped.stderr, "");
    let dash = env.run(&["timeline", "feed/acme", "-o", "-"]);
    assert!(dash.ok().starts_with("<!DOCTYPE html>"));
}

#[test]
fn timeline_json_says_where_the_page_is_and_what_it_shows() {
    let env = acme();
    let out = env.run(&[
        "timeline",
        "feed/acme",
        "--lanes",
        "4",
        "--path",
        "/items",
        "--since",
        "@2026-09-05",
        "--until",
        "@2026-09-10",
        "--json",
    ]);
    let summary: serde_json::Value = serde_json::from_str(out.ok()).unwrap();
    let file = PathBuf::from(summary["file"].as_str().unwrap());
    let html = std::fs::read_to_string(&file).unwrap();
    std::fs::remove_file(&file).unwrap();
    assert!(
        file.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("hist-timeline-")
    );
    assert_eq!(summary["bytes"], html.len());
    assert_eq!(summary["path"], "/items");
    assert_eq!(summary["start"], "2026-09-05T00:00:00.000000Z");
    assert_eq!(summary["end"], "2026-09-10T00:00:00.000000Z");
    let expected = sql(
        &env,
        "SELECT path, count(*) AS n FROM changes WHERE key = 'feed/acme' \
         AND at >= '2026-09-05' AND at <= '2026-09-10T00:00:00.000000Z' AND path GLOB '/items*' \
         GROUP BY path ORDER BY n DESC, path",
    );
    let lanes: Vec<&str> = expected[..4]
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(summary["lanes"], serde_json::json!(lanes));
    assert_eq!(summary["paths"], expected.len());
    assert_eq!(summary["paths_not_shown"], expected.len() - 4);
    let txs = sql(
        &env,
        "SELECT count(DISTINCT tx) AS n FROM changes WHERE key = 'feed/acme' \
         AND at >= '2026-09-05' AND at <= '2026-09-10T00:00:00.000000Z' AND path GLOB '/items*'",
    );
    assert_eq!(summary["transactions"], txs[0]["n"]);
    assert!(html.contains("Changes at /items and below."));
}

#[test]
fn timeline_takes_every_when_form_other_commands_take() {
    let env = acme();
    let summary = |since: &str, until: &str| -> serde_json::Value {
        let mut cmd = env.command(&[
            "timeline",
            "feed/acme",
            "--since",
            since,
            "--until",
            until,
            "--json",
        ]);
        cmd.env("HIST_NOW", "2026-09-12T12:00:00Z");
        let out = env.run_cmd(cmd, None);
        let summary: serde_json::Value = serde_json::from_str(out.ok()).unwrap();
        std::fs::remove_file(summary["file"].as_str().unwrap()).unwrap();
        summary
    };
    // Relative to the command's clock, as `hist log --since` reads them.
    let relative = summary("3 days ago", "yesterday");
    assert_eq!(relative["start"], "2026-09-09T12:00:00.000000Z");
    assert_eq!(relative["end"], "2026-09-11T12:00:00.000000Z");
    let log = env.run(&[
        "log",
        "feed/acme",
        "--since",
        "@2026-09-09T12:00:00Z",
        "--until",
        "@2026-09-11T12:00:00Z",
        "--json",
    ]);
    assert_eq!(relative["transactions"], log.ok().lines().count());
    // Transactions: the axis runs from the first to the last asked for.
    let txs = summary("@tx:10", "@tx:20");
    assert_eq!(txs["transactions"], 11);
}

#[test]
fn timeline_errors_say_what_to_do() {
    let env = acme();
    let err = env.run(&["timeline", "feed/nobody"]);
    assert!(err.fails(1).contains("feed/nobody has no history"));
    let err = env.run(&["timeline", "feed/acme", "--since", "@2030-01-01"]);
    assert!(
        err.fails(1)
            .contains("nothing changed in feed/acme in the span")
    );
    assert!(err.stderr.contains("Hint: widen the span"));
    let err = env.run(&["timeline", "feed/acme", "--path", "/nowhere"]);
    assert!(err.fails(1).contains("at or below /nowhere"));
    let err = env.run(&["timeline", "feed/acme", "--since", "when pigs fly"]);
    err.fails(2);
    let err = env.run(&["timeline", "feed/acme", "--lanes", "0"]);
    err.fails(2);
    let err = env.run(&["timeline", "feed/acme", "--json", "-o", "-"]);
    assert!(err.fails(2).contains("--json prints a summary"));
    let err = env.run(&["timeline", "feed/acme", "-o", "no/such/dir/x.html"]);
    assert!(err.fails(1).contains("cannot write"));
    assert!(!env.join("no").exists());
}

/// A headless browser, if one is installed.
fn browser() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|p| p.is_file())
}

/// Runs the browser headless on `page` with `args`; returns stdout.
fn headless(browser: &Path, page: &Path, args: &[&str]) -> String {
    let out = Command::new(browser)
        .args([
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--no-first-run",
            "--disable-extensions",
            "--hide-scrollbars",
        ])
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Undoes the escapes a browser writes in attributes and text.
fn unescape(text: &str) -> String {
    text.replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The value of attribute `name` in the tag that starts `tag`.
fn attr(tag: &str, name: &str) -> Option<String> {
    let end = tag.find('>').unwrap_or(tag.len());
    let head = &tag[..end];
    let at = head.find(&format!(" {name}=\""))? + name.len() + 3;
    let len = head[at..].find('"')?;
    Some(unescape(&head[at..at + len]))
}

/// Every tag of the DOM that starts with `start` (`<rect class="mark`), as the text from
/// there to the end of the DOM.
fn tags<'a>(dom: &'a str, start: &str) -> Vec<&'a str> {
    dom.match_indices(start).map(|(at, _)| &dom[at..]).collect()
}

/// The chart of a page's DOM (not the script, which holds the same tags in strings).
fn chart(dom: &str) -> &str {
    let start = dom.find("<div id=\"lanes\">").expect("the chart's lanes");
    let len = dom[start..]
        .find("<section id=\"detail\"")
        .expect("the chart's end");
    &dom[start..start + len]
}

/// One lane as the browser drew it.
struct DrawnLane {
    path: String,
    changes: u64,
    marks: Vec<String>,
    last: Option<String>,
}

fn drawn_lanes(dom: &str) -> Vec<DrawnLane> {
    let starts = tags(dom, "<div class=\"row lane\"");
    starts
        .iter()
        .enumerate()
        .map(|(i, row)| {
            // The row ends where the next starts.
            let len = match starts.get(i + 1) {
                Some(next) => row.len() - next.len(),
                None => row.len(),
            };
            let row = &row[..len];
            DrawnLane {
                path: attr(row, "data-path").unwrap(),
                changes: attr(row, "data-changes").unwrap().parse().unwrap(),
                marks: tags(row, "<rect class=\"mark change")
                    .iter()
                    .map(|m| m[..m.find('>').unwrap()].to_owned())
                    .collect(),
                last: tags(row, "<polyline class=\"value-line\"")
                    .first()
                    .map(|p| attr(p, "data-last").unwrap()),
            }
        })
        .collect()
}

/// Appended to a copy of the page: walks the chart with the keyboard as a user would (Tab
/// to each lane's mark, → through every mark of the lane, ↓ to the next lane, Enter on a
/// mark) and writes what it reached into `<pre id="keys">`.
const KEY_WALK: &str = r#"<script>
(function () {
  function key(el, k) {
    el.dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true, cancelable: true }));
  }
  var rows = document.querySelectorAll('#lanes .row[data-row]'), out = [];
  rows.forEach(function (row) {
    var stops = row.querySelectorAll('.mark[tabindex="0"]');
    var seen = new Set();
    if (stops.length === 1) {
      stops[0].focus();
      for (var i = 0; i < 2000 && !seen.has(document.activeElement); i++) {
        seen.add(document.activeElement);
        key(document.activeElement, 'ArrowRight');
      }
    }
    out.push({ row: row.getAttribute('data-row'), tabStops: stops.length, reached: seen.size,
               marks: row.querySelectorAll('.mark').length });
  });
  var first = document.querySelector('#lanes .row[data-row="axis"] .mark');
  first.focus();
  key(first, 'ArrowDown');
  var down = document.activeElement.closest('.row').getAttribute('data-row');
  var price = document.querySelector('.row[data-path="/items[id=1]/price"] .mark[data-i="1"]');
  price.focus();
  key(price, 'Enter');
  var tip = document.getElementById('tip');
  var pre = document.createElement('pre');
  pre.id = 'keys';
  pre.textContent = JSON.stringify({ rows: out, down: down, tip: tip.hidden ? null : tip.textContent,
    detail: document.getElementById('detail').hidden ? null : document.getElementById('detail-body').innerText });
  document.body.appendChild(pre);
})();
</script>
"#;

#[test]
fn a_browser_draws_the_fixture_feed_s_lanes_marks_and_values() {
    let Some(browser) = browser() else {
        eprintln!(
            "skipped: no browser (chromium, chromium-browser or google-chrome) on PATH; \
             .ci/run installs Debian's chromium"
        );
        return;
    };
    let env = acme();
    env.run(&["timeline", "feed/acme", "-o", "acme.html"]).ok();
    let page = env.join("acme.html");
    let full = headless(&browser, &page, &["--dump-dom"]);
    assert!(full.contains(" data-built-ms=\""), "the script did not run");
    let dom = chart(&full);

    // The lanes: the most changed paths, as the changes view counts them.
    let expected = most_changed(&env);
    let lanes = drawn_lanes(dom);
    let drawn: Vec<(String, u64)> = lanes.iter().map(|l| (l.path.clone(), l.changes)).collect();
    assert_eq!(drawn, expected);

    // Every change that altered a lane's value is a mark (one transaction per column
    // here), with its transaction; numbers draw a line that ends at the value now.
    let mut compacted = 0;
    let mut forgotten = 0;
    let mut lines = 0;
    for lane in &lanes {
        let history: Vec<serde_json::Value> = env
            .run(&["history", "feed/acme", &lane.path, "--json"])
            .ok()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let txs: Vec<String> = lane
            .marks
            .iter()
            .map(|m| attr(m, "data-tx").unwrap())
            .collect();
        let history_txs: Vec<String> = history.iter().map(|h| h["tx"].to_string()).collect();
        let below = |p: &str| {
            lane.path.is_empty()
                || p.starts_with(&format!("{}/", lane.path))
                || p.starts_with(&format!("{}[", lane.path))
        };
        if expected.iter().any(|(p, _)| below(p)) {
            // A lane's marks are the changes at its path or above it; history also lists
            // those below. Those at the path itself are as many as the lane says.
            let own = lane
                .marks
                .iter()
                .filter(|m| attr(m, "data-above").unwrap() == "0")
                .count();
            assert_eq!(own as u64, lane.changes, "{}", lane.path);
            assert!(txs.iter().all(|t| history_txs.contains(t)), "{}", lane.path);
        } else {
            assert_eq!(txs, history_txs, "{}", lane.path);
        }
        compacted += lane
            .marks
            .iter()
            .filter(|m| m.contains(" compacted"))
            .count();
        forgotten += lane
            .marks
            .iter()
            .filter(|m| m.contains(" forgotten"))
            .count();
        if let Some(last) = &lane.last {
            lines += 1;
            let now = env.run(&["show", "feed/acme", "--path", &lane.path]);
            if last.is_empty() {
                // The line ends where the value went (item 3 was removed).
                assert!(now.fails(1).contains("has nothing at"), "{}", lane.path);
            } else {
                let now: f64 = now.ok().trim().parse().unwrap();
                assert_eq!(last.parse::<f64>().unwrap(), now, "{}", lane.path);
            }
        }
    }
    // 5 prices, 5 stocks and the runid.
    assert_eq!(lines, 11);
    assert!(compacted >= 40, "{compacted} compacted marks");
    assert!(forgotten >= 2, "{forgotten} forgotten marks");
    assert!(dom.contains("<rect class=\"band\" data-compaction=\""));
    // The transaction axis: a mark per transaction, colored by actor.
    let axis = tags(dom, "<rect class=\"mark tx ");
    assert_eq!(axis.len(), 45);
    assert_eq!(
        axis.iter()
            .filter(|m| m.starts_with("<rect class=\"mark tx a1\""))
            .count(),
        2,
        "user:sam's two price corrections"
    );
    assert!(axis.iter().any(|m| {
        attr(m, "aria-label")
            .unwrap()
            .ends_with("user:sam: price correction, ticket 1194")
    }));

    // The keyboard reaches every lane (one tab stop each) and every mark in it.
    let mut walked = page.clone();
    walked.set_file_name("keys.html");
    let html = std::fs::read_to_string(&page).unwrap();
    std::fs::write(
        &walked,
        html.replace("</body>", &format!("{KEY_WALK}</body>")),
    )
    .unwrap();
    let dom = headless(&browser, &walked, &["--dump-dom"]);
    let at = dom.find("<pre id=\"keys\">").expect("the key walk ran") + 15;
    let keys: serde_json::Value =
        serde_json::from_str(&unescape(&dom[at..at + dom[at..].find("</pre>").unwrap()])).unwrap();
    let rows = keys["rows"].as_array().unwrap();
    assert_eq!(rows.len(), expected.len() + 1);
    for row in rows {
        assert_eq!(row["tabStops"], 1, "{row}");
        assert_eq!(row["reached"], row["marks"], "{row}");
    }
    assert_eq!(keys["down"], "0", "↓ from the axis goes to the first lane");
    // Enter on a price mark shows old -> new and the transaction.
    let price = env.run(&["history", "feed/acme", "/items[id=1]/price", "--json"]);
    let second: serde_json::Value =
        serde_json::from_str(price.ok().lines().nth(1).unwrap()).unwrap();
    let detail = keys["detail"].as_str().unwrap();
    for part in [
        format!("old\n{}", second["old"]),
        format!("new\n{}", second["new"]),
        format!("tx {}", second["tx"]),
    ] {
        assert!(detail.contains(&part), "{part:?} not in {detail:?}");
    }
    assert!(keys["tip"].as_str().unwrap().contains("/items[id=1]/price"));

    // A screenshot, kept with the test's files (HIST_UPDATE_SCREENSHOTS=1 puts it in
    // fixtures/screenshots/ for the README).
    let shot = env.join("timeline.png");
    headless(
        &browser,
        &page,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1400,1000",
        ],
    );
    let png = std::fs::read(&shot).unwrap();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "{}",
        png.len()
    );
    eprintln!("screenshot: {}", shot.display());
    if std::env::var_os("HIST_UPDATE_SCREENSHOTS").is_some() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("timeline.png"), png).unwrap();
    }
}
