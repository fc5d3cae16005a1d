//! Reading a response body within a limit (Note \[Outbound policy\]):
//! chunk by chunk, never past the caller's cap.

use bytes::Bytes;

use crate::error::{BodyError, describe};

/// A response whose body is read chunk by chunk, at most `limit` bytes in
/// all; the caller decides what to do with each chunk (keep it, write it to
/// a file), so a download need not be held in memory.
#[derive(Debug)]
pub struct Bounded {
    response: reqwest::Response,
    limit: u64,
    read: u64,
    declared: Option<u64>,
}

impl Bounded {
    /// Start reading `response`, refusing at once a `Content-Length` over
    /// `limit`.
    ///
    /// # Errors
    /// [`BodyError::Declared`]: the response is dropped unread.
    pub fn new(response: reqwest::Response, limit: u64) -> Result<Bounded, BodyError> {
        let declared = response.content_length();
        if let Some(n) = declared.filter(|&n| n > limit) {
            return Err(BodyError::Declared { declared: n, limit });
        }
        Ok(Bounded {
            response,
            limit,
            read: 0,
            declared,
        })
    }

    /// The body's declared length, when the server gave one.
    pub fn declared(&self) -> Option<u64> {
        self.declared
    }

    /// Bytes read so far.
    pub fn read(&self) -> u64 {
        self.read
    }

    /// The next chunk, `None` at the end.
    ///
    /// # Errors
    /// [`BodyError::TooLarge`] at the first chunk that goes over the limit
    /// (the caller drops `self`, which closes the connection);
    /// [`BodyError::Cut`] when the connection fails or times out.
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, BodyError> {
        match self.response.chunk().await {
            Ok(Some(chunk)) => {
                let read = self.read.saturating_add(chunk.len() as u64);
                if read > self.limit {
                    return Err(BodyError::TooLarge {
                        limit: self.limit,
                        read,
                    });
                }
                self.read = read;
                Ok(Some(chunk))
            }
            Ok(None) => Ok(None),
            Err(e) => Err(BodyError::Cut {
                read: self.read,
                declared: self.declared,
                timeout: e.is_timeout(),
                message: describe(e),
            }),
        }
    }
}

/// The whole body of `response`, at most `limit` bytes.
///
/// # Errors
/// As [`Bounded::new`] and [`Bounded::chunk`].
pub async fn read_capped(response: reqwest::Response, limit: u64) -> Result<Vec<u8>, BodyError> {
    let mut body = Bounded::new(response, limit)?;
    let cap = usize::try_from(limit).unwrap_or(usize::MAX);
    let mut out = Vec::with_capacity(
        body.declared()
            .map_or(0, |n| usize::try_from(n).unwrap_or(0))
            .min(cap),
    );
    while let Some(chunk) = body.chunk().await? {
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}
