//! JSON as rt-app's users write it: `/* */` and `//` comments, trailing commas, and
//! duplicate keys kept in order (rt-app's `workgen` accepts them and renames them;
//! key order is the order of events).
//!
//! Mirrors: scheduler-tools/rt-app doc/workgen (`check_unikid_json`, comment
//! stripping) and the json-c parser rt-app links against.
//! Model: a small recursive-descent parser keeping each value's line for messages.

use super::ImportError;

/// A parsed value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// null.
    Null,
    /// true/false.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A number with a fraction or exponent.
    Float(f64),
    /// A string.
    Str(String),
    /// An array.
    Array(Vec<Node>),
    /// An object: (key, value) in file order, duplicates kept.
    Object(Vec<(String, Node)>),
}

/// A value and the line it starts on.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// 1-based line.
    pub line: usize,
    /// The value.
    pub value: Value,
}

impl Node {
    /// The entries if this is an object.
    pub fn entries(&self) -> Option<&[(String, Node)]> {
        match &self.value {
            Value::Object(v) => Some(v),
            _ => None,
        }
    }

    /// The last value of `key` in an object.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entries()?.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// A short name of the value's type, for messages.
    pub fn kind(&self) -> &'static str {
        match self.value {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Int(_) | Value::Float(_) => "a number",
            Value::Str(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }

    /// As strict JSON (for duplicate keys the last wins).
    pub fn to_json(&self) -> serde_json::Value {
        match &self.value {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => (*b).into(),
            Value::Int(i) => (*i).into(),
            Value::Float(f) => serde_json::Number::from_f64(*f).map_or(serde_json::Value::Null, serde_json::Value::Number),
            Value::Str(s) => s.clone().into(),
            Value::Array(v) => v.iter().map(Node::to_json).collect(),
            Value::Object(v) => v.iter().map(|(k, n)| (k.clone(), n.to_json())).collect::<serde_json::Map<_, _>>().into(),
        }
    }
}

/// Parses lenient JSON text.
pub fn parse(text: &str, file: &str) -> Result<Node, ImportError> {
    let mut p = Parser { s: text.as_bytes(), i: 0, line: 1, file, depth: 0 };
    p.skip_ws()?;
    let v = p.value()?;
    p.skip_ws()?;
    if p.i < p.s.len() {
        return Err(p.err("expected the end of the file after the top-level value"));
    }
    Ok(v)
}

/// Nesting deeper than this is an error, not a stack overflow.
const MAX_DEPTH: usize = 128;

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    line: usize,
    file: &'a str,
    depth: usize,
}

impl Parser<'_> {
    fn err(&self, msg: impl Into<String>) -> ImportError {
        ImportError::new(self.file, self.line, "json", msg)
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn bump(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        if c == b'\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn skip_ws(&mut self) -> Result<(), ImportError> {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\r' | b'\n') => {
                    self.bump();
                }
                Some(b'/') if self.s.get(self.i + 1) == Some(&b'/') => {
                    while !matches!(self.peek(), None | Some(b'\n')) {
                        self.bump();
                    }
                }
                Some(b'/') if self.s.get(self.i + 1) == Some(&b'*') => {
                    let start = self.line;
                    self.i += 2;
                    loop {
                        match self.bump() {
                            None => return Err(ImportError::new(self.file, start, "json", "comment /* not closed")),
                            Some(b'*') if self.peek() == Some(b'/') => {
                                self.i += 1;
                                break;
                            }
                            _ => {}
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self) -> Result<Node, ImportError> {
        let line = self.line;
        if matches!(self.peek(), Some(b'{' | b'[')) {
            self.depth += 1;
            if self.depth > MAX_DEPTH {
                return Err(self.err(format!("nested deeper than {MAX_DEPTH} levels")));
            }
        }
        let value = match self.peek() {
            None => return Err(self.err("unexpected end of file, expected a value")),
            Some(b'{') => {
                let v = self.object()?;
                self.depth -= 1;
                v
            }
            Some(b'[') => {
                let v = self.array()?;
                self.depth -= 1;
                v
            }
            Some(b'"') => Value::Str(self.string()?),
            Some(b't') => self.word("true", Value::Bool(true))?,
            Some(b'f') => self.word("false", Value::Bool(false))?,
            Some(b'n') => self.word("null", Value::Null)?,
            Some(c) if c == b'-' || c.is_ascii_digit() => self.number()?,
            Some(c) => return Err(self.err(format!("unexpected character '{}', expected a value", c as char))),
        };
        Ok(Node { line, value })
    }

    fn word(&mut self, w: &str, v: Value) -> Result<Value, ImportError> {
        if self.s[self.i..].starts_with(w.as_bytes()) {
            self.i += w.len();
            Ok(v)
        } else {
            Err(self.err("unexpected word, expected a value (strings need double quotes)"))
        }
    }

    fn number(&mut self) -> Result<Value, ImportError> {
        let start = self.i;
        while matches!(self.peek(), Some(c) if c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.' | b'e' | b'E')) {
            self.i += 1;
        }
        let t = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
        if let Ok(i) = t.parse::<i64>() {
            return Ok(Value::Int(i));
        }
        t.parse::<f64>().map(Value::Float).map_err(|_| self.err(format!("'{t}' is not a number")))
    }

    fn string(&mut self) -> Result<String, ImportError> {
        let start = self.line;
        self.i += 1;
        let mut out = Vec::new();
        loop {
            match self.bump() {
                None | Some(b'\n') => return Err(ImportError::new(self.file, start, "json", "string not closed (missing \")")),
                Some(b'"') => break,
                Some(b'\\') => match self.bump() {
                    Some(b'n') => out.push(b'\n'),
                    Some(b't') => out.push(b'\t'),
                    Some(b'r') => out.push(b'\r'),
                    Some(b'b') => out.push(8),
                    Some(b'f') => out.push(12),
                    Some(b'u') => {
                        let hex = self.s.get(self.i..self.i + 4).and_then(|h| std::str::from_utf8(h).ok());
                        let c = hex.and_then(|h| u32::from_str_radix(h, 16).ok()).and_then(char::from_u32);
                        let c = c.ok_or_else(|| self.err("bad \\u escape"))?;
                        self.i += 4;
                        out.extend_from_slice(c.to_string().as_bytes());
                    }
                    Some(c) => out.push(c),
                    None => return Err(self.err("string not closed")),
                },
                Some(c) => out.push(c),
            }
        }
        String::from_utf8(out).map_err(|_| self.err("string is not UTF-8"))
    }

    fn array(&mut self) -> Result<Value, ImportError> {
        self.bump();
        let mut v = Vec::new();
        loop {
            self.skip_ws()?;
            if self.peek() == Some(b']') {
                self.bump();
                return Ok(Value::Array(v));
            }
            v.push(self.value()?);
            self.skip_ws()?;
            match self.bump() {
                Some(b',') => {}
                Some(b']') => return Ok(Value::Array(v)),
                _ => return Err(self.err("expected ',' or ']' in an array")),
            }
        }
    }

    fn object(&mut self) -> Result<Value, ImportError> {
        self.bump();
        let mut v = Vec::new();
        loop {
            self.skip_ws()?;
            match self.peek() {
                Some(b'}') => {
                    self.bump();
                    return Ok(Value::Object(v));
                }
                Some(b'"') => {}
                _ => return Err(self.err("expected a \"key\" or '}' in an object")),
            }
            let key = self.string()?;
            self.skip_ws()?;
            if self.bump() != Some(b':') {
                return Err(self.err(format!("expected ':' after the key \"{key}\"")));
            }
            self.skip_ws()?;
            v.push((key, self.value()?));
            self.skip_ws()?;
            match self.bump() {
                Some(b',') => {}
                Some(b'}') => return Ok(Value::Object(v)),
                _ => return Err(self.err("expected ',' or '}' in an object (a missing comma?)")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_trailing_commas_and_duplicate_keys() {
        let n = parse("{ /* c */ \"a\": 1, // x\n \"b\": [1, 2,], \"a\": 2.5, }", "f").unwrap();
        let e = n.entries().unwrap();
        assert_eq!(e.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(), ["a", "b", "a"]);
        assert_eq!(n.get("a").unwrap().value, Value::Float(2.5));
        assert_eq!(e[1].1.line, 2);
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse("{\n \"a\": 1\n \"b\": 2 }", "w.json").unwrap_err();
        assert_eq!(e.to_string(), "w.json:3: json: expected ',' or '}' in an object (a missing comma?)");
    }
}
