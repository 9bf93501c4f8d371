//! Python's JSON text of floats and strings, written from Rust.
//!
//! A campaign keys a run by the SHA-256 of the canonical JSON of its
//! RunSpec, as Python's `json.dumps(obj, sort_keys=True, separators=(",",
//! ":"), allow_nan=False, ensure_ascii=True)` writes it. The bindings
//! (crates/tcplab-py/src/canon.rs) write that text from the Python objects
//! directly; these are the two pieces whose format is Python's own.

/// Python's `repr` of a finite float (`float_repr_style` "short"): the
/// shortest digits that read back to the same value, in fixed notation
/// when the decimal exponent is in [-4, 16), else as `d.ddde+XX`.
pub fn float_repr(x: f64, out: &mut String) {
    use std::fmt::Write;
    let mut s = String::with_capacity(32);
    let _ = write!(s, "{x:e}"); // shortest round-trip digits: "-1.2345e-7", "0e0"
    let (mant, exp) = s.split_once('e').expect("LowerExp has an exponent");
    let exp: i32 = exp.parse().expect("LowerExp exponent");
    let (neg, mant) = match mant.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mant),
    };
    let mut digits: String = mant.chars().filter(|c| *c != '.').collect();
    half_even(x, &mut digits, exp);
    let decpt = exp + 1; // value = 0.DIGITS x 10^decpt
    if neg {
        out.push('-');
    }
    if (-4 < decpt) && (decpt <= 16) {
        let n = digits.len() as i32;
        if decpt <= 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-decpt) as usize));
            out.push_str(&digits);
        } else if decpt >= n {
            out.push_str(&digits);
            out.extend(std::iter::repeat_n('0', (decpt - n) as usize));
            out.push_str(".0");
        } else {
            out.push_str(&digits[..decpt as usize]);
            out.push('.');
            out.push_str(&digits[decpt as usize..]);
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = decpt - 1;
        out.push('e');
        out.push(if e < 0 { '-' } else { '+' });
        let a = e.unsigned_abs();
        if a < 10 {
            out.push('0');
        }
        out.push_str(&a.to_string());
    }
}

/// When the value lies exactly halfway between two shortest candidates,
/// Rust's formatter takes the upper one and Python's the one whose last
/// digit is even: `digits` (Rust's, odd last digit) becomes the lower
/// candidate if that reads back to `x` too and `x` is exactly halfway.
fn half_even(x: f64, digits: &mut String, exp: i32) {
    let last = digits.as_bytes()[digits.len() - 1];
    if last.is_multiple_of(2) {
        return;
    }
    let mut low = digits.clone().into_bytes();
    *low.last_mut().unwrap() -= 1;
    let low = String::from_utf8(low).expect("ASCII digits");
    let cand = format!("{}.{}e{}", &low[..1], &low[1..], exp);
    if cand.parse::<f64>().map(f64::abs) != Ok(x.abs()) {
        return;
    }
    // exactly halfway: the exact expansion continues the lower candidate with 5 and then only zeros
    let exact = format!("{:.800e}", x.abs());
    let (m, e) = exact.split_once('e').expect("LowerExp has an exponent");
    if e.parse::<i32>() != Ok(exp) {
        return;
    }
    let m: Vec<u8> = m.bytes().filter(|c| *c != b'.').collect();
    let k = low.len();
    if &m[..k] == low.as_bytes() && m[k] == b'5' && m[k + 1..].iter().all(|&c| c == b'0') {
        *digits = low;
    }
}

/// A string as Python's JSON encoder writes it with `ensure_ascii=True`.
pub fn json_str(s: &str, out: &mut String) {
    out.push('"');
    if s.bytes().all(|b| (b' '..=b'~').contains(&b) && b != b'"' && b != b'\\') {
        out.push_str(s);
        out.push('"');
        return;
    }
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut buf = [0u16; 2];
                for u in c.encode_utf16(&mut buf) {
                    use std::fmt::Write;
                    let _ = write!(out, "\\u{u:04x}");
                }
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(x: f64) -> String {
        let mut s = String::new();
        float_repr(x, &mut s);
        s
    }

    #[test]
    fn floats_as_python_repr_writes_them() {
        // (values and texts from CPython 3.11's repr)
        for (x, want) in [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (0.1, "0.1"),
            (1e-4, "0.0001"),
            (1e-5, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (123456789012345678.0, "1.2345678901234568e+17"),
            (1e300, "1e+300"),
            (2.5e-300, "2.5e-300"),
            (10000000.0, "10000000.0"),
            (0.0025, "0.0025"),
            (-12.75, "-12.75"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            // exactly halfway between two shortest candidates: the even one, as Python
            (1059438285926254.25, "1059438285926254.2"),
            (26363981746409.3125, "26363981746409.312"),
            (0.25, "0.25"),
        ] {
            assert_eq!(r(x), want, "{x:?}");
        }
    }

    #[test]
    fn strings_as_python_escapes_them() {
        let mut s = String::new();
        json_str("a\"b\\c\n\t\u{7f}é😀\u{1}", &mut s);
        assert_eq!(s, r#""a\"b\\c\n\t\u007f\u00e9\ud83d\ude00\u0001""#);
    }
}
