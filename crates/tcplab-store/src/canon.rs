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
    if x == x.trunc() && x.abs() < 1e16 {
        // an integer below 10^16 (most of a RunSpec's floats: sizes, rates, counts): its digits and ".0"
        if x == 0.0 && x.is_sign_negative() {
            out.push('-');
        }
        int_text(x as i64, out);
        out.push_str(".0");
        return;
    }
    // shortest round-trip digits (Ryu): "1e16", "1.5e-7", "100.0", "0.0025"
    let mut rb = ryu::Buffer::new();
    let s = rb.format_finite(x).as_bytes();
    let (body, e_given) = match s.iter().position(|&c| c == b'e') {
        Some(p) => {
            (&s[..p], std::str::from_utf8(&s[p + 1..]).ok().and_then(|e| e.parse::<i32>().ok()).expect("Ryu exponent"))
        }
        None => (s, 0),
    };
    // digits without sign, point and leading zeros; exp: the decimal exponent of the first digit
    let mut digits = [0u8; 24];
    let (mut n, mut point, mut first) = (0usize, None::<i32>, None::<i32>);
    for (i, &c) in body.iter().filter(|&&c| c != b'-').enumerate() {
        if c == b'.' {
            point = Some(i as i32);
        } else if c != b'0' || first.is_some() {
            first.get_or_insert(i as i32);
            digits[n] = c;
            n += 1;
        }
    }
    let int_len = point.unwrap_or(body.iter().filter(|&&c| c != b'-').count() as i32);
    let exp = match first {
        None => {
            // zero
            digits[0] = b'0';
            n = 1;
            0
        }
        Some(f) => {
            while n > 1 && digits[n - 1] == b'0' {
                n -= 1; // ("100.0": digits 1, exponent 2)
            }
            let pos = if point.is_some_and(|p| f > p) { f - 1 } else { f }; // index among the digits
            int_len - 1 - pos + e_given
        }
    };
    if tie_possible(x) {
        half_even(x, &mut digits[..n], exp);
    }
    let digits = std::str::from_utf8(&digits[..n]).expect("ASCII digits");
    let decpt = exp + 1; // value = 0.DIGITS x 10^decpt
    if x.is_sign_negative() {
        out.push('-');
    }
    if (-4 < decpt) && (decpt <= 16) {
        let n = n as i32;
        if decpt <= 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-decpt) as usize));
            out.push_str(digits);
        } else if decpt >= n {
            out.push_str(digits);
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
        use std::fmt::Write as _;
        let _ = write!(out, "{a}");
    }
}

/// The decimal text of an integer, as Python writes it.
pub fn int_text(v: i64, out: &mut String) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let mut u = v.unsigned_abs();
    loop {
        i -= 1;
        buf[i] = b'0' + (u % 10) as u8;
        u /= 10;
        if u == 0 {
            break;
        }
    }
    if v < 0 {
        out.push('-');
    }
    out.push_str(std::str::from_utf8(&buf[i..]).expect("ASCII digits"));
}

/// Whether `x` can lie exactly halfway between two 17-digit-or-shorter
/// decimals: only if its exact decimal expansion has at most 18
/// significant digits. `x = m 2^e` (m odd) has those of `m 5^-e` when
/// e < 0, so not when log10(m) + 0.699 (-e) is over 19; an integer below
/// 10^16 is its own shortest repr (no tie).
fn tie_possible(x: f64) -> bool {
    let bits = x.abs().to_bits();
    let (be, frac) = ((bits >> 52) as i32, bits & ((1u64 << 52) - 1));
    if be == 0 && frac == 0 {
        return false;
    }
    let (mut m, mut e) = if be == 0 { (frac, -1074) } else { (frac | (1u64 << 52), be - 1075) };
    let tz = m.trailing_zeros();
    m >>= tz;
    e += tz as i32;
    if e >= 0 {
        return x.abs() >= 1e16;
    }
    let mbits = 64 - m.leading_zeros() as i32;
    (mbits - 1) as f64 * std::f64::consts::LOG10_2 + (-e) as f64 * (1.0 - std::f64::consts::LOG10_2) <= 19.0
}

/// When the value lies exactly halfway between two shortest candidates,
/// Rust's formatter takes the upper one and Python's the one whose last
/// digit is even: `digits` (Rust's, odd last digit) becomes the lower
/// candidate if that reads back to `x` too and `x` is exactly halfway.
fn half_even(x: f64, digits: &mut [u8], exp: i32) {
    let k = digits.len();
    if digits[k - 1].is_multiple_of(2) {
        return;
    }
    let mut low = digits.to_vec();
    low[k - 1] -= 1;
    let low_s = std::str::from_utf8(&low).expect("ASCII digits");
    let cand = format!("{}.{}e{}", &low_s[..1], &low_s[1..], exp);
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
    if m[..k] == low[..] && m[k] == b'5' && m[k + 1..].iter().all(|&c| c == b'0') {
        digits.copy_from_slice(&low);
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
    // Two literals are written out exactly (they are halfway cases whose
    // shortest form would hide what is tested), which this lint flags.
    #[allow(clippy::excessive_precision)]
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
            (1.5e300, "1.5e+300"),
            (-2.5e-7, "-2.5e-07"),
            // integers below 10^16 (written by the integer path), beyond 2^53 where doubles are 2 apart
            (1500.0, "1500.0"),
            (-3.0, "-3.0"),
            (4503599627370497.0, "4503599627370497.0"),
            (9007199254740992.0, "9007199254740992.0"),
            (9007199254740994.0, "9007199254740994.0"),
            (-9007199254740990.0, "-9007199254740990.0"),
            (9999999999999998.0, "9999999999999998.0"),
        ] {
            assert_eq!(r(x), want, "{x:?}");
        }
    }

    #[test]
    fn integers_as_python_writes_them() {
        for (v, want) in
            [(0i64, "0"), (-1, "-1"), (42, "42"), (i64::MAX, "9223372036854775807"), (i64::MIN, "-9223372036854775808")]
        {
            let mut s = String::new();
            int_text(v, &mut s);
            assert_eq!(s, want);
        }
    }

    #[test]
    fn strings_as_python_escapes_them() {
        let mut s = String::new();
        json_str("a\"b\\c\n\t\u{7f}é😀\u{1}", &mut s);
        assert_eq!(s, r#""a\"b\\c\n\t\u007f\u00e9\ud83d\ude00\u0001""#);
    }
}
