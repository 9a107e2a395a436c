//! Reading back what runs produced: the outputs and logs stored by content under the
//! project's `.jig/artifacts/sha256/`, for the surfaces that show or save them.

use jig_model::canonical::Sha256Hash;

use crate::{Engine, EngineError};

impl Engine {
    /// The bytes of the artifact with this SHA-256 (hex), checked against it: a file changed
    /// on disk since it was stored is refused, not served as what the run produced.
    pub async fn artifact(&self, sha256: &str) -> Result<Vec<u8>, EngineError> {
        let path = jig_exec::rundir::artifact_path(self.workspace.root(), sha256)
            .ok_or_else(|| EngineError::BadArtifact(sha256.to_owned()))?;
        let hash = sha256.to_owned();
        tokio::task::spawn_blocking(move || match fs_err::read(&path) {
            Ok(bytes) if Sha256Hash::of_bytes(&bytes).to_hex() == hash => Ok(bytes),
            Ok(_) => Err(EngineError::ArtifactChanged(hash)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(EngineError::NoArtifact(hash))
            }
            Err(e) => Err(EngineError::ArtifactIo { sha256: hash, source: e }),
        })
        .await
        .map_err(|e| EngineError::ArtifactIo {
            sha256: sha256.to_owned(),
            source: std::io::Error::other(e),
        })?
    }
}
