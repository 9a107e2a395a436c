//! Single sign-on against a provider the test controls: a real HTTP server on 127.0.0.1 that
//! publishes discovery and an ES256 key, and answers the token endpoint with the ID token each
//! test chooses — honest, or forged the ways a hostile or broken provider (or someone between)
//! would forge it. Jig must sign in the honest one and nobody else. Personal tokens, sign-out,
//! expiry and role mapping changes are tested on the sessions it makes.

use std::sync::{Arc, Mutex, PoisonError};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use jig_testkit::http::{Response, Server};
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use serde_json::{Value, json};

use crate::support::{BOB, Served, send};

/// How the provider answers the code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Forge {
    Honest,
    WrongIssuer,
    WrongAudience,
    Expired,
    BadSignature,
    WrongNonce,
    AlgNone,
    MacWithSecret,
    UnverifiedEmail,
    NoEmailVerified,
    NoGroups,
    NoIdToken,
}

pub(crate) struct Idp {
    server: Server,
    state: Arc<Mutex<IdpState>>,
}

struct IdpState {
    forge: Forge,
    nonce: String,
    challenge: String,
    verifier_ok: Option<bool>,
    who: (&'static str, &'static str, Value),
}

/// The client's secret: Jig reads it from the variable `client_secret_env` names. Tests cannot
/// set variables (no `unsafe`), so the configuration names one cargo sets for every test run.
const SECRET: &str = env!("CARGO_PKG_NAME");
const SECRET_ENV: &str = "CARGO_PKG_NAME";

impl Idp {
    pub(crate) fn start() -> Self {
        let random = SystemRandom::new();
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &random).expect("key");
        let key =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &random)
                .expect("key");
        let point = key.public_key().as_ref().to_vec();
        let jwk = json!({ "kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": "k1",
            "x": B64.encode(&point[1..33]), "y": B64.encode(&point[33..65]) });
        let state = Arc::new(Mutex::new(IdpState {
            forge: Forge::Honest,
            nonce: String::new(),
            challenge: String::new(),
            verifier_ok: None,
            who: ("bob", "bob@acme.example", json!(["approvers"])),
        }));
        let issuer = Arc::new(Mutex::new(String::new()));
        let (shared, known) = (Arc::clone(&state), Arc::clone(&issuer));
        let server = Server::start(move |request| {
            let issuer = known.lock().unwrap_or_else(PoisonError::into_inner).clone();
            let path = request.target.split('?').next().unwrap_or_default();
            match path {
                "/.well-known/openid-configuration" => json_response(&json!({
                    "issuer": issuer,
                    "authorization_endpoint": format!("{issuer}/authorize"),
                    "token_endpoint": format!("{issuer}/token"),
                    "jwks_uri": format!("{issuer}/jwks"),
                    "response_types_supported": ["code"],
                    "subject_types_supported": ["public"],
                    "id_token_signing_alg_values_supported": ["ES256"],
                })),
                "/jwks" => json_response(&json!({ "keys": [jwk] })),
                "/token" => {
                    let mut state = shared.lock().unwrap_or_else(PoisonError::into_inner);
                    let form = String::from_utf8_lossy(&request.body).into_owned();
                    let verifier = field(&form, "code_verifier").unwrap_or_default();
                    let digest = ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes());
                    state.verifier_ok = Some(B64.encode(digest.as_ref()) == state.challenge);
                    let basic = format!(
                        "Basic {}",
                        base64::engine::general_purpose::STANDARD.encode(format!("jig:{SECRET}"))
                    );
                    if request.header("authorization") != Some(basic.as_str()) {
                        return Response::text(401, "{\"error\":\"invalid_client\"}");
                    }
                    let mut answer =
                        json!({ "access_token": "at", "token_type": "Bearer", "expires_in": 60 });
                    if state.forge != Forge::NoIdToken {
                        answer["id_token"] = json!(id_token(&key, &random, &issuer, &state));
                    }
                    json_response(&answer)
                }
                _ => Response::text(404, "not here"),
            }
        });
        *issuer.lock().unwrap_or_else(PoisonError::into_inner) = server.url("");
        Self { server, state }
    }

    fn issuer(&self) -> String {
        self.server.url("")
    }

    fn set(&self, forge: Forge) {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).forge = forge;
    }

    fn sign_in_as(&self, name: &'static str, email: &'static str, groups: Value) {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).who = (name, email, groups);
    }
}

fn json_response(value: &Value) -> Response {
    Response {
        status: 200,
        headers: vec![("Content-Type".into(), "application/json".into())],
        body: value.to_string().into_bytes(),
    }
}

pub(crate) fn field(form: &str, name: &str) -> Option<String> {
    form.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=')?;
        (key == name).then(|| decode(value))
    })
}

fn decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("00");
                out.push(u8::from_str_radix(hex, 16).unwrap_or(b'?'));
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The ID token `state.forge` asks for.
fn id_token(key: &EcdsaKeyPair, random: &SystemRandom, issuer: &str, state: &IdpState) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    let (name, email, groups) = &state.who;
    let mut claims = json!({
        "iss": issuer, "sub": name, "aud": "jig", "iat": now, "exp": now + 300,
        "nonce": state.nonce, "email": email, "email_verified": true, "groups": groups,
    });
    let mut header = json!({ "alg": "ES256", "typ": "JWT", "kid": "k1" });
    match state.forge {
        Forge::WrongIssuer => claims["iss"] = json!("https://login.evil.example"),
        Forge::WrongAudience => claims["aud"] = json!("someone-else"),
        Forge::Expired => {
            claims["iat"] = json!(now - 7200);
            claims["exp"] = json!(now - 3600);
        }
        Forge::WrongNonce => claims["nonce"] = json!("a-nonce-of-another-sign-in"),
        Forge::UnverifiedEmail => claims["email_verified"] = json!(false),
        Forge::NoEmailVerified => {
            claims.as_object_mut().expect("claims").remove("email_verified");
        }
        Forge::NoGroups => claims["groups"] = json!(["contractors"]),
        Forge::AlgNone => header = json!({ "alg": "none", "typ": "JWT" }),
        Forge::MacWithSecret => header = json!({ "alg": "HS256", "typ": "JWT" }),
        _ => {}
    }
    let input = format!("{}.{}", B64.encode(header.to_string()), B64.encode(claims.to_string()));
    let signature = match state.forge {
        Forge::AlgNone => Vec::new(),
        Forge::MacWithSecret => {
            let mac = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, SECRET.as_bytes());
            ring::hmac::sign(&mac, input.as_bytes()).as_ref().to_vec()
        }
        _ => {
            let mut signature = key.sign(random, input.as_bytes()).expect("sign").as_ref().to_vec();
            if state.forge == Forge::BadSignature {
                signature[10] ^= 0x55;
            }
            signature
        }
    };
    format!("{input}.{}", B64.encode(signature))
}

/// The example project with this provider as its sign-in, bob's and carol's groups mapped.
pub(crate) async fn served(idp: &Idp) -> Served {
    let manifest = fs_err::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../toolpacks/examples/jig.yaml"),
    )
    .expect("example manifest");
    let manifest =
        manifest.replacen("config:\n", &format!("config:\n{}", auth(idp, "approvers")), 1);
    consented(Served::start_with(&[("jig.yaml", &manifest)]).await)
}

/// `served` once the person running it consented to its sign-in provider (`jig trust`).
pub(crate) fn consented(served: Served) -> Served {
    let snapshot = served.engine.snapshot();
    let oidc = snapshot.auth().and_then(|a| a.oidc.as_ref()).expect("a provider");
    jig_load::trust::Outbound::oidc(oidc).trust(served.dir.path()).expect("consent");
    served
}

fn auth(idp: &Idp, approver_group: &str) -> String {
    format!(
        "  auth:\n    session_hours: 1\n    oidc:\n      issuer: {}\n      client_id: jig\n      client_secret_env: {SECRET_ENV}\n      roles:\n        approver: [{approver_group}]\n        viewer: [viewers]\n",
        idp.issuer()
    )
}

/// What a sign-in ended in: status, where it went, the session cookie it set.
pub(crate) struct Outcome {
    pub(crate) status: u16,
    pub(crate) location: Option<String>,
    pub(crate) session: Option<String>,
    pub(crate) body: String,
}

/// A browser starts at `/auth/login`; the provider "signs it in" (the test plays its login
/// page) and the browser comes back to the callback with the code.
pub(crate) async fn sign_in(served: &Served, idp: &Idp, return_to: &str) -> Outcome {
    let started = served
        .get(&format!("/auth/login?return_to={}", urlencode(return_to)))
        .send()
        .await
        .expect("login");
    assert_eq!(started.status().as_u16(), 303, "login goes to the provider");
    let location = started.headers()["location"].to_str().expect("location").to_owned();
    assert!(location.starts_with(&format!("{}/authorize?", idp.issuer())), "{location}");
    let browser = cookie(&started, "jig_signin").expect("the sign-in cookie");
    let query = location.split_once('?').expect("query").1;
    let state = field(query, "state").expect("state");
    {
        let mut idp = idp.state.lock().unwrap_or_else(PoisonError::into_inner);
        idp.nonce = field(query, "nonce").expect("nonce");
        idp.challenge = field(query, "code_challenge").expect("PKCE");
        assert_eq!(field(query, "code_challenge_method").as_deref(), Some("S256"));
    }
    callback(served, &state, Some(&browser)).await
}

async fn callback(served: &Served, state: &str, browser: Option<&str>) -> Outcome {
    let mut request =
        served.get(&format!("/auth/callback?code=the-code&state={}", urlencode(state)));
    if let Some(browser) = browser {
        request = request.header("cookie", format!("jig_signin={browser}"));
    }
    let response = request.send().await.expect("callback");
    let status = response.status().as_u16();
    let location = response.headers().get("location").map(|l| l.to_str().expect("l").to_owned());
    let session = cookie(&response, "jig_session").filter(|value| !value.is_empty());
    let body = response.text().await.expect("body");
    Outcome { status, location, session, body }
}

pub(crate) fn cookie(response: &reqwest::Response, name: &str) -> Option<String> {
    response.headers().get_all("set-cookie").iter().find_map(|value| {
        let value = value.to_str().ok()?;
        let (pair, _) = value.split_once(';').unwrap_or((value, ""));
        let (key, value) = pair.split_once('=')?;
        (key == name).then(|| value.to_owned())
    })
}

pub(crate) fn urlencode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// `/api/session` as the browser holding `session`.
pub(crate) async fn session_of(served: &Served, session: &str) -> (u16, Value) {
    send(served.get("/api/session").header("cookie", format!("jig_session={session}")), None).await
}

#[tokio::test]
async fn an_honest_provider_signs_a_person_in_with_the_role_their_groups_give() {
    let idp = Idp::start();
    let served = served(&idp).await;
    let outcome = sign_in(&served, &idp, "/#/approvals").await;
    assert_eq!(outcome.status, 303, "{}", outcome.body);
    assert_eq!(outcome.location.as_deref(), Some("/#/approvals"), "back where they were");
    assert_eq!(
        idp.state.lock().unwrap_or_else(PoisonError::into_inner).verifier_ok,
        Some(true),
        "Jig proved the PKCE verifier"
    );
    let session = outcome.session.expect("a session cookie");
    let (status, body) = session_of(&served, &session).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["person"]["name"], "bob@acme.example");
    assert_eq!(body["person"]["role"], "approver");
    assert_eq!(body["via"], "sign_in");
    assert_eq!(body["sign_in"], true);
    // The store keeps the cookie's hash, never the cookie.
    let hashed = served
        .engine
        .store()
        .web_session(&jig_server::people::hash(&session), jig_audit::time::now_us())
        .await
        .expect("store")
        .expect("kept");
    assert_eq!(hashed.principal, "bob@acme.example");
}

#[tokio::test]
async fn a_forged_or_broken_id_token_signs_nobody_in() {
    let idp = Idp::start();
    let served = served(&idp).await;
    for forge in [
        Forge::WrongIssuer,
        Forge::WrongAudience,
        Forge::Expired,
        Forge::BadSignature,
        Forge::WrongNonce,
        Forge::AlgNone,
        Forge::MacWithSecret,
        Forge::UnverifiedEmail,
        // The nOAuth pattern: a provider that says nothing of the email (Entra ID).
        Forge::NoEmailVerified,
        Forge::NoIdToken,
    ] {
        idp.set(forge);
        let outcome = sign_in(&served, &idp, "/").await;
        assert_eq!(outcome.status, 401, "{forge:?}: {}", outcome.body);
        assert!(outcome.session.is_none(), "{forge:?} made a session");
        assert!(outcome.body.contains("refused"), "{forge:?}: {}", outcome.body);
    }
    // Someone the provider knows, in no mapped group: told so, and not signed in.
    idp.set(Forge::NoGroups);
    let outcome = sign_in(&served, &idp, "/").await;
    assert_eq!(outcome.status, 403, "{}", outcome.body);
    assert!(outcome.session.is_none());
    assert!(outcome.body.contains("No role for you here"), "{}", outcome.body);
}

#[tokio::test]
async fn a_callback_is_taken_once_and_only_by_the_browser_that_started_it() {
    let idp = Idp::start();
    let served = served(&idp).await;
    let started = served.get("/auth/login?return_to=//evil.example/x").send().await.expect("login");
    let location = started.headers()["location"].to_str().expect("location").to_owned();
    let browser = cookie(&started, "jig_signin").expect("cookie");
    let query = location.split_once('?').expect("query").1.to_owned();
    let state = field(&query, "state").expect("state");
    {
        let mut idp = idp.state.lock().unwrap_or_else(PoisonError::into_inner);
        idp.nonce = field(&query, "nonce").expect("nonce");
        idp.challenge = field(&query, "code_challenge").expect("PKCE");
    }
    // A link made by someone else (their state, another browser): refused, and it does not
    // use the sign-in up.
    let elsewhere = callback(&served, &state, Some("another-browsers-cookie")).await;
    assert_eq!(elsewhere.status, 401, "{}", elsewhere.body);
    assert!(elsewhere.session.is_none());
    let state_again = {
        // The refused attempt consumed it: a sign-in is single-use whoever presents it.
        let replay = callback(&served, &state, Some(&browser)).await;
        assert_eq!(replay.status, 401, "{}", replay.body);
        assert!(replay.body.contains("expired"), "{}", replay.body);
        // Start again: a return path that leaves the server becomes `/`.
        let started =
            served.get("/auth/login?return_to=//evil.example/x").send().await.expect("login");
        let location = started.headers()["location"].to_str().expect("location").to_owned();
        let query = location.split_once('?').expect("query").1.to_owned();
        let mut idp = idp.state.lock().unwrap_or_else(PoisonError::into_inner);
        idp.nonce = field(&query, "nonce").expect("nonce");
        idp.challenge = field(&query, "code_challenge").expect("PKCE");
        (field(&query, "state").expect("state"), cookie(&started, "jig_signin").expect("cookie"))
    };
    let first = callback(&served, &state_again.0, Some(&state_again.1)).await;
    assert_eq!(first.status, 303, "{}", first.body);
    assert_eq!(first.location.as_deref(), Some("/"));
    assert!(first.session.is_some());
    let replayed = callback(&served, &state_again.0, Some(&state_again.1)).await;
    assert_eq!(replayed.status, 401, "a callback replayed: {}", replayed.body);
    assert!(replayed.session.is_none());
}

#[tokio::test]
async fn signing_out_ends_the_session_for_whoever_kept_the_cookie() {
    let idp = Idp::start();
    let served = served(&idp).await;
    let session = sign_in(&served, &idp, "/").await.session.expect("session");
    assert_eq!(session_of(&served, &session).await.0, 200);
    // A page on another origin cannot sign someone out (or in): the form needs our Origin.
    let foreign = served
        .post_form("/auth/logout", "")
        .header("cookie", format!("jig_session={session}"))
        .header("origin", "http://evil.example")
        .send()
        .await
        .expect("logout");
    assert_eq!(foreign.status().as_u16(), 403);
    assert_eq!(session_of(&served, &session).await.0, 200, "still signed in");
    let out = served
        .post_form("/auth/logout", "")
        .header("cookie", format!("jig_session={session}"))
        .header("origin", served.base.clone())
        .send()
        .await
        .expect("logout");
    assert_eq!(out.status().as_u16(), 303);
    assert_eq!(cookie(&out, "jig_session").as_deref(), Some(""), "the cookie is cleared");
    // Someone who copied the cookie before: it is dead in the store, not only in the browser.
    let (status, body) = session_of(&served, &session).await;
    assert_eq!(status, 401, "{body}");
}

#[tokio::test]
async fn an_expired_session_is_refused_and_a_mapping_change_applies_at_once() {
    let idp = Idp::start();
    let served = served(&idp).await;
    let session = sign_in(&served, &idp, "/").await.session.expect("session");
    // The team moves `approvers` down to viewer in jig.yaml: bob's next request is a viewer's.
    let manifest = fs_err::read_to_string(served.dir.path().join("jig.yaml")).expect("read");
    let lowered =
        manifest.replace("approver: [approvers]", "approver: [leads]\n        viewer: [approvers]");
    let lowered = lowered.replacen("        viewer: [viewers]\n", "", 1);
    fs_err::write(served.dir.path().join("jig.yaml"), lowered).expect("write");
    served.engine.swap(jig_load::load(served.dir.path()).expect("reload")).expect("swap");
    let (_, body) = session_of(&served, &session).await;
    assert_eq!(body["person"]["role"], "viewer", "{body}");
    // A session past its time: refused, though nobody signed it out.
    let store = served.engine.store();
    let now = jig_audit::time::now_us();
    let old = jig_audit::WebSession {
        id_hash: jig_server::people::hash("an-old-cookie"),
        principal: "bob@acme.example".into(),
        subject: "bob".into(),
        issuer: idp.issuer(),
        claims: json!({ "groups": ["approvers"] }),
        created_us: now - 10 * 3_600_000_000,
        expires_us: now - 2 * 3_600_000_000,
        revoked_us: None,
    };
    store.create_web_session(&old).await.expect("insert");
    assert_eq!(session_of(&served, "an-old-cookie").await.0, 401);
}

#[tokio::test]
async fn personal_tokens_act_as_their_owner_at_most_and_stop_when_revoked() {
    let idp = Idp::start();
    let served = served(&idp).await;
    let session = sign_in(&served, &idp, "/").await.session.expect("session");
    let as_bob = |request: reqwest::RequestBuilder| {
        request
            .header("cookie", format!("jig_session={session}"))
            .header("origin", served.base.clone())
    };
    // Above bob's own role: refused.
    let (status, body) =
        send(as_bob(served.post("/api/tokens", &json!({ "name": "ci", "role": "admin" }))), None)
            .await;
    assert_eq!(status, 403, "{body}");
    let (status, made) =
        send(as_bob(served.post("/api/tokens", &json!({ "name": "ci", "role": "runner" }))), None)
            .await;
    assert_eq!(status, 201, "{made}");
    let token = made["token"].as_str().expect("token").to_owned();
    assert!(token.starts_with("jig_pat_"));
    // The token acts as bob, with the token's role.
    let (status, body) = send(served.get("/api/session"), Some(&token)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["person"]["name"], "bob@acme.example");
    assert_eq!(body["person"]["role"], "runner");
    assert_eq!(body["via"], "personal_token");
    // A runner's token does not approve, whoever owns it.
    let (status, _) =
        send(served.post("/api/approvals/nope/approve", &json!({})), Some(&token)).await;
    assert_eq!(status, 403);
    // A token does not make tokens (it would outlive its own revocation).
    let (status, body) =
        send(served.post("/api/tokens", &json!({ "name": "child" })), Some(&token)).await;
    assert_eq!(status, 403, "{body}");
    // The list shows it, never the secret; someone else cannot revoke it.
    let (_, list) = send(as_bob(served.get("/api/tokens")), None).await;
    assert_eq!(list.as_array().map(Vec::len), Some(1), "{list}");
    assert!(!list.to_string().contains(&token), "the list never carries a token");
    let id = made["id"].as_str().expect("id");
    let (status, _) = send(served.delete(&format!("/api/tokens/{id}")), Some(BOB)).await;
    assert_eq!(status, 404, "the users file's bob is another person than bob@acme.example");
    let (status, _) = send(as_bob(served.delete(&format!("/api/tokens/{id}"))), None).await;
    assert_eq!(status, 204);
    let (status, _) = send(served.get("/api/session"), Some(&token)).await;
    assert_eq!(status, 401, "a revoked token stops at once");
    // An approver's token follows its owner down: the mapping no longer gives bob a role.
    let (_, made) =
        send(as_bob(served.post("/api/tokens", &json!({ "name": "agent" }))), None).await;
    let token = made["token"].as_str().expect("token").to_owned();
    assert_eq!(made["role"], "approver");
    idp.sign_in_as("bob", "bob@acme.example", json!(["approvers"]));
    let manifest = fs_err::read_to_string(served.dir.path().join("jig.yaml")).expect("read");
    fs_err::write(served.dir.path().join("jig.yaml"), manifest.replace("[approvers]", "[leads]"))
        .expect("write");
    served.engine.swap(jig_load::load(served.dir.path()).expect("reload")).expect("swap");
    let (status, _) = send(served.get("/api/session"), Some(&token)).await;
    assert_eq!(status, 401, "no role left for its owner, none for the token");
}

/// The example project whose provider maps `admins` to admin, besides bob's approvers.
async fn served_with_admins(idp: &Idp) -> Served {
    let manifest = fs_err::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../toolpacks/examples/jig.yaml"),
    )
    .expect("example manifest");
    let auth = auth(idp, "approvers").replace("roles:\n", "roles:\n        admin: [admins]\n");
    let manifest = manifest.replacen("config:\n", &format!("config:\n{auth}"), 1);
    consented(Served::start_with(&[("jig.yaml", &manifest)]).await)
}

/// Issue #42: a token outlived its owner's removal (its role was capped by an expired
/// session's claims), never expired, and no admin could revoke it. Now: tokens end, an admin
/// lists and revokes anyone's, a refused sign-in ends every token and session of that person,
/// and each mint and revoke is a packet in the chain.
#[tokio::test]
async fn tokens_end_admins_revoke_them_and_a_refused_sign_in_takes_them_all() {
    let idp = Idp::start();
    let served = served_with_admins(&idp).await;
    let bob = sign_in(&served, &idp, "/").await.session.expect("bob's session");
    idp.sign_in_as("carol", "carol@acme.example", json!(["admins"]));
    let carol = sign_in(&served, &idp, "/").await.session.expect("carol's session");
    let as_person = |session: &str, request: reqwest::RequestBuilder| {
        request
            .header("cookie", format!("jig_session={session}"))
            .header("origin", served.base.clone())
    };
    // An end: the team's default (30 days), a chosen one, and never past the maximum (90).
    let (status, body) = send(
        as_person(&bob, served.post("/api/tokens", &json!({ "name": "ci", "days": 91 }))),
        None,
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(body.to_string().contains("token_max_days"), "{body}");
    let (status, made) =
        send(as_person(&bob, served.post("/api/tokens", &json!({ "name": "ci" }))), None).await;
    assert_eq!(status, 201, "{made}");
    let days =
        (made["expires_us"].as_i64().expect("an end") - jig_audit::time::now_us()) / 86_400_000_000;
    assert!((29..=30).contains(&days), "{made}");
    let token = made["token"].as_str().expect("token").to_owned();
    let id = made["id"].as_str().expect("id").to_owned();
    // Only an admin lists everyone's; an admin revokes bob's.
    let (status, _) = send(as_person(&bob, served.get("/api/tokens?all=true")), None).await;
    assert_eq!(status, 403);
    let (status, all) = send(as_person(&carol, served.get("/api/tokens?all=true")), None).await;
    assert_eq!(status, 200, "{all}");
    assert!(
        all.as_array()
            .expect("list")
            .iter()
            .any(|t| t["id"] == id.as_str() && t["owner"] == "bob@acme.example"),
        "{all}"
    );
    assert!(!all.to_string().contains(&token));
    let (status, _) =
        send(as_person(&carol, served.delete(&format!("/api/tokens/{id}"))), None).await;
    assert_eq!(status, 204);
    assert_eq!(send(served.get("/api/session"), Some(&token)).await.0, 401, "revoked by an admin");
    let packets = served.engine.store().packets(0, 10_000).await.expect("packets");
    let minted = packets.iter().find(|p| p.kind == "token.minted").expect("the mint, in the chain");
    assert_eq!(
        (minted.principal.as_deref(), &minted.data["token_id"]),
        (Some("bob@acme.example"), &json!(id))
    );
    assert!(!minted.data.to_string().contains(&token));
    let revoked = packets.iter().find(|p| p.kind == "token.revoked").expect("the revoke");
    assert_eq!(revoked.data["by"], "carol@acme.example");

    // The provider drops bob's groups: his next sign-in is refused, and with it every token
    // and session he had, at once (before: the token kept acting with his old role).
    idp.sign_in_as("bob", "bob@acme.example", json!(["approvers"]));
    let again = sign_in(&served, &idp, "/").await.session.expect("bob again");
    let (_, made) = send(
        as_person(&again, served.post("/api/tokens", &json!({ "name": "agent", "days": 7 }))),
        None,
    )
    .await;
    let agent = made["token"].as_str().expect("token").to_owned();
    assert_eq!(send(served.get("/api/session"), Some(&agent)).await.0, 200);
    idp.sign_in_as("bob", "bob@acme.example", json!(["contractors"]));
    let refused = sign_in(&served, &idp, "/").await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(refused.body.contains("no longer work"), "{}", refused.body);
    assert_eq!(
        send(served.get("/api/session"), Some(&agent)).await.0,
        401,
        "the token went with him"
    );
    assert_eq!(session_of(&served, &again).await.0, 401, "and his session");
    let packets = served.engine.store().packets(0, 10_000).await.expect("packets");
    assert!(
        packets.iter().any(|p| p.kind == "token.revoked" && p.data["by"] == "sign-in"),
        "recorded"
    );

    // A token past its end stops by itself.
    let now = jig_audit::time::now_us();
    let old = jig_audit::ApiToken {
        id: "old".into(),
        owner: "carol@acme.example".into(),
        name: "old".into(),
        role: "viewer".into(),
        token_hash: jig_server::people::hash("jig_pat_an-old-token"),
        created_us: now - 10 * 86_400_000_000,
        last_used_us: None,
        expires_us: Some(now - 1),
        revoked_us: None,
        revoked_by: None,
    };
    served.engine.store().mint_api_token(&old).await.expect("insert");
    assert_eq!(send(served.get("/api/session"), Some("jig_pat_an-old-token")).await.0, 401);
}

/// Issue #42: a cloned manifest's sign-in provider decides who signs in as whom and is handed
/// the client secret's variable; before a person consents to it, nothing of it is used.
#[tokio::test]
async fn a_sign_in_provider_nobody_consented_to_signs_nobody_in() {
    let idp = Idp::start();
    let manifest = fs_err::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../toolpacks/examples/jig.yaml"),
    )
    .expect("example manifest");
    let manifest =
        manifest.replacen("config:\n", &format!("config:\n{}", auth(&idp, "approvers")), 1);
    let served = Served::start_with(&[("jig.yaml", &manifest)]).await;
    let login = served.get("/auth/login?return_to=/").send().await.expect("login");
    assert_eq!(login.status().as_u16(), 503);
    assert!(login.headers().get("location").is_none(), "sent to the provider");
    let page = login.text().await.expect("page");
    assert!(page.contains("jig trust"), "{page}");
    let (_, status) = send(served.get("/auth/status"), None).await;
    assert_eq!(status["sign_in"], false, "{status}");
    let (_, session) = send(served.get("/api/session"), Some(crate::support::ALICE)).await;
    assert_eq!(session["waiting_consent"][0]["kind"], "oidc", "{session}");
    assert!(
        session["waiting_consent"][0]["description"]
            .as_str()
            .unwrap_or_default()
            .contains(SECRET_ENV),
        "{session}"
    );
    // Consented: the same server now signs people in.
    let served = consented(served);
    let outcome = sign_in(&served, &idp, "/").await;
    assert!(outcome.session.is_some(), "{}", outcome.body);
}
