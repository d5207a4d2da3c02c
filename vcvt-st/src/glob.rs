//! Glob matching of tensor names: `*` matches any run of characters (dots included), `?`
//! one character, everything else itself (ASCII letters in either case unless matching is
//! case-sensitive).

/// Whether `name` matches `pattern`, case-sensitively.
#[cfg(test)]
pub(crate) fn matches(pattern: &str, name: &str) -> bool {
    matches_case(pattern, name, true)
}

/// Whether `name` matches `pattern`; with `case_sensitive` false, ASCII letters match
/// either case (`*norm*` matches `LayerNorm`).
pub(crate) fn matches_case(pattern: &str, name: &str, case_sensitive: bool) -> bool {
    let fold = |s: &str| -> Vec<char> {
        if case_sensitive {
            s.chars().collect()
        } else {
            s.chars().map(|c| c.to_ascii_lowercase()).collect()
        }
    };
    let (p, n) = (fold(pattern), fold(name));
    // Iterative matching with backtracking to the last `*`.
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        if i < p.len() && (p[i] == '?' || p[i] == n[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    while i < p.len() && p[i] == '*' {
        i += 1;
    }
    i == p.len()
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn globs() {
        assert!(matches("*norm*", "model.layers.0.input_layernorm.weight"));
        assert!(matches("*.bias", "a.b.bias"));
        assert!(!matches("*.bias", "a.bias.weight"));
        assert!(matches("lm_head*", "lm_head.weight"));
        assert!(matches(
            "model.layers.?.mlp*",
            "model.layers.3.mlp.up.weight"
        ));
        assert!(!matches(
            "model.layers.?.mlp*",
            "model.layers.13.mlp.up.weight"
        ));
        assert!(matches("*", ""));
        assert!(matches("a*b*c", "aXXbYYc"));
        assert!(!matches("a*b*c", "aXXbYY"));
    }

    #[test]
    fn case() {
        use super::matches_case;
        let n = "encoder.layer.0.attention.output.LayerNorm.weight";
        assert!(!matches("*norm*", n));
        assert!(matches_case("*norm*", n, false));
        assert!(!matches_case("*norm*", n, true));
        assert!(matches_case("*LAYERNORM*", n, false));
        assert!(!matches_case("*norm?", n, false));
    }
}
