//! Finds the line and column of a field in TOML text, for errors the core reports
//! without a position (checks made after parsing, such as an unknown preset).

use toml::de::{DeTable, DeValue};

enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// Splits "tasks[2].program[0].loop" into keys and indices; None if malformed.
fn segments(field: &str) -> Option<Vec<Seg<'_>>> {
    let mut out = Vec::new();
    for part in field.split('.') {
        let (key, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !key.is_empty() {
            out.push(Seg::Key(key));
        }
        while let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            out.push(Seg::Index(r[..end].parse().ok()?));
            rest = &r[end + 1..];
        }
        if !rest.is_empty() {
            return None;
        }
    }
    Some(out)
}

/// Returns the 1-based (line, column) of the value at dotted path `field`, if it exists.
pub fn toml_field(text: &str, field: &str) -> Option<(usize, usize)> {
    if field.is_empty() {
        return None;
    }
    let segs = segments(field)?;
    let root = DeTable::parse(text).ok()?;
    let mut table: &DeTable<'_> = root.get_ref();
    let mut current: Option<(&DeValue<'_>, std::ops::Range<usize>)> = None;
    for seg in segs {
        let (value, span) = match (seg, current.as_ref().map(|c| c.0)) {
            (Seg::Key(k), None) | (Seg::Key(k), Some(DeValue::Table(_))) => {
                let (_, v) = table.iter().find(|(key, _)| key.get_ref().as_ref() == k)?;
                (v.get_ref(), v.span())
            }
            (Seg::Index(i), Some(DeValue::Array(a))) => {
                let v = a.get(i)?;
                (v.get_ref(), v.span())
            }
            _ => return None,
        };
        if let DeValue::Table(t) = value {
            table = t;
        }
        current = Some((value, span));
    }
    let start = current?.1.start.min(text.len());
    let before = &text[..start];
    let line = before.matches('\n').count() + 1;
    let col = before.chars().rev().take_while(|&c| c != '\n').count() + 1;
    Some((line, col))
}
