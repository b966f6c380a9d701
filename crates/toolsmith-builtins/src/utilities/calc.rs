//! A small arithmetic expression evaluator: a tokenizer and a recursive-descent parser that
//! evaluates as it parses. Nothing is ever handed to an interpreter.
//!
//! Grammar (lowest precedence first):
//!
//! ```text
//! expr    := term (('+' | '-') term)*
//! term    := unary (('*' | '/' | '%') unary | '%' 'of' unary)*   x% of y = x / 100 * y
//! unary   := ('+' | '-') unary | power
//! power   := primary ('^' unary)?            right-associative: 2^3^2 = 2^9
//! primary := number | constant | function '(' expr (',' expr)* ')' | '(' expr ')'
//! ```
//!
//! `-2^2` is `-(2^2)`, as in mathematics. Input is capped at [`MAX_LEN`] characters and
//! nesting (parentheses, function calls, prefix signs, powers) at [`MAX_DEPTH`] levels; the
//! depth is checked before every recursion, so no input can overflow the stack.

use std::fmt;

/// Longest accepted expression, in characters.
pub const MAX_LEN: usize = 1000;
/// Deepest accepted nesting.
pub const MAX_DEPTH: usize = 64;

/// Why an expression could not be evaluated. Positions are 0-based character offsets.
#[derive(Debug, Clone, PartialEq)]
pub enum CalcError {
    Empty,
    TooLong {
        len: usize,
    },
    TooDeep,
    UnexpectedChar {
        ch: char,
        pos: usize,
    },
    BadNumber {
        text: String,
        pos: usize,
    },
    UnknownIdentifier {
        name: String,
        pos: usize,
    },
    UnexpectedToken {
        found: String,
        pos: usize,
    },
    UnexpectedEnd,
    UnclosedParen {
        pos: usize,
    },
    UnmatchedClose {
        pos: usize,
    },
    ExpectedParen {
        name: String,
        pos: usize,
    },
    Arity {
        name: String,
        expected: &'static str,
        found: usize,
    },
    DivisionByZero,
    NotFinite {
        what: String,
    },
}

impl fmt::Display for CalcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CalcError::Empty => f.write_str("the expression is empty"),
            CalcError::TooLong { len } => write!(
                f,
                "the expression is {len} characters long; the limit is {MAX_LEN}"
            ),
            CalcError::TooDeep => write!(
                f,
                "the expression is nested too deeply (limit {MAX_DEPTH} levels)"
            ),
            CalcError::UnexpectedChar { ch, pos } => {
                write!(f, "unexpected character '{ch}' at position {pos}")
            }
            CalcError::BadNumber { text, pos } => {
                write!(f, "invalid number '{text}' at position {pos}")
            }
            CalcError::UnknownIdentifier { name, pos } => write!(
                f,
                "unknown identifier '{name}' at position {pos} (constants: pi, e; functions: {})",
                FUNCTIONS.join(", ")
            ),
            CalcError::UnexpectedToken { found, pos } => {
                write!(f, "unexpected '{found}' at position {pos}")
            }
            CalcError::UnexpectedEnd => f.write_str("the expression ends too early"),
            CalcError::UnclosedParen { pos } => {
                write!(
                    f,
                    "the parenthesis opened at position {pos} is never closed"
                )
            }
            CalcError::UnmatchedClose { pos } => {
                write!(f, "unmatched ')' at position {pos}")
            }
            CalcError::ExpectedParen { name, pos } => {
                write!(
                    f,
                    "function '{name}' must be followed by '(' (position {pos})"
                )
            }
            CalcError::Arity {
                name,
                expected,
                found,
            } => write!(
                f,
                "function '{name}' takes {expected}, but was given {found}"
            ),
            CalcError::DivisionByZero => f.write_str("division by zero"),
            CalcError::NotFinite { what } => {
                write!(f, "{what} is not a finite number")
            }
        }
    }
}

impl std::error::Error for CalcError {}

const FUNCTIONS: [&str; 17] = [
    "sqrt", "abs", "sin", "cos", "tan", "asin", "acos", "atan", "ln", "log", "log2", "exp",
    "floor", "ceil", "round", "min", "max",
];

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(f64),
    Ident(String),
    Op(char),
    LParen,
    RParen,
    Comma,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Num(n) => write!(f, "{n}"),
            Tok::Ident(s) => f.write_str(s),
            Tok::Op(c) => write!(f, "{c}"),
            Tok::LParen => f.write_str("("),
            Tok::RParen => f.write_str(")"),
            Tok::Comma => f.write_str(","),
        }
    }
}

/// Evaluates `input`.
pub fn evaluate(input: &str) -> Result<f64, CalcError> {
    let len = input.chars().count();
    if len > MAX_LEN {
        return Err(CalcError::TooLong { len });
    }
    let tokens = tokenize(input)?;
    if tokens.is_empty() {
        return Err(CalcError::Empty);
    }
    let mut parser = Parser {
        tokens,
        at: 0,
        depth: 0,
    };
    let value = parser.expr()?;
    if let Some((tok, pos)) = parser.tokens.get(parser.at) {
        return Err(match tok {
            Tok::RParen => CalcError::UnmatchedClose { pos: *pos },
            _ => CalcError::UnexpectedToken {
                found: tok.to_string(),
                pos: *pos,
            },
        });
    }
    let value = finite(value, "the result")?;
    // `-0` is an artefact of floating point, not an answer anyone wants.
    Ok(if value == 0.0 { 0.0 } else { value })
}

fn tokenize(input: &str) -> Result<Vec<(Tok, usize)>, CalcError> {
    let chars: Vec<char> = input.chars().collect();
    let mut tokens = Vec::new();
    let at = |k: usize| chars.get(k).copied();
    let mut i = 0;
    while let Some(c) = at(i) {
        let start = i;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let tok = if c.is_ascii_digit() || c == '.' {
            while at(i).is_some_and(|c| c.is_ascii_digit() || c == '.') {
                i += 1;
            }
            // An exponent only if digits follow: `2e3` is a number, `2e` is `2` then `e`.
            if matches!(at(i), Some('e' | 'E')) {
                let mut j = i + 1;
                if matches!(at(j), Some('+' | '-')) {
                    j += 1;
                }
                if at(j).is_some_and(|c| c.is_ascii_digit()) {
                    while at(j).is_some_and(|c| c.is_ascii_digit()) {
                        j += 1;
                    }
                    i = j;
                }
            }
            let text: String = chars.get(start..i).unwrap_or_default().iter().collect();
            if !text.bytes().any(|b| b.is_ascii_digit()) {
                return Err(CalcError::UnexpectedChar { ch: c, pos: start });
            }
            let value: f64 = text.parse().map_err(|_| CalcError::BadNumber {
                text: text.clone(),
                pos: start,
            })?;
            if !value.is_finite() {
                return Err(CalcError::NotFinite {
                    what: format!("the number '{text}' at position {start}"),
                });
            }
            Tok::Num(value)
        } else if c.is_ascii_alphabetic() || c == '_' {
            while at(i).is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                i += 1;
            }
            Tok::Ident(chars.get(start..i).unwrap_or_default().iter().collect())
        } else {
            i += 1;
            match c {
                '+' | '-' | '*' | '/' | '%' | '^' => Tok::Op(c),
                '(' => Tok::LParen,
                ')' => Tok::RParen,
                ',' => Tok::Comma,
                _ => return Err(CalcError::UnexpectedChar { ch: c, pos: start }),
            }
        };
        tokens.push((tok, start));
    }
    Ok(tokens)
}

struct Parser {
    tokens: Vec<(Tok, usize)>,
    at: usize,
    depth: usize,
}

fn finite(value: f64, what: &str) -> Result<f64, CalcError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(CalcError::NotFinite {
            what: what.to_owned(),
        })
    }
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.at).map(|(t, _)| t)
    }

    fn next(&mut self) -> Option<(Tok, usize)> {
        let tok = self.tokens.get(self.at).cloned();
        if tok.is_some() {
            self.at += 1;
        }
        tok
    }

    /// One level deeper; refuses before the recursion happens.
    fn descend(&mut self) -> Result<(), CalcError> {
        if self.depth >= MAX_DEPTH {
            return Err(CalcError::TooDeep);
        }
        self.depth += 1;
        Ok(())
    }

    fn ascend(&mut self) {
        self.depth -= 1;
    }

    fn expr(&mut self) -> Result<f64, CalcError> {
        let mut value = self.term()?;
        while let Some(Tok::Op(op @ ('+' | '-'))) = self.peek() {
            let op = *op;
            self.at += 1;
            let rhs = self.term()?;
            value = if op == '+' { value + rhs } else { value - rhs };
            value = finite(value, "an intermediate result")?;
        }
        Ok(value)
    }

    fn term(&mut self) -> Result<f64, CalcError> {
        let mut value = self.unary()?;
        while let Some(Tok::Op(op @ ('*' | '/' | '%'))) = self.peek() {
            let op = *op;
            self.at += 1;
            // `15% of 250`: a percentage of what follows; any other `%` is the remainder.
            let percent_of = op == '%'
                && matches!(self.peek(), Some(Tok::Ident(w)) if w.eq_ignore_ascii_case("of"));
            if percent_of {
                self.at += 1;
                let rhs = self.unary()?;
                value = finite(value / 100.0 * rhs, "an intermediate result")?;
                continue;
            }
            let rhs = self.unary()?;
            value = match op {
                '*' => value * rhs,
                _ if rhs == 0.0 => return Err(CalcError::DivisionByZero),
                '/' => value / rhs,
                _ => value % rhs,
            };
            value = finite(value, "an intermediate result")?;
        }
        Ok(value)
    }

    fn unary(&mut self) -> Result<f64, CalcError> {
        if let Some(Tok::Op(op @ ('+' | '-'))) = self.peek() {
            let negate = *op == '-';
            self.at += 1;
            self.descend()?;
            let value = self.unary();
            self.ascend();
            let value = value?;
            return Ok(if negate { -value } else { value });
        }
        self.power()
    }

    fn power(&mut self) -> Result<f64, CalcError> {
        let base = self.primary()?;
        if let Some(Tok::Op('^')) = self.peek() {
            self.at += 1;
            self.descend()?;
            let exponent = self.unary();
            self.ascend();
            return finite(base.powf(exponent?), "a power");
        }
        Ok(base)
    }

    fn primary(&mut self) -> Result<f64, CalcError> {
        let Some((tok, pos)) = self.next() else {
            return Err(CalcError::UnexpectedEnd);
        };
        match tok {
            Tok::Num(n) => Ok(n),
            Tok::LParen => {
                let value = self.nested()?;
                self.close(pos)?;
                Ok(value)
            }
            Tok::Ident(name) => self.identifier(name, pos),
            Tok::RParen => Err(CalcError::UnmatchedClose { pos }),
            other => Err(CalcError::UnexpectedToken {
                found: other.to_string(),
                pos,
            }),
        }
    }

    /// A parenthesised expression or function argument: one level deeper.
    fn nested(&mut self) -> Result<f64, CalcError> {
        self.descend()?;
        let value = self.expr();
        self.ascend();
        value
    }

    fn close(&mut self, open: usize) -> Result<(), CalcError> {
        match self.next() {
            Some((Tok::RParen, _)) => Ok(()),
            None => Err(CalcError::UnclosedParen { pos: open }),
            Some((tok, pos)) => Err(CalcError::UnexpectedToken {
                found: tok.to_string(),
                pos,
            }),
        }
    }

    fn identifier(&mut self, name: String, pos: usize) -> Result<f64, CalcError> {
        let lower = name.to_ascii_lowercase();
        match lower.as_str() {
            "pi" => return Ok(std::f64::consts::PI),
            "e" => return Ok(std::f64::consts::E),
            _ => {}
        }
        if !FUNCTIONS.contains(&lower.as_str()) {
            return Err(CalcError::UnknownIdentifier { name, pos });
        }
        let open = match self.next() {
            Some((Tok::LParen, open)) => open,
            Some((_, at)) => {
                return Err(CalcError::ExpectedParen {
                    name: lower,
                    pos: at,
                });
            }
            None => return Err(CalcError::UnexpectedEnd),
        };
        let mut args = vec![self.nested()?];
        while let Some(Tok::Comma) = self.peek() {
            self.at += 1;
            args.push(self.nested()?);
        }
        self.close(open)?;
        apply(&lower, &args)
    }
}

fn apply(name: &str, args: &[f64]) -> Result<f64, CalcError> {
    let value = if matches!(name, "min" | "max") {
        let fold = if name == "min" { f64::min } else { f64::max };
        let Some((&first, rest)) = args.split_first() else {
            return Err(CalcError::Arity {
                name: name.to_owned(),
                expected: "at least 1 argument",
                found: 0,
            });
        };
        rest.iter().copied().fold(first, fold)
    } else {
        let [x] = args else {
            return Err(CalcError::Arity {
                name: name.to_owned(),
                expected: "exactly 1 argument",
                found: args.len(),
            });
        };
        let x = *x;
        match name {
            "sqrt" => x.sqrt(),
            "abs" => x.abs(),
            "sin" => x.sin(),
            "cos" => x.cos(),
            "tan" => x.tan(),
            "asin" => x.asin(),
            "acos" => x.acos(),
            "atan" => x.atan(),
            "ln" => x.ln(),
            "log" => x.log10(),
            "log2" => x.log2(),
            "exp" => x.exp(),
            "floor" => x.floor(),
            "ceil" => x.ceil(),
            _ => x.round(),
        }
    };
    finite(value, &format!("the result of {name}()"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(input: &str) -> f64 {
        evaluate(input).unwrap_or_else(|e| panic!("{input}: {e}"))
    }

    fn close(input: &str, expected: f64) {
        let got = ok(input);
        assert!(
            (got - expected).abs() < 1e-12,
            "{input}: {got} != {expected}"
        );
    }

    #[test]
    fn arithmetic_and_precedence() {
        assert_eq!(ok("2+3"), 5.0);
        assert_eq!(ok("2 + 3 * 4"), 14.0);
        assert_eq!(ok("(2 + 3) * 4"), 20.0);
        assert_eq!(ok("10 - 4 - 3"), 3.0);
        assert_eq!(ok("100 / 10 / 5"), 2.0);
        assert_eq!(ok("7 % 3"), 1.0);
        assert_eq!(ok("-7 % 3"), -1.0);
        assert_eq!(ok("15% of 250"), 37.5);
        assert_eq!(ok("10 + 20 % OF 50 * 2"), 30.0);
        assert_eq!(ok("(1 + 1)% of (2 * 50)"), 2.0);
        assert_eq!(ok("50% of 50% of 80"), 20.0);
        assert_eq!(ok("2^3^2"), 512.0);
        assert_eq!(ok("(2^3)^2"), 64.0);
        assert_eq!(ok("-2^2"), -4.0);
        assert_eq!(ok("2^-1"), 0.5);
        assert_eq!(ok("--3"), 3.0);
        assert_eq!(ok("+-+3"), -3.0);
        assert_eq!(ok("2*-3"), -6.0);
        assert_eq!(ok("1.5e3 + .5 + 2."), 1502.5);
        assert_eq!(ok("2E-2"), 0.02);
        assert_eq!(ok("0 * -1"), 0.0);
        assert!(ok("0 * -1").is_sign_positive());
    }

    #[test]
    fn constants_and_functions() {
        close("pi", std::f64::consts::PI);
        close("e", std::f64::consts::E);
        close("2*PI", 2.0 * std::f64::consts::PI);
        assert_eq!(ok("sqrt(16)"), 4.0);
        assert_eq!(ok("abs(-3.5)"), 3.5);
        close("sin(pi/2)", 1.0);
        close("cos(0)", 1.0);
        close("tan(0)", 0.0);
        close("asin(1)", std::f64::consts::FRAC_PI_2);
        close("acos(1)", 0.0);
        close("atan(1)", std::f64::consts::FRAC_PI_4);
        close("ln(e)", 1.0);
        assert_eq!(ok("log(1000)"), 3.0);
        assert_eq!(ok("log2(8)"), 3.0);
        assert_eq!(ok("exp(0)"), 1.0);
        assert_eq!(ok("floor(-2.5)"), -3.0);
        assert_eq!(ok("ceil(2.1)"), 3.0);
        assert_eq!(ok("round(2.5)"), 3.0);
        assert_eq!(ok("min(3, 1, 2)"), 1.0);
        assert_eq!(ok("max(3, 1, 2)"), 3.0);
        assert_eq!(ok("max(4)"), 4.0);
        assert_eq!(ok("sqrt(max(9, 16)) + min(1, -1)"), 3.0);
    }

    #[test]
    fn errors() {
        let cases: &[(&str, CalcError)] = &[
            ("", CalcError::Empty),
            ("   ", CalcError::Empty),
            ("1/0", CalcError::DivisionByZero),
            ("1 % 0", CalcError::DivisionByZero),
            ("5 / (2 - 2)", CalcError::DivisionByZero),
            (
                "constructor",
                CalcError::UnknownIdentifier {
                    name: "constructor".into(),
                    pos: 0,
                },
            ),
            (
                "1 + x",
                CalcError::UnknownIdentifier {
                    name: "x".into(),
                    pos: 4,
                },
            ),
            ("(1 + 2", CalcError::UnclosedParen { pos: 0 }),
            ("1 + 2)", CalcError::UnmatchedClose { pos: 5 }),
            (")", CalcError::UnmatchedClose { pos: 0 }),
            (
                "1 2",
                CalcError::UnexpectedToken {
                    found: "2".into(),
                    pos: 2,
                },
            ),
            (
                "2^^3",
                CalcError::UnexpectedToken {
                    found: "^".into(),
                    pos: 2,
                },
            ),
            ("2 +", CalcError::UnexpectedEnd),
            ("sqrt", CalcError::UnexpectedEnd),
            (
                "sqrt 4",
                CalcError::ExpectedParen {
                    name: "sqrt".into(),
                    pos: 5,
                },
            ),
            ("٣+1", CalcError::UnexpectedChar { ch: '٣', pos: 0 }),
            ("1;2", CalcError::UnexpectedChar { ch: ';', pos: 1 }),
            ("1 + .", CalcError::UnexpectedChar { ch: '.', pos: 4 }),
            ("a.b", CalcError::UnexpectedChar { ch: '.', pos: 1 }),
            (
                "1.2.3",
                CalcError::BadNumber {
                    text: "1.2.3".into(),
                    pos: 0,
                },
            ),
            (
                "sqrt(1, 2)",
                CalcError::Arity {
                    name: "sqrt".into(),
                    expected: "exactly 1 argument",
                    found: 2,
                },
            ),
            (
                "1e309",
                CalcError::NotFinite {
                    what: "the number '1e309' at position 0".into(),
                },
            ),
            (
                "sqrt(-1)",
                CalcError::NotFinite {
                    what: "the result of sqrt()".into(),
                },
            ),
            (
                "ln(0)",
                CalcError::NotFinite {
                    what: "the result of ln()".into(),
                },
            ),
            (
                "10^400",
                CalcError::NotFinite {
                    what: "a power".into(),
                },
            ),
            (
                "1e308 * 10",
                CalcError::NotFinite {
                    what: "an intermediate result".into(),
                },
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(evaluate(input).as_ref(), Err(expected), "{input}");
        }
    }

    #[test]
    fn hostile_inputs_are_refused_without_overflow() {
        let long = "1+".repeat(500) + "1";
        assert_eq!(evaluate(&long), Err(CalcError::TooLong { len: long.len() }));
        assert!(matches!(
            evaluate(&"(".repeat(100_000)),
            Err(CalcError::TooLong { .. })
        ));
        let deep = "(".repeat(65) + "1" + &")".repeat(65);
        assert_eq!(evaluate(&deep), Err(CalcError::TooDeep));
        let just_ok = "(".repeat(64) + "1" + &")".repeat(64);
        assert_eq!(ok(&just_ok), 1.0);
        assert_eq!(evaluate(&"-".repeat(999)), Err(CalcError::TooDeep));
        assert_eq!(evaluate(&"2^".repeat(400)), Err(CalcError::TooDeep));
        assert_eq!(evaluate(&"sqrt(".repeat(100)), Err(CalcError::TooDeep));
        assert_eq!(evaluate(&"(".repeat(1000)), Err(CalcError::TooDeep));
        // Even the deepest legal nesting fits in a quarter of a tokio worker's 2 MiB stack.
        let deepest = "-(".repeat(32) + "1" + &")".repeat(32);
        let got = std::thread::Builder::new()
            .stack_size(512 * 1024)
            .spawn(move || (evaluate(&just_ok), evaluate(&deep), evaluate(&deepest)))
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(got, (Ok(1.0), Err(CalcError::TooDeep), Ok(1.0)));
    }

    #[test]
    fn error_messages_are_readable() {
        assert_eq!(evaluate("1/0").unwrap_err().to_string(), "division by zero");
        let unknown = evaluate("foo(1)").unwrap_err().to_string();
        assert!(
            unknown.starts_with("unknown identifier 'foo' at position 0"),
            "{unknown}"
        );
        assert!(unknown.contains("sqrt"), "{unknown}");
    }
}
