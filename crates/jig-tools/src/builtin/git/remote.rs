//! `git_push` and `git_pull`. Pushing is gated by `git.allow_push` (checked at decision); a
//! remote reached over the network must be in `network.allowed_domains` like any URL. This
//! build of libgit2 speaks the local and `file://` transports; an http(s) or ssh remote is
//! refused with a clear error rather than half-supported.

use git2::{PushOptions, RemoteCallbacks, Repository};
use jig_model::ErrorCode;
use jig_policy::network::check_url;
use serde_json::json;

use super::integrate::{merge_into_head, rebase_head};
use super::{git_error, open, require_clean};
use crate::builtin::call::Call;
use jig_exec::{Output, ToolError};

pub(in crate::builtin) fn push(call: &Call) -> Result<Output, ToolError> {
    let repo = open(call)?;
    let name = call.opt_str("remote").unwrap_or("origin");
    // Seed 002 §7 `sec.git.clean_tree`: what is pushed is what was committed and checked.
    require_clean(&repo, "`git_push`", false)?;
    let mut remote = find_remote(call, &repo, name)?;
    let refspec = match call.opt_str("refspec") {
        Some(spec) => spec.to_owned(),
        None => {
            let head = repo.head().map_err(|e| git_error("HEAD", &e))?;
            let branch = head.name().ok().filter(|_| head.is_branch()).ok_or_else(|| {
                ToolError::new(ErrorCode::Git, "HEAD is detached: name a `refspec` to push")
            })?;
            format!("{branch}:{branch}")
        }
    };
    let refspec = if call.bool("force", false) {
        format!("+{}", refspec.trim_start_matches('+'))
    } else {
        refspec
    };
    let mut rejected = Vec::new();
    let mut callbacks = RemoteCallbacks::new();
    callbacks.push_update_reference(|reference, status| {
        if let Some(why) = status {
            rejected.push(format!("{reference}: {why}"));
        }
        Ok(())
    });
    let mut options = PushOptions::new();
    options.remote_callbacks(callbacks);
    remote
        .push(&[refspec.as_str()], Some(&mut options))
        .map_err(|e| git_error(&format!("push to `{name}`"), &e))?;
    drop(options);
    if !rejected.is_empty() {
        return Err(ToolError::new(
            ErrorCode::Git,
            format!("`{name}` rejected the push: {}", rejected.join("; ")),
        )
        .with_details(json!({ "rejected": rejected })));
    }
    Ok(Output::data(json!({ "pushed": true, "refspec": refspec })))
}

pub(in crate::builtin) fn pull(call: &Call) -> Result<Output, ToolError> {
    let repo = open(call)?;
    let name = call.opt_str("remote").unwrap_or("origin");
    require_clean(&repo, "`git_pull`", true)?;
    let head = repo.head().map_err(|e| git_error("HEAD", &e))?;
    let branch = head
        .shorthand()
        .ok()
        .filter(|_| head.is_branch())
        .ok_or_else(|| {
            ToolError::new(ErrorCode::Git, "HEAD is detached: check out a branch to pull into")
        })?
        .to_owned();
    let mut remote = find_remote(call, &repo, name)?;
    remote
        .fetch::<&str>(&[], None, None)
        .map_err(|e| git_error(&format!("fetch from `{name}`"), &e))?;
    let upstream = repo
        .branch_upstream_name(&format!("refs/heads/{branch}"))
        .ok()
        .and_then(|u| u.as_str().ok().map(str::to_owned))
        .unwrap_or_else(|| format!("refs/remotes/{name}/{branch}"));
    let theirs = repo
        .find_reference(&upstream)
        .and_then(|r| r.peel_to_commit())
        .map_err(|e| git_error(&format!("`{upstream}` after fetching"), &e))?;
    let outcome = if call.bool("rebase", false) {
        rebase_head(call, &repo, &theirs, false)?
    } else {
        let outcome = merge_into_head(call, &repo, &theirs, &upstream, false)?;
        if outcome["merged"] == false {
            return Err(ToolError::new(
                ErrorCode::Git,
                format!("pulling `{upstream}` conflicts; nothing was changed"),
            )
            .with_details(json!({ "conflicts": outcome["conflicts"] })));
        }
        outcome
    };
    let mut data = json!({ "pulled": true, "upstream": upstream });
    for key in ["commit", "fast_forward", "up_to_date", "applied"] {
        if let Some(value) = outcome.get(key) {
            data[key] = value.clone();
        }
    }
    Ok(Output::data(data))
}

/// The named remote, its URL checked: a network URL must be allowed by the policy.
fn find_remote<'r>(
    call: &Call,
    repo: &'r Repository,
    name: &str,
) -> Result<git2::Remote<'r>, ToolError> {
    let remote = repo.find_remote(name).map_err(|e| git_error(&format!("remote `{name}`"), &e))?;
    let url = remote.url().unwrap_or_default().to_owned();
    let network = &call.policy.config().network;
    let host_url = if url.starts_with("http://") || url.starts_with("https://") {
        Some(url.clone())
    } else if let Some(rest) = url.strip_prefix("ssh://").or_else(|| url.strip_prefix("git://")) {
        Some(format!("https://{}", rest.rsplit_once('@').map_or(rest, |(_, host)| host)))
    } else if let Some((host, _)) =
        url.split_once(':').filter(|(h, _)| !h.contains('/') && h.len() > 1)
    {
        // scp-like `user@host:path`
        Some(format!("https://{}/", host.rsplit_once('@').map_or(host, |(_, h)| h)))
    } else {
        None
    };
    if let Some(host_url) = host_url {
        check_url(&host_url, network).map_err(|d| {
            ToolError::new(ErrorCode::Policy, format!("remote `{name}` ({url}): {}", d.reason))
                .with_details(json!({ "rule": d.rule }))
        })?;
    }
    Ok(remote)
}
