//! Tokens, roles, Host and Origin.

use serde_json::json;

use crate::support::{ALICE, BOB, Served, VIC, send};

#[tokio::test]
async fn every_api_request_needs_a_known_token() {
    let served = Served::start().await;
    assert_eq!(send(served.get("/api/tools"), None).await.0, 401);
    assert_eq!(send(served.get("/api/tools"), Some("not-a-token-of-anyone-here")).await.0, 401);
    let (status, tools) = send(served.get("/api/tools"), Some(VIC)).await;
    assert_eq!(status, 200);
    assert!(tools.as_array().is_some_and(|t| t.iter().any(|t| t["id"] == "file_read")));
    // The event stream too: a WebSocket upgrade without a token is refused.
    let url = format!("ws://127.0.0.1:{}/api/events", served.port);
    let refused = tokio_tungstenite::connect_async(url).await.expect_err("refused");
    assert!(refused.to_string().contains("401"), "{refused}");
}

#[tokio::test]
async fn the_url_token_becomes_an_http_only_strict_cookie() {
    let served = Served::start().await;
    let response = served.get(&format!("/?token={ALICE}")).send().await.expect("send");
    assert_eq!(response.status().as_u16(), 303);
    assert_eq!(response.headers()["location"], "/");
    let cookie = response.headers()["set-cookie"].to_str().expect("cookie").to_owned();
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "{cookie}");
    let pair = cookie.split(';').next().expect("pair").to_owned();
    let (status, session) = send(served.get("/api/session").header("cookie", pair), None).await;
    assert_eq!(status, 200);
    assert_eq!(session["person"], json!({ "name": "alice", "role": "runner" }));
}

/// Issue #26: `/?token=` accepted anything and wrote it into `Set-Cookie` unescaped. A page on
/// another origin sent a person's browser to `/?token=<attacker's>` and the person then acted
/// as the attacker; `%3B%20Max-Age%3D99999999` made the planted cookie last two years.
#[tokio::test]
async fn a_link_cannot_plant_a_cookie_or_switch_the_person_signed_in() {
    let served = Served::start().await;
    // A made-up token, with attributes smuggled in: nothing is set.
    for planted in ["attacker-made-this-up-0123456789", "x%3B%20Max-Age%3D99999999"] {
        let response = served.get(&format!("/?token={planted}")).send().await.expect("send");
        assert_eq!(response.status().as_u16(), 401, "{planted}");
        assert!(response.headers().get("set-cookie").is_none(), "{planted}");
    }
    // alice is signed in; a link with bob's (valid) token does not switch her: she is asked.
    let alice = format!("jig_token={ALICE}");
    let response =
        served.get(&format!("/?token={BOB}")).header("cookie", &alice).send().await.expect("send");
    assert_eq!(response.status().as_u16(), 200);
    assert!(response.headers().get("set-cookie").is_none());
    let page = response.text().await.expect("page");
    assert!(page.contains("signed in as <strong>alice</strong>") && page.contains("bob"), "{page}");
    // Only a form posted from this server's own page switches: a cross-site post is refused.
    let form = format!("token={BOB}");
    for origin in [None, Some("http://evil.example".to_owned())] {
        let mut post = served.post_form("/signin", &form).header("cookie", &alice);
        if let Some(origin) = &origin {
            post = post.header("origin", origin);
        }
        let response = post.send().await.expect("send");
        assert_eq!(response.status().as_u16(), 403, "{origin:?}");
        assert!(response.headers().get("set-cookie").is_none(), "{origin:?}");
    }
    let response = served
        .post_form("/signin", &form)
        .header("cookie", &alice)
        .header("origin", format!("http://127.0.0.1:{}", served.port))
        .send()
        .await
        .expect("send");
    assert_eq!(response.status().as_u16(), 303);
    let cookie = response.headers()["set-cookie"].to_str().expect("cookie").to_owned();
    assert!(cookie.starts_with(&format!("jig_token={BOB};")), "{cookie}");
    assert!(!cookie.contains("Max-Age") && !cookie.contains("Expires"), "{cookie}");
}

/// Login CSRF: another site's page sending a signed-out browser to `/?token=` gets the
/// confirmation page, not a session; the printed URL opened as a person would opens at once.
#[tokio::test]
async fn another_sites_link_does_not_sign_a_fresh_browser_in() {
    let served = Served::start().await;
    for site in ["cross-site", "same-site"] {
        let response = served
            .get(&format!("/?token={BOB}"))
            .header("sec-fetch-site", site)
            .send()
            .await
            .expect("send");
        assert_eq!(response.status().as_u16(), 200, "{site}");
        assert!(response.headers().get("set-cookie").is_none(), "{site}");
        let page = response.text().await.expect("page");
        assert!(page.contains("Sign in as bob") && page.contains("another site"), "{page}");
    }
    let typed = served
        .get(&format!("/?token={BOB}"))
        .header("sec-fetch-site", "none")
        .send()
        .await
        .expect("send");
    assert_eq!(typed.status().as_u16(), 303);
    assert!(typed.headers()["set-cookie"].to_str().expect("cookie").starts_with("jig_token="));
}

/// A token with characters a cookie cannot hold is encoded, and still signs in.
#[test]
fn a_cookie_value_cannot_carry_attributes() {
    let encoded = jig_server::auth::encode_cookie("abc; Max-Age=99999999; Domain=evil");
    assert!(
        !encoded.contains(';') && !encoded.contains(' ') && !encoded.contains('='),
        "{encoded}"
    );
    let mut headers = axum::http::HeaderMap::new();
    headers.insert("cookie", format!("jig_token={encoded}").parse().expect("header"));
    assert_eq!(
        jig_server::auth::cookie_token(&headers).as_deref(),
        Some("abc; Max-Age=99999999; Domain=evil")
    );
}

#[tokio::test]
async fn a_foreign_host_or_origin_is_refused_even_with_a_token() {
    let served = Served::start().await;
    let rebinding =
        served.get("/api/tools").header("host", format!("evil.example:{}", served.port));
    assert_eq!(send(rebinding, Some(ALICE)).await.0, 403);
    let page = served.get("/").header("host", "evil.example");
    assert_eq!(send(page, None).await.0, 403);
    let foreign = served.get("/api/tools").header("origin", "http://evil.example");
    assert_eq!(send(foreign, Some(ALICE)).await.0, 403);
    let own =
        served.get("/api/tools").header("origin", format!("http://localhost:{}", served.port));
    assert_eq!(send(own, Some(ALICE)).await.0, 200);
}

#[tokio::test]
async fn a_viewer_reads_and_previews_but_cannot_run_or_approve() {
    let served = Served::start().await;
    let preview = json!({ "args": { "path": "jig.yaml" } });
    let (status, answer) =
        send(served.post("/api/tools/file_read/preview", &preview), Some(VIC)).await;
    assert_eq!(status, 200, "{answer}");
    let call = json!({ "tool": "file_read", "args": { "path": "jig.yaml" } });
    let (status, error) = send(served.post("/api/calls", &call), Some(VIC)).await;
    assert_eq!(status, 403);
    assert_eq!(error["type"], "ErrorMessage");
    assert_eq!(error["code"], "E_POLICY");
    assert_eq!(send(served.post("/api/approvals/x/approve", &json!({})), Some(VIC)).await.0, 403);
}

#[test]
fn a_users_file_with_a_short_or_shared_token_is_refused_naming_the_entry() {
    let dir = tempfile::tempdir().expect("tmp");
    let file = dir.path().join("users.yaml");
    fs_err::write(&file, "users:\n  - { name: a, role: admin, token: short }\n").expect("write");
    let error = jig_server::auth::Users::from_file(&file).expect_err("short");
    assert!(error.to_string().contains("user 1") && error.to_string().contains("24"), "{error}");
    let token = "x".repeat(30);
    fs_err::write(
        &file,
        format!("users:\n  - {{ name: a, role: admin, token: {token} }}\n  - {{ name: b, role: viewer, token: {token} }}\n"),
    )
    .expect("write");
    let error = jig_server::auth::Users::from_file(&file).expect_err("shared");
    assert!(error.to_string().contains("user 2"), "{error}");
}
