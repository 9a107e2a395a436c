//! The workspace's git repository, opened for the git built-ins and for the rules that read
//! what changed. libgit2 never searches upwards: the workspace root must be the repository's top.

use git2::{Repository, RepositoryOpenFlags};
use jig_exec::ToolError;
use jig_model::ErrorCode;

use super::call::Call;

/// The repository whose working tree is the workspace root.
pub(super) fn open(call: &Call) -> Result<Repository, ToolError> {
    let root = call.workspace.root();
    let repo = Repository::open_ext(
        root,
        RepositoryOpenFlags::NO_SEARCH,
        std::iter::empty::<&std::ffi::OsStr>(),
    )
    .map_err(|e| {
        ToolError::new(
            ErrorCode::Git,
            format!(
                "the workspace `{}` is not the top of a git repository: {}",
                root.display(),
                e.message()
            ),
        )
    })?;
    if repo.is_bare() {
        return Err(ToolError::new(ErrorCode::Git, "the workspace is a bare repository"));
    }
    Ok(repo)
}
