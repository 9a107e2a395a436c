//! The chain's head as a C2SP `tlog-checkpoint` in a C2SP `signed-note`: the format Go's
//! checksum database and Sigstore's logs publish, so a witness or a monitor that already reads
//! those can keep Jig's heads too.
//!
//! The note's text is three lines: the origin (the log's name), the tree size (the head's seq)
//! and the root hash (the head's hash, base64), each ending in a newline. Then an empty line
//! and one signature line per signer: `— <key name> <base64(key hash ‖ signature)>`, where the
//! key hash is the first four bytes of SHA-256(name ‖ "\n" ‖ 0x01 ‖ public key) and the
//! Ed25519 signature is over the text. Jig's chain is a hash chain, not a Merkle tree: the
//! "root hash" is the hash of the last packet, which commits to every packet before it.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use jig_model::canonical::{hex, unhex};
use ring::signature::{ED25519, Ed25519KeyPair, KeyPair, UnparsedPublicKey};
use sha2::{Digest, Sha256};

use crate::signed_head::SignatureError;

/// The signature type byte of Ed25519 in signed notes.
const ED25519_TYPE: u8 = 0x01;
/// What starts a signature line (an em dash and a space).
const SIGNATURE_PREFIX: &str = "\u{2014} ";

/// A head as a checkpoint says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    /// The log's name: who keeps this chain (`config.audit.origin`).
    pub origin: String,
    /// The head's seq (the chain's size).
    pub size: i64,
    /// The head's hash, hex.
    pub hash: String,
}

/// Why a note was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NoteError {
    /// Not a signed note holding a checkpoint.
    #[error("not a checkpoint signed note: {0}")]
    Malformed(String),
    /// No signature line by the trusted key verifies.
    #[error("no signature in the note verifies with the key {0}")]
    Unsigned(String),
    /// The signing key is not usable.
    #[error(transparent)]
    Key(#[from] SignatureError),
}

impl Checkpoint {
    /// The note's text (the signed part).
    fn text(&self) -> String {
        let hash = unhex(&self.hash).unwrap_or_default();
        format!("{}\n{}\n{}\n", self.origin, self.size, STANDARD.encode(hash))
    }

    /// The signed note: the text, an empty line, and the signature of `seed_hex`'s key under
    /// the origin as the key's name.
    pub fn sign(&self, seed_hex: &str) -> Result<String, NoteError> {
        if self.origin.is_empty() || self.origin.contains(['\n', ' ', '+']) {
            return Err(NoteError::Malformed(format!(
                "the origin `{}` must be one word without `+`",
                self.origin
            )));
        }
        let seed = unhex(seed_hex).filter(|s| s.len() == 32).ok_or(SignatureError::BadKey)?;
        let pair =
            Ed25519KeyPair::from_seed_unchecked(&seed).map_err(|_| SignatureError::BadKey)?;
        let text = self.text();
        let mut blob = key_hash(&self.origin, pair.public_key().as_ref()).to_vec();
        blob.extend_from_slice(pair.sign(text.as_bytes()).as_ref());
        Ok(format!("{text}\n{SIGNATURE_PREFIX}{} {}\n", self.origin, STANDARD.encode(blob)))
    }

    /// Read a signed note's checkpoint, without checking any signature (to say early what a
    /// file holds; [`Checkpoint::open`] is what trusts it).
    pub fn parse(note: &str) -> Result<Self, NoteError> {
        Ok(split(note)?.0)
    }

    /// Read a signed note and check that `trusted` (a public key, hex) signed it. A note
    /// cannot vouch for its own key: without the project's key nothing is trusted.
    pub fn open(note: &str, trusted: &str) -> Result<Self, NoteError> {
        let (checkpoint, text, signatures) = split(note)?;
        let key = unhex(trusted).filter(|k| k.len() == 32).ok_or(SignatureError::BadKey)?;
        for line in signatures.lines().filter(|l| !l.is_empty()) {
            let malformed = || NoteError::Malformed(format!("the signature line `{line}`"));
            let rest = line.strip_prefix(SIGNATURE_PREFIX).ok_or_else(malformed)?;
            let (name, blob) = rest.rsplit_once(' ').ok_or_else(malformed)?;
            let blob = STANDARD.decode(blob).map_err(|_| malformed())?;
            let Some((hash, signature)) = blob.split_at_checked(4) else { continue };
            // Other signers (a witness's cosignature) may sign too: only the key matters.
            if hash == key_hash(name, &key)
                && UnparsedPublicKey::new(&ED25519, &key).verify(text.as_bytes(), signature).is_ok()
            {
                return Ok(checkpoint);
            }
        }
        Err(NoteError::Unsigned(trusted.trim().to_ascii_lowercase()))
    }
}

/// A note's checkpoint, its signed text and its signature lines.
fn split(note: &str) -> Result<(Checkpoint, String, &str), NoteError> {
    let bad = |why: &str| NoteError::Malformed(why.to_owned());
    let (text, signatures) =
        note.split_once("\n\n").ok_or_else(|| bad("no empty line before the signatures"))?;
    let text = format!("{text}\n");
    let mut lines = text.lines();
    let origin = lines.next().filter(|o| !o.is_empty()).ok_or_else(|| bad("no origin line"))?;
    let size = lines
        .next()
        .and_then(|s| s.parse::<i64>().ok())
        .filter(|s| *s >= 0)
        .ok_or_else(|| bad("the second line is not a tree size"))?;
    let hash = lines
        .next()
        .and_then(|h| STANDARD.decode(h).ok())
        .filter(|h| h.len() == 32)
        .ok_or_else(|| bad("the third line is not a base64 SHA-256 hash"))?;
    let hash = hex(&hash);
    Ok((Checkpoint { origin: origin.to_owned(), size, hash }, text, signatures))
}

/// The first four bytes of SHA-256(name ‖ "\n" ‖ 0x01 ‖ public key): which key a signature
/// line claims.
fn key_hash(name: &str, public_key: &[u8]) -> [u8; 4] {
    let mut digest = Sha256::new();
    digest.update(name.as_bytes());
    digest.update(b"\n");
    digest.update([ED25519_TYPE]);
    digest.update(public_key);
    let sum = digest.finalize();
    [sum[0], sum[1], sum[2], sum[3]]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signed_head::generate_key;

    /// The verifier key of the C2SP `signed-note` spec for `public_key_hex` under `name`:
    /// `<name>+<key hash, 8 hex digits>+<base64(0x01 ‖ public key)>`, as Go's `note` package reads it.
    fn verifier_key(name: &str, public_key_hex: &str) -> Result<String, SignatureError> {
        let key = unhex(public_key_hex).filter(|k| k.len() == 32).ok_or(SignatureError::BadKey)?;
        let hash = key_hash(name, &key);
        let mut typed = vec![ED25519_TYPE];
        typed.extend_from_slice(&key);
        Ok(format!("{name}+{}+{}", hex(&hash), STANDARD.encode(typed)))
    }

    fn head() -> Checkpoint {
        Checkpoint { origin: "jig.example/acme".to_owned(), size: 42, hash: "ab".repeat(32) }
    }

    #[test]
    fn a_note_opens_with_its_key_and_not_once_changed() {
        let (seed, public) = generate_key().expect("key");
        let note = head().sign(&seed).expect("sign");
        let lines: Vec<&str> = note.lines().collect();
        assert_eq!(lines[..4], ["jig.example/acme", "42", &STANDARD.encode([0xab; 32]), ""]);
        assert!(lines[4].starts_with("\u{2014} jig.example/acme "), "{note}");
        assert_eq!(Checkpoint::open(&note, &public).expect("opens"), head());
        assert_eq!(Checkpoint::parse(&note).expect("parses"), head());
        // Any change to the text, and another key, are refused.
        let moved = note.replacen("\n42\n", "\n41\n", 1);
        assert!(matches!(Checkpoint::open(&moved, &public), Err(NoteError::Unsigned(_))));
        let (_, other) = generate_key().expect("key");
        assert!(matches!(Checkpoint::open(&note, &other), Err(NoteError::Unsigned(_))));
        assert!(matches!(Checkpoint::open("x\n", &public), Err(NoteError::Malformed(_))));
        // A witness's cosignature beside Jig's does not get in the way.
        let (witness, _) = generate_key().expect("key");
        let cosigned = format!(
            "{note}{}",
            head().sign(&witness).expect("sign").split("\n\n").nth(1).expect("line")
        );
        assert_eq!(Checkpoint::open(&cosigned, &public).expect("opens"), head());
    }

    #[test]
    fn the_key_hash_is_the_one_go_computes() {
        // The vector of Go's golang.org/x/mod/sumdb/note documentation: the verifier key
        // `PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW` names this key.
        let key = STANDARD.decode("ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW").expect("b64");
        let public = hex(&key[1..]);
        assert_eq!(
            verifier_key("PeterNeumann", &public).expect("key"),
            "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
        );
    }
}
