//! Masking secrets for display: never more than the last 4 characters, and only when the
//! secret is long enough that they give little away.

/// What a short (or empty) secret is shown as.
pub const MASK: &str = "••••";

/// Shows a secret to people without revealing it.
///
/// - 24 characters or more: the first 3 and the last 4 (`sk-…wxyz`): key prefixes such as
///   `sk-` tell people which key it is, and at least 17 characters stay hidden.
/// - 12 to 23 characters: the last 4 only (`…wxyz`).
/// - shorter: [`MASK`], with nothing of the secret (not even its length).
///
/// Characters, not bytes, are counted, so a multi-byte secret is never cut inside a character.
pub fn mask(secret: &str) -> String {
    let chars: Vec<char> = secret.chars().collect();
    let n = chars.len();
    let tail = |k: usize| chars.iter().skip(n.saturating_sub(k)).collect::<String>();
    if n >= 24 {
        let head: String = chars.iter().take(3).collect();
        format!("{head}…{}", tail(4))
    } else if n >= 12 {
        format!("…{}", tail(4))
    } else {
        MASK.to_owned()
    }
}
