//! `jig serve`: the workbench and its API on a local address, acting as the OS user (or as the
//! people of `--users`), with the project watched so the tool list follows the files.

use std::io::Write;

use jig_server::auth::{Person, Role, Users, new_token};
use jig_server::serve::Bound;

use crate::cli::ServeArgs;
use crate::exit::Code;
use crate::output::Settings;

pub async fn run(
    settings: &Settings,
    args: &ServeArgs,
    out: &mut impl Write,
) -> anyhow::Result<Code> {
    if !args.addr.ip().is_loopback() && !args.allow_remote {
        crate::fail!(
            Policy,
            "--addr {}: not a loopback address; add --allow-remote to serve other machines",
            args.addr
        );
        return Ok(Code::Usage);
    }
    let Some((users, token)) = people(settings, args.users.as_deref()) else {
        return Ok(Code::Usage);
    };
    let Ok(engine) = settings.engine_watched().await else { return Ok(Code::Invalid) };
    if let Err(message) = settings.check_identity(&engine) {
        crate::fail!(Policy, "{message}");
        return Ok(Code::Usage);
    }
    let _resident = super::resident::open(&engine)?;
    let project = engine
        .snapshot()
        .root()
        .file_name()
        .map_or_else(|| "project".to_owned(), |name| name.to_string_lossy().into_owned());
    let mut public = Vec::new();
    for url in &args.public_url {
        match jig_server::auth::PublicName::parse(url) {
            Ok(name) => public.push(name),
            Err(message) => {
                crate::fail!(ValidationFail, "--public-url {message}");
                return Ok(Code::Usage);
            }
        }
    }
    let bound = Bound::bind(args.addr, engine, users, project, &public).await?;
    if !bound.addr.ip().is_loopback() {
        eprintln!(
            "warning: serving on {}, reachable from other machines; only the tokens stand between them and this project",
            bound.addr
        );
    }
    match &token {
        Some(token) => writeln!(out, "http://{}/?token={token}", bound.addr)?,
        None => writeln!(out, "http://{}/", bound.addr)?,
    }
    out.flush()?;
    bound.run(crate::signals::interrupted()).await?;
    Ok(Code::Ok)
}

/// Who may act: the people of a `--users` file, or one random token acting as the OS user with
/// every role (returned to be printed). `None` when the file is refused (the reason printed).
pub fn people(
    settings: &Settings,
    file: Option<&std::path::Path>,
) -> Option<(Users, Option<String>)> {
    match file {
        Some(file) => match Users::from_file(file) {
            Ok(users) => Some((users, None)),
            Err(error) => {
                crate::fail!(ValidationFail, "{error}");
                None
            }
        },
        None => {
            let token = new_token();
            let me = Person { name: settings.principal.clone(), role: Role::Admin };
            Some((Users::single(me, &token), Some(token)))
        }
    }
}
