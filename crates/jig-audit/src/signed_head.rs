//! Signed chain heads: `jig audit head --sign` exports the head (seq, hash) signed with an
//! Ed25519 key, and `jig audit verify --expect` checks a head kept elsewhere. A hash chain alone
//! can be rewritten by anyone who can write the database (every hash can be recomputed); a head
//! signed with a key the writer of the database does not hold cannot.
//!
//! The signed message is `jig-audit-head/v1\n<seq>\n<hash>\n`. Keys are 32-byte seeds, stored as
//! 64 hexadecimal digits; public keys are 64 hexadecimal digits.

use jig_model::canonical::{hex, unhex};
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{ED25519, Ed25519KeyPair, KeyPair, UnparsedPublicKey};
use serde::{Deserialize, Serialize};

/// A head with its signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignedHead {
    /// The last seq of the chain.
    pub seq: i64,
    /// Its hash.
    pub hash: String,
    /// The signer's public key (hex).
    pub public_key: String,
    /// The Ed25519 signature of the message (hex).
    pub signature: String,
    /// The same head as a C2SP `tlog-checkpoint` signed note by the same key
    /// ([`crate::checkpoint`]), for witnesses and monitors that read that format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<String>,
}

/// Why a key or a signed head was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SignatureError {
    /// The key is not 64 hexadecimal digits of a valid seed.
    #[error("the signing key is not 64 hexadecimal digits of an Ed25519 seed")]
    BadKey,
    /// The signature does not verify.
    #[error("the signature of head {seq} does not verify with key {public_key}")]
    BadSignature {
        /// The head's seq.
        seq: i64,
        /// The key it claims.
        public_key: String,
    },
    /// Signed with another key than the trusted one.
    #[error("the head is signed with key {found}, not with the trusted key {trusted}")]
    OtherKey {
        /// The key it was signed with.
        found: String,
        /// The key the project trusts.
        trusted: String,
    },
    /// The system's random source failed.
    #[error("no randomness for a new key")]
    Random,
}

fn message(seq: i64, hash: &str) -> Vec<u8> {
    format!("jig-audit-head/v1\n{seq}\n{hash}\n").into_bytes()
}

fn key_pair(seed_hex: &str) -> Result<Ed25519KeyPair, SignatureError> {
    let seed = unhex(seed_hex).filter(|s| s.len() == 32).ok_or(SignatureError::BadKey)?;
    Ed25519KeyPair::from_seed_unchecked(&seed).map_err(|_| SignatureError::BadKey)
}

/// A new signing key (seed, hex) and its public key (hex).
pub fn generate_key() -> Result<(String, String), SignatureError> {
    let mut seed = [0u8; 32];
    SystemRandom::new().fill(&mut seed).map_err(|_| SignatureError::Random)?;
    let seed = hex(&seed);
    let public = public_key(&seed)?;
    Ok((seed, public))
}

/// The public key (hex) of a signing key (seed, hex).
pub fn public_key(seed_hex: &str) -> Result<String, SignatureError> {
    Ok(hex(key_pair(seed_hex)?.public_key().as_ref()))
}

impl SignedHead {
    /// Sign `(seq, hash)` with the key `seed_hex`.
    pub fn sign(seq: i64, hash: &str, seed_hex: &str) -> Result<Self, SignatureError> {
        let pair = key_pair(seed_hex)?;
        Ok(Self {
            seq,
            hash: hash.to_owned(),
            public_key: hex(pair.public_key().as_ref()),
            signature: hex(pair.sign(&message(seq, hash)).as_ref()),
            checkpoint: None,
        })
    }

    /// Check the signature, and that it was made with `trusted` (hex) when given.
    pub fn check(&self, trusted: Option<&str>) -> Result<(), SignatureError> {
        if let Some(trusted) = trusted
            && !trusted.trim().eq_ignore_ascii_case(&self.public_key)
        {
            return Err(SignatureError::OtherKey {
                found: self.public_key.clone(),
                trusted: trusted.trim().to_owned(),
            });
        }
        let bad =
            || SignatureError::BadSignature { seq: self.seq, public_key: self.public_key.clone() };
        let key = unhex(&self.public_key).ok_or_else(bad)?;
        let signature = unhex(&self.signature).ok_or_else(bad)?;
        UnparsedPublicKey::new(&ED25519, key)
            .verify(&message(self.seq, &self.hash), &signature)
            .map_err(|_| bad())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signed_head_verifies_and_any_change_does_not() {
        let (seed, public) = generate_key().expect("key");
        let head = SignedHead::sign(42, &"ab".repeat(32), &seed).expect("sign");
        assert_eq!(head.public_key, public);
        head.check(Some(&public)).expect("verifies");
        head.check(None).expect("verifies without a trusted key");
        let mut moved = head.clone();
        moved.seq = 41;
        assert!(matches!(moved.check(Some(&public)), Err(SignatureError::BadSignature { .. })));
        let mut rewritten = head;
        rewritten.hash = "cd".repeat(32);
        assert!(rewritten.check(None).is_err());
        let (other_seed, _) = generate_key().expect("key");
        let forged = SignedHead::sign(42, &"ab".repeat(32), &other_seed).expect("sign");
        assert!(matches!(forged.check(Some(&public)), Err(SignatureError::OtherKey { .. })));
        assert_eq!(public_key("zz"), Err(SignatureError::BadKey));
    }
}
