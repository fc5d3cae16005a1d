//! JSON text: the readers and writers of agentshape-json (Note \[One JSON
//! family\] and Note \[A crate for the JSON layer\] there), as core and its
//! users name them.

pub use agentshape_json::{
    InexactNumber, LITERAL_SHOWN, Parsed, escape_beyond_latin1, escape_non_ascii, is_exact, parse,
    parse_if_json, reply_line, reply_of_line, reply_of_line_into, utf8_of_utf16le, utf16le_of,
    write_compact, write_str,
};

pub(crate) use agentshape_json::{tape, unescape_lossy};
