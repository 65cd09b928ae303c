//! Auth tokens: 256 bits from the OS CSPRNG, shown once, stored as SHA-256, compared in constant time.

use rand::TryRngCore;
use rand::rngs::OsRng;
use secrecy::{ExposeSecret, SecretString};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// A fresh token: 32 random bytes, hex-encoded.
pub fn issue() -> anyhow::Result<SecretString> {
    let mut bytes = [0u8; 32];
    OsRng
        .try_fill_bytes(&mut bytes)
        .map_err(|error| anyhow::anyhow!("the OS random source failed: {error}"))?;
    Ok(SecretString::from(hex::encode(bytes)))
}

/// What the database keeps instead of the token.
pub fn hash(token: &SecretString) -> [u8; 32] {
    Sha256::digest(token.expose_secret().as_bytes()).into()
}

/// Whether `presented` is the token whose hash is `stored`, without an early exit on the first
/// differing byte.
pub fn matches(presented: &SecretString, stored: &[u8]) -> bool {
    hash(presented).ct_eq(stored).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_256_bit_hex_and_differ() {
        let (first, second) = (issue().expect("token"), issue().expect("token"));
        assert_eq!(first.expose_secret().len(), 64);
        assert!(first.expose_secret().bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(first.expose_secret(), second.expose_secret());
    }

    #[test]
    fn only_the_issued_token_matches_its_hash() {
        let token = issue().expect("token");
        let stored = hash(&token);
        assert!(matches(&token, &stored));
        assert!(!matches(&SecretString::from("guess".to_owned()), &stored));
        assert!(!matches(&token, &stored[..31]));
    }
}
