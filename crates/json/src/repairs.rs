//! The list of what the tolerant parser fixed: [`Repair`], reported with
//! every extraction (agentshape-core re-exports it from `outcome`, beside
//! the other result types, Note \[Result types\] there).

use serde::{Deserialize, Serialize};

/// One repair applied by the tolerant parser; listed, never hidden.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Repair {
    /// `,}` or `,]`, or a doubled or leading comma.
    TrailingComma,
    /// `'…'` strings or keys.
    SingleQuotes,
    /// `{summary: …}`.
    UnquotedKey,
    /// An unquoted word in value position, read as a string.
    UnquotedString,
    /// `True`, `False`, `None` (and other-case spellings such as `TRUE`, `Null`).
    PythonLiteral,
    /// `undefined`, `NaN`, `Infinity` (all become `null`; JSON has no NaN).
    JsLiteral,
    /// `//`, `/* */` or `#` comments.
    Comment,
    /// A raw newline, tab or other control character inside a string.
    RawControlCharInString,
    /// A `"` inside a string that cannot be its end, kept as a character.
    UnescapedQuote,
    /// An unknown escape such as `\x` or a bad `\u`, kept literally.
    InvalidEscape,
    /// Two members or elements with no comma between them.
    MissingComma,
    /// A key followed directly by its value.
    MissingColon,
    /// A `]` closing an object or a `}` closing an array.
    MismatchedBracket,
    /// The text ended inside the value: strings and containers were closed.
    Truncated,
    /// A key with no value (cut, `{"a":}` or `{key}`) was dropped.
    DanglingKeyDropped,
    /// A character that cannot continue the value ended it there.
    UnexpectedChar,
    /// An `...` elision inside an array was dropped.
    EllipsisDropped,
    /// Nesting deeper than the repair parser's `MAX_DEPTH` was cut off.
    DepthLimit,
    /// A string lost a quote: its closing quote was placed before the `,`
    /// or the closers that follow it, or a stray `"` after a value was dropped.
    MissingQuote,
    /// `“…”` or `‘…’` typographic quotes used as string delimiters.
    SmartQuotes,
    /// A no-break, zero-width or other Unicode space between tokens.
    UnicodeWhitespace,
    /// A Python tuple `(1, 2)`, read as an array.
    PythonTuple,
    /// A number cut mid-way (`2e`, `-`, `1.`) before a delimiter, kept as what parses.
    IncompleteNumber,
    /// The whole value was itself JSON-escaped (`{\"a\": 1}`) and was unescaped once.
    EscapedJson,
    /// A Python set `{'a', 'b'}` (quoted items, no values), read as an array.
    PythonSet,
    /// `1_234.5_6`: underscores between digits (Python, Rust, JS) dropped.
    DigitSeparator,
    /// `ObjectId("x")`, `new Date("x")`: a constructor call around one
    /// literal (the Mongo shell, JS), read as that literal.
    WrapperCall,
    /// A bare word before a quoted key (`COMMENT "k": 1`) was dropped.
    StrayWord,
    /// `` `…` `` (or `` `…´ ``) backtick-quoted strings or keys.
    BacktickQuotes,
    /// An array continued after its `]` (`"k": [1], [2]`) was merged back.
    ArrayContinued,
    /// An extra `}` closing the outermost object before more members
    /// (`{"a": 1}, "b": 2}`) was dropped.
    ExtraCloser,
    /// `"a" + "b"`: a string written in pieces joined by `+` (JS), joined.
    StringConcatenation,
    /// `{{"a": 1}}`: an object doubled around its content, read once.
    DoubledBrace,
    /// A reply (or one fenced block) of several top-level values
    /// (`{"a":1}\n{"a":2}`, `1, 2`), collected into one array because the
    /// schema's root is an array; a value that is itself an array is one
    /// item (Note \[Several values\] in core's `extract::several`).
    CollectedValues,
    /// A number no JSON number type here holds exactly (a 23-digit integer,
    /// `1e400`) became its nearest `f64` or `null`; each one is also an error
    /// of kind `number`, so the value is not valid (Note [Big numbers] in
    /// `exact`).
    InexactNumber,
    /// A `\u` escape of a lone surrogate (`"\udc00"`), or bytes of the input
    /// that are not UTF-8, became U+FFFD; each string holding one is also an
    /// error of kind `text`, so the value is not valid (Note [Replaced text]
    /// in core's `extract::replaced`).
    ReplacedInvalidText,
    /// A string that is itself a JSON object or array (encoded twice,
    /// escaped, or fenced inside the string) was decoded into that document:
    /// where the schema asks for an object or array there, or, without a
    /// schema, when the whole value is such a string (Note [Embedded JSON]
    /// in core's `extract::embedded`).
    DecodedEmbeddedJson,
}
