//! The desktop app signing in to a server through the person's browser (RFC 8252: a loopback
//! redirect and PKCE; `sso/desktop.rs`), against the provider the sign-in tests control. The
//! app gets a session only when the person allowed it in a browser signed in here, only at its
//! own loopback address, only once, and only with the verifier behind the challenge.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::sso::{Idp, field, served, session_of, sign_in, urlencode};
use crate::support::{Served, send};

const REDIRECT: &str = "http://127.0.0.1:4711/signed-in";
const STATE: &str = "a-state-of-the-app-0123";
const VERIFIER: &str = "the-verifier-only-the-app-knows-0123456789abcdef";

fn challenge(verifier: &str) -> String {
    B64.encode(Sha256::digest(verifier.as_bytes()))
}

/// The query the app opens the browser with.
fn query(redirect: &str) -> String {
    format!(
        "redirect_uri={}&state={STATE}&code_challenge={}&code_challenge_method=S256",
        urlencode(redirect),
        challenge(VERIFIER)
    )
}

/// The person's browser (signed in as `session`) answers the consent page with `decision`.
async fn decide(served: &Served, session: &str, decision: &str) -> reqwest::Response {
    served
        .post_form("/auth/desktop", &format!("{}&decision={decision}", query(REDIRECT)))
        .header("cookie", format!("jig_session={session}"))
        .header("origin", served.base.clone())
        .send()
        .await
        .expect("decide")
}

/// The code the consent sent the browser to the app with.
fn code_of(response: &reqwest::Response) -> String {
    let location = response.headers()["location"].to_str().expect("location");
    assert!(location.starts_with(&format!("{REDIRECT}?")), "{location}");
    let query = location.split_once('?').expect("query").1;
    assert_eq!(field(query, "state").as_deref(), Some(STATE), "the app's state comes back");
    field(query, "code").expect("a code")
}

async fn trade(served: &Served, code: &str, verifier: &str, redirect: &str) -> (u16, Value) {
    let body = json!({ "code": code, "code_verifier": verifier, "redirect_uri": redirect });
    send(served.post("/auth/desktop/token", &body), None).await
}

#[tokio::test]
async fn the_desktop_app_signs_in_through_the_browser_with_a_session_of_its_own() {
    let idp = Idp::start();
    let served = served(&idp).await;
    // Not signed in yet: the browser signs in first, and comes back to the same request.
    let first =
        served.get(&format!("/auth/desktop?{}", query(REDIRECT))).send().await.expect("get");
    assert_eq!(first.status().as_u16(), 303);
    let login = first.headers()["location"].to_str().expect("location").to_owned();
    assert!(login.starts_with("/auth/login?return_to=%2Fauth%2Fdesktop%3F"), "{login}");

    let browser = sign_in(&served, &idp, "/").await.session.expect("the browser's session");
    let consent = served
        .get(&format!("/auth/desktop?{}", query(REDIRECT)))
        .header("cookie", format!("jig_session={browser}"))
        .send()
        .await
        .expect("consent");
    assert_eq!(consent.status().as_u16(), 200);
    let policy = consent.headers()["content-security-policy"].to_str().expect("csp").to_owned();
    assert!(policy.contains("form-action 'self' http://127.0.0.1:*;"), "{policy}");
    // A form's POST carries this server's Origin (with `no-referrer` it would be `null`).
    let referrer = consent.headers()["referrer-policy"].to_str().expect("referrer").to_owned();
    assert_eq!(referrer, "same-origin");
    let page = consent.text().await.expect("page");
    assert!(page.contains("bob@acme.example") && page.contains("Allow the desktop app"), "{page}");

    let allowed = decide(&served, &browser, "allow").await;
    assert_eq!(allowed.status().as_u16(), 303);
    let code = code_of(&allowed);
    let (status, body) = trade(&served, &code, VERIFIER, REDIRECT).await;
    assert_eq!(status, 200, "{body}");
    let app = body["session"].as_str().expect("a session").to_owned();
    assert_ne!(app, browser, "the app's session is its own");
    let (status, me) = session_of(&served, &app).await;
    assert_eq!(status, 200, "{me}");
    assert_eq!(me["person"]["name"], "bob@acme.example");
    assert_eq!(me["person"]["role"], "approver");
    assert_eq!(me["via"], "sign_in");

    // A code is good once.
    assert_eq!(trade(&served, &code, VERIFIER, REDIRECT).await.0, 401);
    // Signing out in the app ends its session, not the browser's.
    let out = served
        .post_form("/auth/logout", "")
        .header("cookie", format!("jig_session={app}"))
        .header("origin", served.base.clone())
        .send()
        .await
        .expect("logout");
    assert_eq!(out.status().as_u16(), 303);
    assert_eq!(session_of(&served, &app).await.0, 401);
    assert_eq!(session_of(&served, &browser).await.0, 200);
}

#[tokio::test]
async fn a_desktop_sign_in_cannot_be_taken_by_anyone_but_the_app_that_asked() {
    let idp = Idp::start();
    let served = served(&idp).await;
    let browser = sign_in(&served, &idp, "/").await.session.expect("the browser's session");
    let get = |query: String| {
        served
            .get(&format!("/auth/desktop?{query}"))
            .header("cookie", format!("jig_session={browser}"))
            .send()
    };
    // Only the app's own loopback address: a code is never sent anywhere else.
    for redirect in [
        "https://evil.example/cb",
        "http://localhost:4711/",
        "http://127.0.0.1.evil.example:80/",
        "http://127.0.0.1:4711/?then=https://evil.example",
    ] {
        let response = get(query(redirect)).await.expect("get");
        assert_eq!(response.status().as_u16(), 400, "{redirect}");
        assert!(response.headers().get("location").is_none(), "{redirect}: not followed");
    }
    let plain = query(REDIRECT).replace("S256", "plain");
    assert_eq!(get(plain).await.expect("get").status().as_u16(), 400, "PKCE S256 only");

    // The consent is a form of this server's page: another origin cannot post it.
    let forged = served
        .post_form("/auth/desktop", &format!("{}&decision=allow", query(REDIRECT)))
        .header("cookie", format!("jig_session={browser}"))
        .header("origin", "http://evil.example")
        .send()
        .await
        .expect("forged");
    assert_eq!(forged.status().as_u16(), 403);
    assert!(forged.headers().get("location").is_none());

    // Refused: the app hears so, with no code.
    let refused = decide(&served, &browser, "deny").await;
    let location = refused.headers()["location"].to_str().expect("location").to_owned();
    assert!(location.contains("error=access_denied") && !location.contains("code="), "{location}");

    // Whoever saw the code but not the verifier: refused, and the code is spent.
    let code = code_of(&decide(&served, &browser, "allow").await);
    assert_eq!(
        trade(&served, &code, "someone-else's-verifier-0123456789abcdef", REDIRECT).await.0,
        401
    );
    assert_eq!(trade(&served, &code, VERIFIER, REDIRECT).await.0, 401, "spent");
    // Another address than the code went to: refused.
    let code = code_of(&decide(&served, &browser, "allow").await);
    let (status, body) = trade(&served, &code, VERIFIER, "http://127.0.0.1:9/signed-in").await;
    assert_eq!(status, 401, "{body}");
    assert!(body["message"].as_str().is_some_and(|m| m.contains("redirect_uri")), "{body}");
    // The browser signed out before the app traded: no session for the app.
    let code = code_of(&decide(&served, &browser, "allow").await);
    served
        .post_form("/auth/logout", "")
        .header("cookie", format!("jig_session={browser}"))
        .header("origin", served.base.clone())
        .send()
        .await
        .expect("logout");
    let (status, body) = trade(&served, &code, VERIFIER, REDIRECT).await;
    assert_eq!(status, 401, "{body}");
    // Not signed in: no consent page, and a posted consent does nothing.
    let posted = decide(&served, &browser, "allow").await;
    assert_eq!(posted.status().as_u16(), 401);
}
